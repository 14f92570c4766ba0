// The metrics interface the service's parts record into: counters, gauges
// and histograms in families by label values. Cheap to include: no
// Prometheus header behind it. The one implementation,
// metrics/prometheus_registry.h, is the only code that includes
// prometheus-cpp; the server owns it and serves its exposition.
//
// Names are prefixed speakermem_ and never carry tenant or channel labels
// (cardinality). Everything here is safe for concurrent use.
#ifndef SPEAKERMEM_METRICS_METRICS_H_
#define SPEAKERMEM_METRICS_METRICS_H_

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace speakermem::metrics {

using Labels = std::map<std::string, std::string>;

class Counter {
 public:
  virtual ~Counter() = default;
  virtual void Increment(double by = 1) = 0;
};

class Gauge {
 public:
  virtual ~Gauge() = default;
  virtual void Set(double value) = 0;
  virtual void Increment(double by = 1) = 0;
};

class Histogram {
 public:
  virtual ~Histogram() = default;
  virtual void Observe(double value) = 0;
};

// The metrics of one name, one per set of label values.
template <typename Metric>
class Family {
 public:
  virtual ~Family() = default;
  // The metric with these label values, made on first use. The reference
  // stays valid as long as the registry: callers may keep it.
  virtual Metric& With(const Labels& labels) = 0;
};

class Registry {
 public:
  virtual ~Registry() = default;
  // Families live as long as the registry. A name is registered once.
  virtual Family<Counter>& Counters(const std::string& name, const std::string& help) = 0;
  virtual Family<Gauge>& Gauges(const std::string& name, const std::string& help) = 0;
  // `buckets`: the histograms' upper bounds, ascending.
  virtual Family<Histogram>& Histograms(const std::string& name, const std::string& help,
                                        const std::vector<double>& buckets) = 0;
  // A gauge without labels whose value `read` gives at each scrape.
  virtual void GaugeAtScrape(const std::string& name, const std::string& help,
                             std::function<double()> read) = 0;
  // Every metric in the Prometheus text exposition format.
  virtual std::string Exposition() const = 0;
};

}  // namespace speakermem::metrics

#endif  // SPEAKERMEM_METRICS_METRICS_H_
