// The server's Prometheus metrics. Names are prefixed speakermem_ and never
// carry tenant or channel labels (cardinality).
#ifndef SPEAKERMEM_SERVER_METRICS_H_
#define SPEAKERMEM_SERVER_METRICS_H_

#include <functional>
#include <memory>
#include <string>

#include "prometheus/counter.h"
#include "prometheus/family.h"
#include "prometheus/gauge.h"
#include "prometheus/histogram.h"
#include "prometheus/registry.h"

namespace speakermem::storage {
class Store;
}

namespace speakermem::server {

// Safe for concurrent use (prometheus-cpp metrics are atomic).
class ServerMetrics {
 public:
  explicit ServerMetrics(prometheus::Registry* registry);

  // One finished RPC: method name ("Ingest"), canonical code name ("OK").
  void ObserveRpc(const std::string& method, const std::string& code, double seconds);
  // One query pipeline stage's latency (Query and Retrieve traces).
  void ObserveQueryStage(const std::string& stage, double seconds);
  // The queried channel's derivation lag (Query and Retrieve).
  void ObserveDerivationLag(uint64_t messages, double seconds);
  void CountIngest(uint64_t stored, uint64_t duplicates);
  void CountIngestRejected(uint64_t batches);
  void SetReady(bool ready);
  void SetIndexRebuild(double seconds, uint64_t messages);

 private:
  prometheus::Family<prometheus::Histogram>& rpc_latency_;
  prometheus::Family<prometheus::Histogram>* stage_latency_ = nullptr;
  prometheus::Histogram* lag_messages_ = nullptr;
  prometheus::Histogram* lag_seconds_ = nullptr;
  prometheus::Counter& ingested_;
  prometheus::Counter& duplicates_;
  prometheus::Counter& rejected_batches_;
  prometheus::Gauge& ready_;
  prometheus::Gauge& rebuild_seconds_;
  prometheus::Gauge& rebuild_messages_;
};

// A collectable reporting speakermem_store_size_bytes (what `size` returns)
// at scrape time.
std::shared_ptr<prometheus::Collectable> NewStoreSizeCollector(std::function<uint64_t()> size);

}  // namespace speakermem::server

#endif  // SPEAKERMEM_SERVER_METRICS_H_
