// The constant search behind every leave-one-conversation-out choice.
#include <catch2/catch.hpp>

#include "eval/recall_tuning.h"

namespace speakermem::eval {
namespace {

// Two conversations of one question each; a setting's objective is a
// function of (a, b) with a ridge: raising either constant alone lowers
// it, raising both together raises it.
struct Ridge {
  std::vector<datasets::Conversation> convs;
  RecallTuner tuner;

  static double Value(const Setting& s) {
    const double a = s.at("a"), b = s.at("b");
    return a == b ? a : -1.0;
  }

  Ridge()
      : convs(2),
        tuner(
            &convs,
            [](const datasets::Conversation&, const datasets::Question&,
               const std::set<std::string>&, const Setting& s) -> absl::StatusOr<QuestionScore> {
              QuestionScore q;
              q.extra["value"] = Value(s);
              return q;
            },
            nullptr,
            [](const std::vector<QuestionScore>& scores, const std::vector<bool>& use) {
              double v = 0;
              for (const auto& q : scores) v += use[q.conversation] ? q.extra.at("value") : 0;
              return v;
            }) {
    for (size_t i = 0; i < convs.size(); ++i) {
      convs[i].channel = "c" + std::to_string(i);
      storage::Message m;
      m.message_id = "m";
      convs[i].messages.push_back(m);
      datasets::Question q;
      q.question = "?";
      q.evidence = {"m"};
      convs[i].questions.push_back(q);
    }
  }
};

const std::vector<TunableConstant> kConstants = {{"a", {0, 1, 2}}, {"b", {0, 1, 2}}};

TEST_CASE("exhaustive search finds what coordinate ascent cannot climb to", "[eval][tuning]") {
  Ridge r;
  const std::vector<bool> all = {true, true};
  absl::StatusOr<Setting> coord = r.tuner.Tune(kConstants, {{"a", 0}, {"b", 0}}, all);
  REQUIRE(coord.ok());
  CHECK(coord->at("a") == 0);  // each step alone leaves the ridge
  CHECK(coord->at("b") == 0);
  absl::StatusOr<Setting> best = r.tuner.TuneExhaustive(kConstants, all);
  REQUIRE(best.ok());
  CHECK(best->at("a") == 2);
  CHECK(best->at("b") == 2);
  CHECK(r.tuner.settings_scored() == 9);  // every combination, once

  absl::StatusOr<LooResult> loo =
      LeaveOneConversationOut(&r.tuner, kConstants, {}, r.convs.size(), Search::kExhaustive);
  REQUIRE(loo.ok());
  REQUIRE(loo->fold_settings.size() == 2);
  for (const auto& s : loo->fold_settings) CHECK(s.at("a") == 2);
  CHECK(loo->held_out.size() == 2);
}

}  // namespace
}  // namespace speakermem::eval
