#include "server/metrics.h"

#include <vector>

namespace speakermem::server {
namespace {

const std::vector<double>& LatencyBuckets() {
  static const auto* b =
      new std::vector<double>{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
                              0.05,   0.1,     0.25,   0.5,   1,      2.5,   5,    10};
  return *b;
}

}  // namespace

ServerMetrics::ServerMetrics(metrics::Registry* r)
    : rpc_latency_(r->Histograms("speakermem_rpc_duration_seconds",
                                 "gRPC handling time by method and status code.",
                                 LatencyBuckets())),
      stage_latency_(r->Histograms("speakermem_query_stage_duration_seconds",
                                   "Query pipeline time by stage (project, s1_bm25, s1_dense, "
                                   "select, expand, s2_rows, answer, ...).",
                                   LatencyBuckets())),
      lag_messages_(r->Histograms("speakermem_query_derivation_lag_messages",
                                  "Messages of the queried channel not yet derived by the "
                                  "Writer, observed at each Query and Retrieve.",
                                  {0, 1, 5, 10, 25, 50, 100, 250, 1000, 10000})
                        .With({})),
      lag_seconds_(r->Histograms("speakermem_query_derivation_lag_seconds",
                                 "Message time spanned by the queried channel's unwritten tail, "
                                 "observed at each Query and Retrieve.",
                                 {0, 1, 5, 10, 30, 60, 120, 300, 900, 3600})
                       .With({})),
      ingested_(r->Counters("speakermem_ingested_messages_total", "Messages written to System 1.")
                    .With({})),
      duplicates_(r->Counters("speakermem_ingest_duplicates_total",
                              "Re-sent messages (known message_id) not stored again.")
                      .With({})),
      rejected_batches_(r->Counters("speakermem_ingest_rejected_batches_total",
                                    "Ingest batches or chunks rejected as a whole: undecodable, "
                                    "over a limit or rate, invalid, or a stream switching "
                                    "channel.")
                            .With({})),
      ready_(r->Gauges("speakermem_ready", "1 when indexes are rebuilt and the server is SERVING.")
                 .With({})),
      rebuild_seconds_(
          r->Gauges("speakermem_index_rebuild_seconds", "Duration of the index rebuild at start.")
              .With({})),
      rebuild_messages_(r->Gauges("speakermem_index_rebuild_messages",
                                  "Messages loaded by the index rebuild at start.")
                            .With({})) {}

void ServerMetrics::ObserveDerivationLag(uint64_t messages, double seconds) {
  lag_messages_.Observe(static_cast<double>(messages));
  lag_seconds_.Observe(seconds);
}

void ServerMetrics::ObserveQueryStage(const std::string& stage, double seconds) {
  stage_latency_.With({{"stage", stage}}).Observe(seconds);
}

void ServerMetrics::ObserveRpc(const std::string& method, const std::string& code, double seconds) {
  rpc_latency_.With({{"method", method}, {"code", code}}).Observe(seconds);
}

void ServerMetrics::CountIngest(uint64_t stored, uint64_t duplicates) {
  ingested_.Increment(static_cast<double>(stored));
  duplicates_.Increment(static_cast<double>(duplicates));
}

void ServerMetrics::CountIngestRejected(uint64_t batches) {
  rejected_batches_.Increment(static_cast<double>(batches));
}

void ServerMetrics::SetReady(bool ready) { ready_.Set(ready ? 1 : 0); }

void ServerMetrics::SetIndexRebuild(double seconds, uint64_t messages) {
  rebuild_seconds_.Set(seconds);
  rebuild_messages_.Set(static_cast<double>(messages));
}

}  // namespace speakermem::server
