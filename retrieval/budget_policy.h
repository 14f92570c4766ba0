// A query's budgets: what a request may ask and what it gets when it asks
// nothing. The one place the defaults and caps are decided; the server
// configures the policy (query.default_top_k, limits.max_*) and hands each
// request's asks here.
#ifndef SPEAKERMEM_RETRIEVAL_BUDGET_POLICY_H_
#define SPEAKERMEM_RETRIEVAL_BUDGET_POLICY_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "retrieval/pipeline.h"

namespace speakermem::retrieval {

// What a request asks; 0 or unset: the default.
struct BudgetRequest {
  uint32_t s1_recall_n = 0;
  uint32_t s1_top_k = 0;
  uint32_t s2_k = 0;
  uint32_t s2_source_k = 0;
  std::optional<bool> expand;
  uint32_t expand_anchors = 0;
  uint32_t expand_window = 0;
  std::optional<bool> ask;
};

// Defaults and caps. A request over a cap is INVALID_ARGUMENT (it asked for
// something it cannot get), never silently clamped.
struct BudgetPolicy {
  // System 1 top-k when a request gives none (the paper's main
  // configuration: 10). Config query.default_top_k.
  uint32_t default_top_k = 10;
  // Caps. Config limits.max_top_k, limits.max_recall_n, limits.max_s2_k,
  // limits.max_source_k, limits.max_expand_anchors, limits.max_expand_window.
  uint32_t max_top_k = 200;
  uint32_t max_recall_n = 1000;
  uint32_t max_s2_k = 50;
  uint32_t max_source_k = 50;
  uint32_t max_expand_anchors = 20;
  uint32_t max_expand_window = 50;
};

// The budgets `req` gets under `policy`: Budgets' defaults (pipeline.h)
// with the policy's top-k, overridden by what the request asks; recall_n is
// at least top-k. INVALID_ARGUMENT naming the field over its cap.
absl::StatusOr<Budgets> ResolveBudgets(const BudgetRequest& req, const BudgetPolicy& policy);

// Multiple-choice options are "LETTER: text" (at most 26); INVALID_ARGUMENT
// naming the first that is not.
absl::Status CheckAnswerOptions(const std::vector<std::string>& options);

}  // namespace speakermem::retrieval

#endif  // SPEAKERMEM_RETRIEVAL_BUDGET_POLICY_H_
