#include "llm/metrics.h"

namespace speakermem::llm {

LlmMetrics::LlmMetrics(prometheus::Registry* r)
    : calls_(prometheus::BuildCounter()
                 .Name("speakermem_model_calls_total")
                 .Help("Model calls by stage and outcome (ok or canonical code).")
                 .Register(*r)),
      latency_(prometheus::BuildHistogram()
                   .Name("speakermem_model_call_duration_seconds")
                   .Help("Model call latency by stage, retries included.")
                   .Register(*r)),
      tokens_(prometheus::BuildCounter()
                  .Name("speakermem_model_tokens_total")
                  .Help("Model tokens by stage and direction (in/out); estimated=true "
                        "when the endpoint reported no usage.")
                  .Register(*r)),
      retries_(prometheus::BuildCounter()
                   .Name("speakermem_model_retries_total")
                   .Help("Model call retries by stage and reason.")
                   .Register(*r)),
      fallbacks_(prometheus::BuildCounter()
                     .Name("speakermem_stage_fallbacks_total")
                     .Help("Stages that fell back to their safe default after a model "
                           "failure.")
                     .Register(*r)),
      coercions_(prometheus::BuildCounter()
                     .Name("speakermem_model_coercions_total")
                     .Help("Reply values a stage coerced, salvaged or dropped to read a "
                           "model's reply, by stage and kind.")
                     .Register(*r)),
      step_downs_(prometheus::BuildCounter()
                      .Name("speakermem_model_format_step_downs_total")
                      .Help("Endpoints that refused a response_format, by stage and the form "
                            "used from then on (json_object, none).")
                      .Register(*r)) {}

void LlmMetrics::ObserveCall(const std::string& stage, const std::string& outcome, double seconds) {
  calls_.Add({{"stage", stage}, {"outcome", outcome}}).Increment();
  static const prometheus::Histogram::BucketBoundaries kBuckets = {
      0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120};
  latency_.Add({{"stage", stage}}, kBuckets).Observe(seconds);
}

void LlmMetrics::AddTokens(const std::string& stage, uint64_t in, uint64_t out, bool estimated) {
  const std::string est = estimated ? "true" : "false";
  tokens_.Add({{"stage", stage}, {"direction", "in"}, {"estimated", est}})
      .Increment(static_cast<double>(in));
  tokens_.Add({{"stage", stage}, {"direction", "out"}, {"estimated", est}})
      .Increment(static_cast<double>(out));
}

void LlmMetrics::CountRetry(const std::string& stage, const std::string& reason) {
  retries_.Add({{"stage", stage}, {"reason", reason}}).Increment();
}

void LlmMetrics::CountFallback(const std::string& stage) {
  fallbacks_.Add({{"stage", stage}}).Increment();
}

void LlmMetrics::CountCoercion(const std::string& stage, const std::string& kind) {
  coercions_.Add({{"stage", stage}, {"kind", kind}}).Increment();
}

void LlmMetrics::CountFormatStepDown(const std::string& stage, const std::string& to) {
  step_downs_.Add({{"stage", stage}, {"to", to}}).Increment();
}

}  // namespace speakermem::llm
