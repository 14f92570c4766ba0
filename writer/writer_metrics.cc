#include "writer/writer_metrics.h"

namespace speakermem::writer {

WriterMetrics::WriterMetrics(metrics::Registry* r) {
  if (r == nullptr) return;
  backlog_ = &r->Gauges("speakermem_writer_backlog_messages",
                        "Messages stored but not yet derived by the Writer.")
                  .With({});
  queue_ =
      &r->Gauges("speakermem_writer_queue_depth", "Channels waiting for a Writer worker.").With({});
  latency_ = &r->Histograms("speakermem_writer_segment_seconds",
                            "Time to derive and apply one segment, model calls included.",
                            {0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120})
                  .With({});
  segments_ = &r->Counters("speakermem_writer_segments_total",
                           "Segments by outcome: applied, all_rejected (applied, but every "
                           "action was refused), parked, recovered (a parked one applied later), "
                           "deferred (the tenant's budget is spent), stale (records changed "
                           "while the model worked: the segment is derived again).");
  actions_ = &r->Counters("speakermem_writer_actions_total",
                          "Writer actions applied, by type (add, update, noop).");
  rejected_ = &r->Counters("speakermem_writer_rejected_actions_total",
                           "Writer actions dropped by validation, by reason.");
  parked_ = &r->Gauges("speakermem_writer_parked_segments",
                       "Segments set aside after repeated failures, awaiting retry.")
                 .With({});
}

}  // namespace speakermem::writer
