#include "llm/metrics.h"

namespace speakermem::llm {

LlmMetrics::LlmMetrics(metrics::Registry* r)
    : calls_(r->Counters("speakermem_model_calls_total",
                         "Model calls by stage and outcome (ok or canonical code).")),
      latency_(r->Histograms(
          "speakermem_model_call_duration_seconds",
          "Model call latency by stage, retries included.",
          {0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120})),
      tokens_(r->Counters("speakermem_model_tokens_total",
                          "Model tokens by stage and direction (in/out); estimated=true "
                          "when the endpoint reported no usage.")),
      retries_(
          r->Counters("speakermem_model_retries_total", "Model call retries by stage and reason.")),
      fallbacks_(r->Counters("speakermem_stage_fallbacks_total",
                             "Stages that fell back to their safe default after a model "
                             "failure.")),
      coercions_(r->Counters("speakermem_model_coercions_total",
                             "Reply values a stage coerced, salvaged or dropped to read a "
                             "model's reply, by stage and kind.")),
      step_downs_(r->Counters("speakermem_model_format_step_downs_total",
                              "Endpoints that refused a response_format, by stage and the form "
                              "used from then on (json_object, none).")) {}

void LlmMetrics::ObserveCall(const std::string& stage, const std::string& outcome, double seconds) {
  calls_.With({{"stage", stage}, {"outcome", outcome}}).Increment();
  latency_.With({{"stage", stage}}).Observe(seconds);
}

void LlmMetrics::AddTokens(const std::string& stage, uint64_t in, uint64_t out, bool estimated) {
  const std::string est = estimated ? "true" : "false";
  tokens_.With({{"stage", stage}, {"direction", "in"}, {"estimated", est}})
      .Increment(static_cast<double>(in));
  tokens_.With({{"stage", stage}, {"direction", "out"}, {"estimated", est}})
      .Increment(static_cast<double>(out));
}

void LlmMetrics::CountRetry(const std::string& stage, const std::string& reason) {
  retries_.With({{"stage", stage}, {"reason", reason}}).Increment();
}

void LlmMetrics::CountFallback(const std::string& stage) {
  fallbacks_.With({{"stage", stage}}).Increment();
}

void LlmMetrics::CountCoercion(const std::string& stage, const std::string& kind) {
  coercions_.With({{"stage", stage}, {"kind", kind}}).Increment();
}

void LlmMetrics::CountFormatStepDown(const std::string& stage, const std::string& to) {
  step_downs_.With({{"stage", stage}, {"to", to}}).Increment();
}

}  // namespace speakermem::llm
