// The Writer's metrics; every method is a no-op without a
// registry. Internal to writer/.
#ifndef SPEAKERMEM_WRITER_WRITER_METRICS_H_
#define SPEAKERMEM_WRITER_WRITER_METRICS_H_

#include <string>

#include "metrics/metrics.h"

namespace speakermem::writer {

class WriterMetrics {
 public:
  explicit WriterMetrics(metrics::Registry* r);
  void SetBacklog(double v) {
    if (backlog_) backlog_->Set(v);
  }
  void SetQueue(double v) {
    if (queue_) queue_->Set(v);
  }
  void ObserveSegment(double secs) {
    if (latency_) latency_->Observe(secs);
  }
  void Segment(const std::string& outcome) {
    if (segments_) segments_->With({{"outcome", outcome}}).Increment();
  }
  void Action(const std::string& type, double n) {
    if (actions_ && n > 0) actions_->With({{"type", type}}).Increment(n);
  }
  void Rejected(const std::string& reason) {
    if (rejected_) rejected_->With({{"reason", reason}}).Increment();
  }
  void ParkedDelta(double d) {
    if (parked_) parked_->Increment(d);
  }

 private:
  metrics::Gauge* backlog_ = nullptr;
  metrics::Gauge* queue_ = nullptr;
  metrics::Histogram* latency_ = nullptr;
  metrics::Family<metrics::Counter>* segments_ = nullptr;
  metrics::Family<metrics::Counter>* actions_ = nullptr;
  metrics::Family<metrics::Counter>* rejected_ = nullptr;
  metrics::Gauge* parked_ = nullptr;
};

}  // namespace speakermem::writer

#endif  // SPEAKERMEM_WRITER_WRITER_METRICS_H_
