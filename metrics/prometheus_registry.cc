#include "metrics/prometheus_registry.h"

#include <memory>
#include <mutex>
#include <utility>

#include "prometheus/client_metric.h"
#include "prometheus/counter.h"
#include "prometheus/family.h"
#include "prometheus/gauge.h"
#include "prometheus/histogram.h"
#include "prometheus/metric_family.h"
#include "prometheus/registry.h"
#include "prometheus/text_serializer.h"

namespace speakermem::metrics {
namespace {

class CounterImpl final : public Counter {
 public:
  explicit CounterImpl(prometheus::Counter* c) : c_(c) {}
  void Increment(double by) override { c_->Increment(by); }

 private:
  prometheus::Counter* const c_;
};

class GaugeImpl final : public Gauge {
 public:
  explicit GaugeImpl(prometheus::Gauge* g) : g_(g) {}
  void Set(double value) override { g_->Set(value); }
  void Increment(double by) override { g_->Increment(by); }

 private:
  prometheus::Gauge* const g_;
};

class HistogramImpl final : public Histogram {
 public:
  explicit HistogramImpl(prometheus::Histogram* h) : h_(h) {}
  void Observe(double value) override { h_->Observe(value); }

 private:
  prometheus::Histogram* const h_;
};

// One family: the prometheus-cpp family and our wrapper of each of its
// metrics, by label values.
template <typename Metric, typename Impl, typename Prom>
class FamilyImpl final : public Family<Metric> {
 public:
  using Make = std::function<Prom&(prometheus::Family<Prom>&, const Labels&)>;
  FamilyImpl(prometheus::Family<Prom>* family, Make make)
      : family_(family), make_(std::move(make)) {}

  Metric& With(const Labels& labels) override {
    std::lock_guard<std::mutex> lock(mu_);
    std::unique_ptr<Impl>& m = metrics_[labels];
    if (m == nullptr) m = std::make_unique<Impl>(&make_(*family_, labels));
    return *m;
  }

 private:
  prometheus::Family<Prom>* const family_;
  const Make make_;
  std::mutex mu_;
  std::map<Labels, std::unique_ptr<Impl>> metrics_;  // guarded by mu_
};

class PrometheusRegistry final : public Registry {
 public:
  Family<Counter>& Counters(const std::string& name, const std::string& help) override {
    auto* f = &prometheus::BuildCounter().Name(name).Help(help).Register(registry_);
    return Keep(std::make_unique<FamilyImpl<Counter, CounterImpl, prometheus::Counter>>(
        f,
        [](prometheus::Family<prometheus::Counter>& fam, const Labels& l) -> prometheus::Counter& {
          return fam.Add(l);
        }));
  }

  Family<Gauge>& Gauges(const std::string& name, const std::string& help) override {
    auto* f = &prometheus::BuildGauge().Name(name).Help(help).Register(registry_);
    return Keep(std::make_unique<FamilyImpl<Gauge, GaugeImpl, prometheus::Gauge>>(
        f, [](prometheus::Family<prometheus::Gauge>& fam, const Labels& l) -> prometheus::Gauge& {
          return fam.Add(l);
        }));
  }

  Family<Histogram>& Histograms(const std::string& name, const std::string& help,
                                const std::vector<double>& buckets) override {
    auto* f = &prometheus::BuildHistogram().Name(name).Help(help).Register(registry_);
    return Keep(std::make_unique<FamilyImpl<Histogram, HistogramImpl, prometheus::Histogram>>(
        f,
        [buckets](prometheus::Family<prometheus::Histogram>& fam,
                  const Labels& l) -> prometheus::Histogram& { return fam.Add(l, buckets); }));
  }

  void GaugeAtScrape(const std::string& name, const std::string& help,
                     std::function<double()> read) override {
    std::lock_guard<std::mutex> lock(mu_);
    at_scrape_.push_back({name, help, std::move(read)});
  }

  std::string Exposition() const override {
    std::vector<prometheus::MetricFamily> families = registry_.Collect();
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& g : at_scrape_) {
      prometheus::MetricFamily f;
      f.name = g.name;
      f.help = g.help;
      f.type = prometheus::MetricType::Gauge;
      prometheus::ClientMetric m;
      m.gauge.value = g.read();
      f.metric.push_back(std::move(m));
      families.push_back(std::move(f));
    }
    return prometheus::TextSerializer().Serialize(families);
  }

 private:
  template <typename F>
  F& Keep(std::unique_ptr<F> family) {
    std::lock_guard<std::mutex> lock(mu_);
    F& out = *family;
    families_.push_back(std::move(family));
    return out;
  }

  struct AtScrape {
    std::string name, help;
    std::function<double()> read;
  };
  prometheus::Registry registry_;
  mutable std::mutex mu_;
  std::vector<std::shared_ptr<void>> families_;  // guarded by mu_
  std::vector<AtScrape> at_scrape_;              // guarded by mu_
};

}  // namespace

std::unique_ptr<Registry> NewPrometheusRegistry() { return std::make_unique<PrometheusRegistry>(); }

}  // namespace speakermem::metrics
