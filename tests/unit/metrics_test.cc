// The paper's metrics on hand-computed examples.
#include "eval/metrics.h"

#include <catch2/catch.hpp>

#include "writer/speaker_levenshtein.h"

namespace speakermem::eval {

using writer::ChainEdge;
using writer::ChainScore;
using writer::MemoryReward;
using writer::SoftMatch;
namespace {

TEST_CASE("token-F1 follows the paper: lower case, strip, trailing periods, token sets",
          "[eval][metrics]") {
  // A = {the, cat, sat}, G = {the, cat}: P = 2/3, R = 1, F1 = 0.8.
  CHECK(TokenF1("The cat sat.", "the cat") == Approx(0.8));
  CHECK(TokenF1("  Paris...  ", "paris") == Approx(1.0));
  // Duplicates count once: A = {yes}, G = {yes, no}: P = 1, R = 1/2.
  CHECK(TokenF1("yes yes yes", "Yes no") == Approx(2.0 / 3.0));
  // Only trailing periods go; inner punctuation stays part of a token.
  CHECK(AnswerTokenSet("e.g. Lisbon.") == std::vector<std::string>{"e.g.", "lisbon"});
  CHECK(AnswerTokenSet("a \t b\n\nc") == std::vector<std::string>{"a", "b", "c"});
  // Empty set or empty intersection: 0.
  CHECK(TokenF1("", "paris") == 0.0);
  CHECK(TokenF1("...", "paris") == 0.0);
  CHECK(TokenF1("london", "paris") == 0.0);
}

TEST_CASE("evidence recall and hit", "[eval][metrics]") {
  CHECK(EvidenceRecall({"D1:1", "D1:2"}, {"D1:2", "D3:4"}) == Approx(0.5));
  CHECK(EvidenceHit({"D1:1", "D1:2"}, {"D1:2", "D3:4"}));
  CHECK(EvidenceRecall({"D1:1", "D1:1"}, {"D1:1"}) == Approx(1.0));
  CHECK(EvidenceRecall({"D1:1"}, {}) == 0.0);
  CHECK_FALSE(EvidenceHit({"D1:1"}, {"D2:2"}));
  CHECK(EvidenceRecall({}, {"D2:2"}) == 0.0);
}

TEST_CASE("MeanQ weighs questions, MeanN networks", "[eval][metrics]") {
  // n1: 3 of 4 right (mean 0.75); n2: 0 of 1.
  MeanQN m = ComputeMeanQN({{"n1", {1, 0, 1, 1}}, {"n2", {0}}, {"empty", {}}}, 1000, 7);
  CHECK(m.questions == 5);
  CHECK(m.networks == 2);
  CHECK(m.mean_q == Approx(0.6));
  CHECK(m.mean_n == Approx(0.375));
  // Two units {0.75, 0}: resampled means are 0, 0.375 or 0.75, so the 95%
  // interval is [0, 0.75].
  CHECK(m.ci_n.lo == Approx(0.0));
  CHECK(m.ci_n.hi == Approx(0.75));
}

TEST_CASE("the bootstrap CI is seeded, reproducible and brackets the mean", "[eval][metrics]") {
  std::vector<double> units;
  double sum = 0;
  for (int i = 0; i < 43; ++i) {
    units.push_back((i * 37 % 100) / 100.0);
    sum += units.back();
  }
  const double mean = sum / 43;
  ConfidenceInterval a = BootstrapMeanCI(units, 10000, 42);
  ConfidenceInterval b = BootstrapMeanCI(units, 10000, 42);
  CHECK(a.lo == b.lo);
  CHECK(a.hi == b.hi);
  CHECK(a.lo < mean);
  CHECK(mean < a.hi);
  // Roughly mean +- 1.96 standard errors (sd of these units ~0.29).
  CHECK(a.hi - a.lo == Approx(2 * 1.96 * 0.29 / std::sqrt(43.0)).margin(0.03));
  ConfidenceInterval same = BootstrapMeanCI({0.5, 0.5, 0.5}, 100, 1);
  CHECK(same.lo == Approx(0.5));
  CHECK(same.hi == Approx(0.5));
  ConfidenceInterval none = BootstrapMeanCI({}, 100, 1);
  CHECK(none.lo == 0.0);
}

TEST_CASE("multiple-choice items score 0/1 by option match", "[eval][metrics]") {
  const std::vector<std::string> opts = {"A. red", "B. blue", "C. green"};
  CHECK(MultipleChoiceScore("B", opts, "B") == 1.0);
  CHECK(MultipleChoiceScore("(b)", opts, "B") == 1.0);
  CHECK(MultipleChoiceScore("Answer: B.", opts, "B") == 1.0);
  CHECK(MultipleChoiceScore("It is blue.", opts, "B") == 1.0);
  CHECK(MultipleChoiceScore("A", opts, "B") == 0.0);
  CHECK(MultipleChoiceScore("red or blue", opts, "B") == 0.0);  // two options named
  CHECK(MultipleChoiceScore("D", opts, "B") == 0.0);            // not an option
  CHECK(MultipleChoiceScore("", opts, "B") == 0.0);
  // SocialMem's options are "LETTER: text"; an answer may repeat one whole.
  const std::vector<std::string> named = {"A: Josh", "B: Leon", "C: Mei"};
  CHECK(MultipleChoiceScore("C: Mei", named, "C") == 1.0);
  CHECK(MultipleChoiceScore("B: Leon", named, "C") == 0.0);
  CHECK(MultipleChoiceScore("I think it is Mei.", named, "C") == 1.0);
}

TEST_CASE("the chain score gates on owner and layer and weighs old and new halves",
          "[eval][metrics]") {
  ChainEdge e1{"Alice", "per_speaker_core", "alice likes tea", "alice likes coffee"};
  ChainEdge e2{"Bob", "per_speaker_core", "bob lives in porto", "bob lives in lisbon"};
  CHECK(ChainScore({}, {}) == 1.0);
  CHECK(ChainScore({e1}, {}) == 0.0);
  CHECK(ChainScore({}, {e1}) == 0.0);
  CHECK(ChainScore({e1}, {e1}) == Approx(1.0));
  // One of two reference edges found exactly: 2 x 1 / (1 + 2).
  CHECK(ChainScore({e1}, {e1, e2}) == Approx(2.0 / 3.0));
  // Same contents under another owner: no match at all.
  ChainEdge moved = e1;
  moved.owner = "Bob";
  CHECK(ChainScore({moved}, {e1}) == 0.0);
  // The right old state with an unrelated new one earns the old half and
  // whatever the new contents share (a few characters).
  ChainEdge half = e1;
  half.new_content = "zzz qqq";
  const double new_part = SoftMatch("zzz qqq", "alice likes coffee");
  CHECK(new_part < 0.1);
  CHECK(ChainScore({half}, {e1}) == Approx(0.5 + 0.5 * new_part));
  CHECK(MemoryReward(0.5, 1.0) == Approx(0.6));
}

}  // namespace
}  // namespace speakermem::eval
