// Helpers shared by the query pipeline's translation units. Not a public
// header: include it from retrieval/ only.
#ifndef SPEAKERMEM_RETRIEVAL_PIPELINE_INTERNAL_H_
#define SPEAKERMEM_RETRIEVAL_PIPELINE_INTERNAL_H_

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <shared_mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "recordindex/channel_indexes.h"
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

// Dot(a, b) over the indices where `b` is not zero (`b_nonzero`,
// ascending): the same double, since every skipped product is zero. An
// offline issue vector hashes a few words into hundreds of dimensions.
inline double SparseDot(const std::vector<float>& a, const std::vector<float>& b,
                        const std::vector<uint32_t>& b_nonzero) {
  double s = 0;
  for (uint32_t i : b_nonzero) {
    if (i < a.size()) s += a[i] * b[i];
  }
  return s;
}

// The indices where `v` is not zero, ascending.
inline std::vector<uint32_t> NonZero(const std::vector<float>& v) {
  std::vector<uint32_t> nz;
  for (uint32_t i = 0; i < v.size(); ++i) {
    if (v[i] != 0.0f) nz.push_back(i);
  }
  return nz;
}

// A channel's records indexed (recordindex/, shared with the Writer), and a
// query's hold on them.
using RecordSnapshot = recordindex::RecordIndex;
using RecordsView = recordindex::IndexView;

}  // namespace speakermem::retrieval::internal

namespace speakermem::retrieval {

// One query's state between the steps of QueryPipeline::Run.
struct QueryPipeline::QueryState {
  QueryState(const PipelineRequest& r, const RecallParams& params) : req(r), rp(params) {}
  const PipelineRequest& req;
  const RecallParams& rp;  // the request's recall constants, or the pipeline's
  PipelineResult out;
  uint64_t cursor = 0;                                // derived through this seq
  std::vector<RosterMember> roster;                   // the channel's members
  std::vector<std::string> row_ids;                   // the people the query names
  std::vector<storage::Message> pool;                 // System 1 candidates
  std::unordered_map<uint64_t, double> recall_score;  // by seq
  std::vector<size_t> order;                          // pool indices, best first
  std::set<uint64_t> expanded;                        // seqs added by Expand
  // Each speaker's best message by recall's BM25 terms alone (when recall
  // scored the terms System 2's fallbacks ask for: AddFallbacks).
  std::optional<std::map<std::string, ScoredSeq>> best_per_speaker;
};

}  // namespace speakermem::retrieval

#endif  // SPEAKERMEM_RETRIEVAL_PIPELINE_INTERNAL_H_
