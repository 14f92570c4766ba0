#include "server/metrics.h"

#include "prometheus/client_metric.h"
#include "prometheus/metric_family.h"
#include "storage/store.h"

namespace speakermem::server {
namespace {

const prometheus::Histogram::BucketBoundaries& LatencyBuckets() {
  static const auto* b = new prometheus::Histogram::BucketBoundaries{
      0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
      0.05,   0.1,     0.25,   0.5,   1,      2.5,   5,    10};
  return *b;
}

class StoreSizeCollector : public prometheus::Collectable {
 public:
  explicit StoreSizeCollector(std::function<uint64_t()> size) : size_(std::move(size)) {}
  std::vector<prometheus::MetricFamily> Collect() const override {
    prometheus::MetricFamily f;
    f.name = "speakermem_store_size_bytes";
    f.help = "Approximate bytes of the store: SST files, memtables and WAL.";
    f.type = prometheus::MetricType::Gauge;
    prometheus::ClientMetric m;
    m.gauge.value = static_cast<double>(size_());
    f.metric.push_back(std::move(m));
    return {std::move(f)};
  }

 private:
  const std::function<uint64_t()> size_;
};

}  // namespace

ServerMetrics::ServerMetrics(prometheus::Registry* r)
    : rpc_latency_(prometheus::BuildHistogram()
                       .Name("speakermem_rpc_duration_seconds")
                       .Help("gRPC handling time by method and status code.")
                       .Register(*r)),
      ingested_(prometheus::BuildCounter()
                    .Name("speakermem_ingested_messages_total")
                    .Help("Messages written to System 1.")
                    .Register(*r)
                    .Add({})),
      duplicates_(prometheus::BuildCounter()
                      .Name("speakermem_ingest_duplicates_total")
                      .Help("Re-sent messages (known message_id) not stored again.")
                      .Register(*r)
                      .Add({})),
      rejected_batches_(prometheus::BuildCounter()
                            .Name("speakermem_ingest_rejected_batches_total")
                            .Help("Ingest batches or chunks rejected as a whole: "
                                  "undecodable, over a limit or rate, invalid, or a stream "
                                  "switching channel.")
                            .Register(*r)
                            .Add({})),
      ready_(prometheus::BuildGauge()
                 .Name("speakermem_ready")
                 .Help("1 when indexes are rebuilt and the server is SERVING.")
                 .Register(*r)
                 .Add({})),
      rebuild_seconds_(prometheus::BuildGauge()
                           .Name("speakermem_index_rebuild_seconds")
                           .Help("Duration of the index rebuild at start.")
                           .Register(*r)
                           .Add({})),
      rebuild_messages_(prometheus::BuildGauge()
                            .Name("speakermem_index_rebuild_messages")
                            .Help("Messages loaded by the index rebuild at start.")
                            .Register(*r)
                            .Add({})) {
  stage_latency_ = &prometheus::BuildHistogram()
                        .Name("speakermem_query_stage_duration_seconds")
                        .Help(
                            "Query pipeline time by stage (project, s1_bm25, s1_dense, select, "
                            "expand, s2_rows, answer, ...).")
                        .Register(*r);
  lag_messages_ = &prometheus::BuildHistogram()
                       .Name("speakermem_query_derivation_lag_messages")
                       .Help(
                           "Messages of the queried channel not yet derived by the Writer, "
                           "observed at each Query and Retrieve.")
                       .Register(*r)
                       .Add({}, prometheus::Histogram::BucketBoundaries{0, 1, 5, 10, 25, 50, 100,
                                                                        250, 1000, 10000});
  lag_seconds_ = &prometheus::BuildHistogram()
                      .Name("speakermem_query_derivation_lag_seconds")
                      .Help(
                          "Message time spanned by the queried channel's unwritten tail, "
                          "observed at each Query and Retrieve.")
                      .Register(*r)
                      .Add({}, prometheus::Histogram::BucketBoundaries{0, 1, 5, 10, 30, 60, 120,
                                                                       300, 900, 3600});
}

void ServerMetrics::ObserveDerivationLag(uint64_t messages, double seconds) {
  lag_messages_->Observe(static_cast<double>(messages));
  lag_seconds_->Observe(seconds);
}

void ServerMetrics::ObserveQueryStage(const std::string& stage, double seconds) {
  stage_latency_->Add({{"stage", stage}}, LatencyBuckets()).Observe(seconds);
}

void ServerMetrics::ObserveRpc(const std::string& method, const std::string& code, double seconds) {
  rpc_latency_.Add({{"method", method}, {"code", code}}, LatencyBuckets()).Observe(seconds);
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

std::shared_ptr<prometheus::Collectable> NewStoreSizeCollector(std::function<uint64_t()> size) {
  return std::make_shared<StoreSizeCollector>(std::move(size));
}

}  // namespace speakermem::server
