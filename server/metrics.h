// The server's metrics. Names are prefixed speakermem_ and never
// carry tenant or channel labels (cardinality).
#ifndef SPEAKERMEM_SERVER_METRICS_H_
#define SPEAKERMEM_SERVER_METRICS_H_

#include <string>

#include "metrics/metrics.h"

namespace speakermem::server {

// Safe for concurrent use.
class ServerMetrics {
 public:
  explicit ServerMetrics(metrics::Registry* registry);

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
  metrics::Family<metrics::Histogram>& rpc_latency_;
  metrics::Family<metrics::Histogram>& stage_latency_;
  metrics::Histogram& lag_messages_;
  metrics::Histogram& lag_seconds_;
  metrics::Counter& ingested_;
  metrics::Counter& duplicates_;
  metrics::Counter& rejected_batches_;
  metrics::Gauge& ready_;
  metrics::Gauge& rebuild_seconds_;
  metrics::Gauge& rebuild_messages_;
};

}  // namespace speakermem::server

#endif  // SPEAKERMEM_SERVER_METRICS_H_
