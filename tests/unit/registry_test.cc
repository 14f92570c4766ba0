// metrics::Registry on prometheus-cpp: what the parts record comes out in the
// text exposition, labelled metrics are made once, scrape-time gauges read
// at each scrape.
#include <catch2/catch.hpp>

#include "metrics/prometheus_registry.h"

namespace speakermem::metrics {
namespace {

bool Has(const std::string& exposition, const std::string& line) {
  return exposition.find(line + "\n") != std::string::npos;
}

TEST_CASE("the Prometheus registry exposes counters, gauges and histograms by label", "[metrics]") {
  std::unique_ptr<Registry> r = NewPrometheusRegistry();
  Family<Counter>& calls = r->Counters("speakermem_test_calls_total", "Calls by stage.");
  calls.With({{"stage", "answer"}}).Increment();
  calls.With({{"stage", "answer"}}).Increment(2);
  calls.With({{"stage", "project"}}).Increment();
  CHECK(&calls.With({{"stage", "answer"}}) == &calls.With({{"stage", "answer"}}));
  Gauge& depth = r->Gauges("speakermem_test_depth", "Depth.").With({});
  depth.Set(5);
  depth.Increment(-2);
  Histogram& h = r->Histograms("speakermem_test_seconds", "Seconds.", {0.1, 1}).With({});
  h.Observe(0.05);
  h.Observe(0.5);
  double size = 10;
  r->GaugeAtScrape("speakermem_test_size_bytes", "Size.", [&size] { return size; });

  std::string text = r->Exposition();
  INFO(text);
  CHECK(Has(text, "# HELP speakermem_test_calls_total Calls by stage."));
  CHECK(Has(text, "speakermem_test_calls_total{stage=\"answer\"} 3"));
  CHECK(Has(text, "speakermem_test_calls_total{stage=\"project\"} 1"));
  CHECK(Has(text, "speakermem_test_depth 3"));
  CHECK(Has(text, "speakermem_test_seconds_bucket{le=\"0.1\"} 1"));
  CHECK(Has(text, "speakermem_test_seconds_bucket{le=\"1\"} 2"));
  CHECK(Has(text, "speakermem_test_seconds_count 2"));
  CHECK(Has(text, "# TYPE speakermem_test_size_bytes gauge"));
  CHECK(Has(text, "speakermem_test_size_bytes 10"));
  size = 42;
  CHECK(Has(r->Exposition(), "speakermem_test_size_bytes 42"));
}

}  // namespace
}  // namespace speakermem::metrics
