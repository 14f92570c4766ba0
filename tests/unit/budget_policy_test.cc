#include "retrieval/budget_policy.h"

#include <catch2/catch.hpp>

#include "tests/test_util.h"

namespace speakermem::retrieval {
namespace {

TEST_CASE("budgets: an empty request gets the policy's top-k and Budgets' defaults", "[budgets]") {
  BudgetPolicy policy;
  policy.default_top_k = 7;
  absl::StatusOr<Budgets> b = ResolveBudgets({}, policy);
  REQUIRE_OK(b.status());
  const Budgets defaults;
  CHECK(b->s1_top_k == 7);
  CHECK(b->s1_recall_n == defaults.s1_recall_n);
  CHECK(b->s2_k == defaults.s2_k);
  CHECK(b->s2_source_k == defaults.s2_source_k);
  CHECK(b->expand == defaults.expand);
  CHECK(b->ask == defaults.ask);
}

TEST_CASE("budgets: asks override the defaults, recall_n is at least top-k", "[budgets]") {
  BudgetRequest req;
  req.s1_top_k = 60;
  req.s1_recall_n = 20;
  req.s2_k = 3;
  req.expand = false;
  req.ask = true;
  absl::StatusOr<Budgets> b = ResolveBudgets(req, BudgetPolicy{});
  REQUIRE_OK(b.status());
  CHECK(b->s1_top_k == 60);
  CHECK(b->s1_recall_n == 60);
  CHECK(b->s2_k == 3);
  CHECK_FALSE(b->expand);
  CHECK(b->ask);
}

TEST_CASE("budgets: an ask over a cap is refused naming the field and the cap", "[budgets]") {
  BudgetPolicy policy;
  policy.max_s2_k = 5;
  BudgetRequest req;
  req.s2_k = 6;
  absl::StatusOr<Budgets> b = ResolveBudgets(req, policy);
  REQUIRE_CODE(b.status(), absl::StatusCode::kInvalidArgument);
  CHECK(std::string(b.status().message()) == "budgets.s2_k: 6 exceeds the limit 5");
  req.s2_k = 5;
  REQUIRE_OK(ResolveBudgets(req, policy).status());
  req.expand_window = policy.max_expand_window + 1;
  CHECK(std::string(ResolveBudgets(req, policy).status().message()).find("expand_window") !=
        std::string::npos);
}

TEST_CASE("answer options must be LETTER: text, at most 26", "[budgets]") {
  REQUIRE_OK(CheckAnswerOptions({"A: Lisbon", "B: Porto"}));
  absl::Status bad = CheckAnswerOptions({"A: Lisbon", "Porto"});
  REQUIRE_CODE(bad, absl::StatusCode::kInvalidArgument);
  CHECK(std::string(bad.message()).find("options[1]") != std::string::npos);
  CHECK(CheckAnswerOptions(std::vector<std::string>(27, "A: x")).code() ==
        absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace speakermem::retrieval
