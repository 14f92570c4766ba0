#include <catch2/catch.hpp>
#include <fstream>

#include "nlohmann/json.hpp"
#include "writer/speaker_levenshtein.h"

namespace speakermem::eval {

using writer::MaxWeightMatching;
using writer::NormalizedTokens;
using writer::SequenceMatchRatio;
using writer::SoftMatch;
using writer::SpeakerLevenshtein;
using writer::SpeakerLevenshteinResult;
using writer::StateEntry;
using writer::TokenSetF1;
namespace {

TEST_CASE("SequenceMatchRatio agrees with Python's difflib, autojunk included",
          "[eval][seqmatch]") {
  std::ifstream in(SPEAKERMEM_SOURCE_DIR "/tests/data/seqmatch_vectors.jsonl");
  REQUIRE(in.good());
  std::string line;
  int n = 0, long_b = 0;
  while (std::getline(in, line)) {
    auto j = nlohmann::json::parse(line);
    std::string a = j["a"], b = j["b"];
    double want = j["ratio"];
    INFO("a=" << a << "\nb=" << b);
    CHECK(SequenceMatchRatio(a, b) == Approx(want).margin(1e-12));
    ++n;
    long_b += b.size() >= 200;
  }
  CHECK(n >= 100);
  CHECK(long_b >= 10);
}

TEST_CASE("NormalizedTokens keeps [a-z0-9] spans and CJK characters", "[eval]") {
  CHECK(NormalizedTokens("Bob's NEW café, v2!") ==
        std::vector<std::string>{"bob", "s", "new", "caf", "v2"});
  CHECK(NormalizedTokens("我喜欢tea") == std::vector<std::string>{"我", "喜", "欢", "tea"});
}

TEST_CASE("TokenSetF1 and SoftMatch", "[eval]") {
  CHECK(TokenSetF1({"a", "b"}, {"b", "c"}) == Approx(0.5));
  CHECK(TokenSetF1({}, {"a"}) == 0);
  CHECK(SoftMatch("Bob prefers the beach", "bob prefers the beach.") == Approx(1.0));
  CHECK(SoftMatch("x", "y") == 0.0);
}

TEST_CASE("MaxWeightMatching finds the best one-to-one assignment", "[eval]") {
  // Greedy would take 0.9 and leave 0.1; the optimum is 0.8 + 0.8.
  std::vector<std::vector<double>> w = {{0.9, 0.8}, {0.8, 0.1}};
  std::vector<int> match;
  CHECK(MaxWeightMatching(w, &match) == Approx(1.6));
  CHECK(match == std::vector<int>{1, 0});
  std::vector<std::vector<double>> rect = {{0.2}, {0.7}, {0.5}};
  CHECK(MaxWeightMatching(rect, &match) == Approx(0.7));
  CHECK(match == std::vector<int>{-1, 0, -1});
  CHECK(MaxWeightMatching({}) == 0);
}

TEST_CASE("SpeakerLevenshtein gates on coordinates and penalises omissions and extras",
          "[eval][sl]") {
  std::vector<StateEntry> ref = {{"alice", "alice", "core", "Alice is vegetarian"},
                                 {"GROUP", "bob", "per_speaker_core", "unused"}};
  ref.pop_back();
  // Identical: 1.
  CHECK(SpeakerLevenshtein(ref, ref).score == Approx(1.0));
  // Same content, wrong source: no match at all.
  std::vector<StateEntry> wrong_source = {{"alice", "bob", "core", "Alice is vegetarian"}};
  CHECK(SpeakerLevenshtein(wrong_source, ref).score == 0.0);
  // Paper layer names are accepted.
  std::vector<StateEntry> paper = {{"alice", "alice", "per_speaker_core", "alice is vegetarian"}};
  CHECK(SpeakerLevenshtein(paper, ref).score == Approx(1.0));
  // An extra record halves precision: F = 2*1/(2+1).
  std::vector<StateEntry> extra = {{"alice", "alice", "core", "Alice is vegetarian"},
                                   {"alice", "alice", "core", "Alice likes tea"}};
  CHECK(SpeakerLevenshtein(extra, ref).per_owner.at("alice") == Approx(2.0 / 3));
  CHECK(SpeakerLevenshtein({}, {}).score == 1.0);
}

TEST_CASE("SpeakerLevenshtein: a frequent owner's perfect records do not hide a missing one",
          "[eval][sl]") {
  std::vector<StateEntry> ref;
  for (int i = 0; i < 9; ++i) {
    ref.push_back({"alice", "alice", "core", "Alice fact number " + std::to_string(i)});
  }
  ref.push_back({"bob", "bob", "core", "Bob is allergic to nuts"});
  std::vector<StateEntry> pred(ref.begin(), ref.begin() + 9);  // Bob missing
  SpeakerLevenshteinResult r = SpeakerLevenshtein(pred, ref);
  CHECK(r.per_owner.at("alice") == Approx(1.0));
  CHECK(r.per_owner.at("bob") == 0.0);
  CHECK(r.macro == Approx(0.5));
  CHECK(r.worst == 0.0);
  CHECK(r.score == Approx(0.8 * 0.5));
  // A micro-average over records would have said 0.9 x 2 / (9 + 10).
  CHECK(r.score < 0.9);
}

}  // namespace
}  // namespace speakermem::eval
