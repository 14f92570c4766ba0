#include "writer/writer_metrics.h"

#include "prometheus/registry.h"

namespace speakermem::writer {

WriterMetrics::WriterMetrics(prometheus::Registry* r) {
  if (r == nullptr) return;
  backlog_ = &prometheus::BuildGauge()
                  .Name("speakermem_writer_backlog_messages")
                  .Help("Messages stored but not yet derived by the Writer.")
                  .Register(*r)
                  .Add({});
  queue_ = &prometheus::BuildGauge()
                .Name("speakermem_writer_queue_depth")
                .Help("Channels waiting for a Writer worker.")
                .Register(*r)
                .Add({});
  latency_ = &prometheus::BuildHistogram()
                  .Name("speakermem_writer_segment_seconds")
                  .Help("Time to derive and apply one segment, model calls included.")
                  .Register(*r)
                  .Add({}, prometheus::Histogram::BucketBoundaries{
                               0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120});
  segments_ = &prometheus::BuildCounter()
                   .Name("speakermem_writer_segments_total")
                   .Help(
                       "Segments by outcome: applied, all_rejected (applied, but every "
                       "action was refused), parked, recovered (a parked one applied later).")
                   .Register(*r);
  actions_ = &prometheus::BuildCounter()
                  .Name("speakermem_writer_actions_total")
                  .Help("Writer actions applied, by type (add, update, noop).")
                  .Register(*r);
  rejected_ = &prometheus::BuildCounter()
                   .Name("speakermem_writer_rejected_actions_total")
                   .Help("Writer actions dropped by validation, by reason.")
                   .Register(*r);
  parked_ = &prometheus::BuildGauge()
                 .Name("speakermem_writer_parked_segments")
                 .Help("Segments set aside after repeated failures, awaiting retry.")
                 .Register(*r)
                 .Add({});
}

}  // namespace speakermem::writer
