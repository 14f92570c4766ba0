// Helpers shared by the query pipeline's translation units. Not a public
// header: include it from retrieval/ only.
#ifndef SPEAKERMEM_RETRIEVAL_PIPELINE_INTERNAL_H_
#define SPEAKERMEM_RETRIEVAL_PIPELINE_INTERNAL_H_

#include <chrono>
#include <string>
#include <vector>

#include "retrieval/pipeline.h"

namespace speakermem::retrieval::internal {

using Clock = std::chrono::steady_clock;

inline double Ms(Clock::time_point since) {
  return std::chrono::duration<double, std::milli>(Clock::now() - since).count();
}

// Appends the stage's latency, model calls and tokens to the result's trace.
inline void Trace(PipelineResult* out, const std::string& stage, Clock::time_point start,
                  const StageCall& call, std::string note = "") {
  StageTrace t;
  t.stage = stage;
  t.latency_ms = Ms(start);
  t.model_calls = call.model_calls;
  t.tokens_in = call.usage.tokens_in;
  t.tokens_out = call.usage.tokens_out;
  t.note = note.empty() ? call.note : note;
  if (call.fell_back && note.empty()) t.note = call.note;
  out->trace.push_back(std::move(t));
}

inline bool InRange(int64_t ts, int64_t start, int64_t end) {
  return (start == 0 || ts >= start) && (end == 0 || ts < end);
}

inline double Dot(const std::vector<float>& a, const std::vector<float>& b) {
  double s = 0;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) s += a[i] * b[i];
  return s;
}

}  // namespace speakermem::retrieval::internal

#endif  // SPEAKERMEM_RETRIEVAL_PIPELINE_INTERNAL_H_
