// Prometheus metrics of model calls, by stage. No tenant or channel labels.
#ifndef SPEAKERMEM_LLM_METRICS_H_
#define SPEAKERMEM_LLM_METRICS_H_

#include <string>

#include "metrics/metrics.h"

namespace speakermem::llm {

// Safe for concurrent use.
class LlmMetrics {
 public:
  explicit LlmMetrics(metrics::Registry* registry);

  // outcome: "ok" or a lower-case canonical code ("deadline_exceeded").
  void ObserveCall(const std::string& stage, const std::string& outcome, double seconds);
  void AddTokens(const std::string& stage, uint64_t in, uint64_t out, bool estimated);
  // reason: "timeout", "connect", "429", "5xx".
  void CountRetry(const std::string& stage, const std::string& reason);
  // A stage fell back to its safe default after a model failure.
  void CountFallback(const std::string& stage);
  // A reply value the stage coerced, salvaged or dropped (StageCall::coercions).
  void CountCoercion(const std::string& stage, const std::string& kind);
  // The endpoint refused a response_format; `to` is the form used from now on.
  void CountFormatStepDown(const std::string& stage, const std::string& to);

 private:
  metrics::Family<metrics::Counter>& calls_;
  metrics::Family<metrics::Histogram>& latency_;
  metrics::Family<metrics::Counter>& tokens_;
  metrics::Family<metrics::Counter>& retries_;
  metrics::Family<metrics::Counter>& fallbacks_;
  metrics::Family<metrics::Counter>& coercions_;
  metrics::Family<metrics::Counter>& step_downs_;
};

}  // namespace speakermem::llm

#endif  // SPEAKERMEM_LLM_METRICS_H_
