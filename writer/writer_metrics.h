// The Writer's Prometheus metrics; every method is a no-op without a
// registry. Internal to writer/.
#ifndef SPEAKERMEM_WRITER_WRITER_METRICS_H_
#define SPEAKERMEM_WRITER_WRITER_METRICS_H_

#include <string>

#include "prometheus/counter.h"
#include "prometheus/family.h"
#include "prometheus/gauge.h"
#include "prometheus/histogram.h"

namespace prometheus {
class Registry;
}

namespace speakermem::writer {

class WriterMetrics {
 public:
  explicit WriterMetrics(prometheus::Registry* r);
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
    if (segments_) segments_->Add({{"outcome", outcome}}).Increment();
  }
  void Action(const std::string& type, double n) {
    if (actions_ && n > 0) actions_->Add({{"type", type}}).Increment(n);
  }
  void Rejected(const std::string& reason) {
    if (rejected_) rejected_->Add({{"reason", reason}}).Increment();
  }
  void ParkedDelta(double d) {
    if (parked_) parked_->Increment(d);
  }

 private:
  prometheus::Gauge* backlog_ = nullptr;
  prometheus::Gauge* queue_ = nullptr;
  prometheus::Histogram* latency_ = nullptr;
  prometheus::Family<prometheus::Counter>* segments_ = nullptr;
  prometheus::Family<prometheus::Counter>* actions_ = nullptr;
  prometheus::Family<prometheus::Counter>* rejected_ = nullptr;
  prometheus::Gauge* parked_ = nullptr;
};

}  // namespace speakermem::writer

#endif  // SPEAKERMEM_WRITER_WRITER_METRICS_H_
