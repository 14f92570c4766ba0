#include "retrieval/budget_policy.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace speakermem::retrieval {

absl::StatusOr<Budgets> ResolveBudgets(const BudgetRequest& req, const BudgetPolicy& policy) {
  const struct {
    const char* name;
    uint32_t asked, cap;
  } caps[] = {{"s1_recall_n", req.s1_recall_n, policy.max_recall_n},
              {"s1_top_k", req.s1_top_k, policy.max_top_k},
              {"s2_k", req.s2_k, policy.max_s2_k},
              {"s2_source_k", req.s2_source_k, policy.max_source_k},
              {"expand_anchors", req.expand_anchors, policy.max_expand_anchors},
              {"expand_window", req.expand_window, policy.max_expand_window}};
  for (const auto& c : caps) {
    if (c.asked > c.cap) {
      return absl::InvalidArgumentError(
          absl::StrCat("budgets.", c.name, ": ", c.asked, " exceeds the limit ", c.cap));
    }
  }
  Budgets b;
  b.s1_top_k = req.s1_top_k ? req.s1_top_k : policy.default_top_k;
  if (req.s1_recall_n) b.s1_recall_n = req.s1_recall_n;
  b.s1_recall_n = std::max(b.s1_recall_n, b.s1_top_k);
  if (req.s2_k) b.s2_k = req.s2_k;
  if (req.s2_source_k) b.s2_source_k = req.s2_source_k;
  if (req.expand) b.expand = *req.expand;
  if (req.expand_anchors) b.expand_anchors = req.expand_anchors;
  if (req.expand_window) b.expand_window = req.expand_window;
  if (req.ask) b.ask = *req.ask;
  return b;
}

absl::Status CheckAnswerOptions(const std::vector<std::string>& options) {
  if (options.size() > 26) return absl::InvalidArgumentError("options: at most 26");
  for (size_t i = 0; i < options.size(); ++i) {
    const std::string& o = options[i];
    if (o.size() < 3 || o[0] < 'A' || o[0] > 'Z' || o[1] != ':') {
      return absl::InvalidArgumentError(
          absl::StrCat("options[", i, "]: must be \"LETTER: text\", e.g. \"A: Lisbon\""));
    }
  }
  return absl::OkStatus();
}

}  // namespace speakermem::retrieval
