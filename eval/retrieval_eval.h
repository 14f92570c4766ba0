// Retrieval evaluation: System 1 evidence recall@k and hit@k per
// configuration, overall and per question category.
#ifndef SPEAKERMEM_EVAL_RETRIEVAL_EVAL_H_
#define SPEAKERMEM_EVAL_RETRIEVAL_EVAL_H_

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "datasets/datasets.h"

namespace speakermem::eval {

// Retrieves the message ids of the top `k` System 1 evidence messages for
// `question` in `channel` under configuration `config` ("bm25", "dense",
// "full"), best first. EvaluateRetrieval asks once, at the largest k, and
// reads recall@k from the first k ids; ids after an empty string count at
// every k (e.g. the from_ids of System 2 records shown beside the top-k).
using RetrieveFn = std::function<absl::StatusOr<std::vector<std::string>>(
    const std::string& channel, const std::string& question, const std::string& config, size_t k)>;

struct RecallStats {
  size_t questions = 0;
  std::map<size_t, double> recall;  // k -> sum of per-question recall
  std::map<size_t, double> hit;     // k -> count of questions with a hit
};

struct ConfigReport {
  RecallStats overall;
  std::map<std::string, RecallStats> by_category;
};

struct RetrievalReport {
  std::vector<size_t> ks;
  std::map<std::string, ConfigReport> configs;
  size_t questions_total = 0;
  size_t questions_skipped = 0;  // no evidence left after dropping unknown ids
  size_t evidence_ids_dropped = 0;
  size_t evidence_ids_split = 0;  // ids that came packed several to a string
};

// Runs every question with evidence of `conversations` through `retrieve`
// for each config and k. `progress` (may be empty) is called with (done,
// total) questions.
absl::StatusOr<RetrievalReport> EvaluateRetrieval(
    const std::vector<datasets::Conversation>& conversations,
    const std::vector<std::string>& configs, const std::vector<size_t>& ks,
    const RetrieveFn& retrieve, const std::function<void(size_t, size_t)>& progress);

// {"configs": {name: {"questions", "recall": {"5": pct...}, "hit", "by_category"}}, ...}
std::string ReportJson(const RetrievalReport& report, const std::string& dataset);

}  // namespace speakermem::eval

#endif  // SPEAKERMEM_EVAL_RETRIEVAL_EVAL_H_
