#include "retrieval/stages.h"

#include <catch2/catch.hpp>
#include <cmath>

#include "tests/test_util.h"

namespace speakermem::retrieval {
namespace {

std::vector<RosterMember> Roster() {
  return {{"alice", {"Alice", "Ally"}}, {"bob", {"Bob"}}, {"chen", {"Chen"}}, {"dana", {"Dana"}}};
}

Projection P(const std::string& question) {
  auto project = NewOfflineProject();
  StageCall call;
  auto p = project->Project({question, "", Roster()}, &call);
  REQUIRE_OK(p);
  return *p;
}

using Rows = std::vector<std::string>;

TEST_CASE("offline Project fixes source and owner for one person's view of another",
          "[stages][project]") {
  Projection p = P("Alice thinks Bob agreed to the plan");
  CHECK(p.source == "alice");
  CHECK(p.owner == "bob");
  p = P("What does Alice think about Bob?");
  CHECK(p.source == "alice");
  CHECK(p.owner == "bob");
  p = P("What is Ally's view of Chen's proposal?");
  CHECK(p.source == "alice");
  CHECK(p.owner == "chen");
  p = P("According to Dana, does Bob like surfing?");
  CHECK(p.source == "dana");
  CHECK(p.owner == "bob");
  p = P("Did Alice and Bob both come?");
  CHECK(p.source.empty());
  CHECK(p.owner.empty());
  CHECK(p.rows == Rows{"alice", "bob"});
}

TEST_CASE("offline Project picks rows: names, ALL and GROUP", "[stages][project]") {
  CHECK(P("What did Bob say about the venue?").rows == Rows{"bob"});
  CHECK(P("What does everyone think of Porto?").rows == Rows{"ALL"});
  CHECK(P("What did each of them bring?").rows == Rows{"ALL"});
  CHECK(P("What do all of them want?").rows == Rows{"ALL"});
  CHECK(P("What did the group decide about the venue?").rows == Rows{"GROUP"});
  CHECK(P("Who does not want to fly?").rows == Rows{"ALL"});
  CHECK(P("Where is it?").rows == Rows{"ALL", "GROUP"});
  Rows mixed = P("Did Dana agree with the plan we made?").rows;
  CHECK(mixed == Rows{"dana", "GROUP"});
}

TEST_CASE("offline Project chooses head or full", "[stages][project]") {
  CHECK(P("Where is the offsite now?").tense == Tense::kHead);
  CHECK(P("What is the latest venue?").tense == Tense::kHead);
  CHECK(P("How did the venue change over time?").tense == Tense::kFull);
  CHECK(P("Where did Bob use to live before?").tense == Tense::kFull);
  CHECK(P("What was the history of the budget?").tense == Tense::kFull);
}

TEST_CASE("offline Project's issue drops names and question words", "[stages][project]") {
  CHECK(P("What does Dana need from the venue?").issue == "need venue");
  CHECK(P("Who?").issue == "Who?");
}

double Cos(const std::vector<float>& a, const std::vector<float>& b) {
  double s = 0;
  for (size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
  return s;
}

TEST_CASE("offline Embed is deterministic, normalised and similarity-preserving",
          "[stages][embed]") {
  auto embed = NewOfflineEmbed(256);
  CHECK(embed->dimension() == 256);
  StageCall call;
  auto v = embed->Embed({"the offsite moves to Porto", "offsite moved to Porto!",
                         "I have been taking surf lessons", "", "the offsite moves to Porto"},
                        &call);
  REQUIRE_OK(v);
  REQUIRE(v->size() == 5);
  for (size_t i = 0; i < 3; ++i) {
    REQUIRE((*v)[i].size() == 256);
    double norm = Cos((*v)[i], (*v)[i]);
    CHECK(norm == Approx(1.0).epsilon(1e-5));
  }
  CHECK(Cos((*v)[3], (*v)[3]) == 0.0);  // empty text: zero vector
  CHECK((*v)[0] == (*v)[4]);
  CHECK(Cos((*v)[0], (*v)[1]) > Cos((*v)[0], (*v)[2]) + 0.2);
  CHECK(call.model_calls == 0);
}

std::vector<Candidate> Candidates() {
  return {{"m1", "Bob", "bob", "I have been surfing every weekend", 1000, 1.0},
          {"m2", "Alice", "alice", "The offsite moves to Porto in May", 2000, 0.5},
          {"m3", "Chen", "chen", "Porto has a direct train from Vigo", 3000, 0.9},
          {"m4", "Dana", "dana", "lol", 4000, 0.2}};
}

TEST_CASE("offline Select keeps recall's order and anchors the best", "[stages][select]") {
  auto select = NewOfflineSelect();
  SelectInput in;
  in.question = "Where does the offsite move to?";
  in.projection.rows = {"ALL"};
  in.projection.issue = "offsite move";
  in.candidates = Candidates();  // recall scores 1.0, 0.5, 0.9, 0.2
  in.max_anchors = 2;
  auto out = select->Select(in, nullptr);
  REQUIRE_OK(out);
  CHECK(out->ranking == std::vector<size_t>{0, 2, 1, 3});
  CHECK(out->anchors == std::vector<size_t>{0, 2});
  in.max_anchors = 0;
  out = select->Select(in, nullptr);
  REQUIRE_OK(out);
  CHECK(out->anchors.empty());
  in.candidates[0].score = 0;
  in.candidates[1].score = 0;
  in.candidates[2].score = 0;
  in.candidates[3].score = 0;
  in.max_anchors = 2;
  out = select->Select(in, nullptr);
  REQUIRE_OK(out);
  CHECK(out->ranking == std::vector<size_t>{0, 1, 2, 3});  // ties keep their order
  CHECK(out->anchors.empty());                             // nothing scored: no anchor
}

TEST_CASE("offline Sufficiency measures coverage and names a missing term",
          "[stages][sufficiency]") {
  auto suff = NewOfflineSufficiency(0.6);
  SufficiencyInput in;
  in.question = "Which train goes from Vigo to Porto?";
  in.evidence = Candidates();
  auto out = suff->Judge(in, nullptr);
  REQUIRE_OK(out);
  CHECK(out->sufficient);
  in.question = "What budget did finance approve for catering?";
  out = suff->Judge(in, nullptr);
  REQUIRE_OK(out);
  CHECK_FALSE(out->sufficient);
  CHECK(out->search_term == "budget");
  CHECK(out->coverage < 0.6);
}

TEST_CASE("offline Answer quotes the best evidence and abstains without it", "[stages][answer]") {
  auto answer = NewOfflineAnswer();
  AnswerInput in;
  in.question = "Where does the offsite move to?";
  in.projection.rows = {"ALL"};
  in.projection.issue = "offsite move";
  for (const auto& c : Candidates()) {
    in.evidence.push_back({c.id, "S1", c.speaker, c.speaker_id, "", "", c.timestamp_ms, c.text});
  }
  auto out = answer->Answer(in, nullptr);
  REQUIRE_OK(out);
  CHECK_FALSE(out->abstained);
  CHECK(out->answer.find("Alice") == 0);
  CHECK(out->answer.find("Porto") != std::string::npos);
  CHECK(out->cited_ids == std::vector<std::string>{"m2"});

  in.question = "What is the capital of Mongolia?";
  in.projection.issue = "capital mongolia";
  out = answer->Answer(in, nullptr);
  REQUIRE_OK(out);
  CHECK(out->abstained);
  CHECK(out->cited_ids.empty());
}

TEST_CASE("offline Answer does not present a group decision as a person's stance",
          "[stages][answer]") {
  auto answer = NewOfflineAnswer();
  AnswerInput in;
  in.question = "What does Bob think about the venue in Porto?";
  in.projection.rows = {"bob"};
  in.projection.issue = "venue porto";
  in.evidence.push_back({"r1", "GROUP", "alice", "alice", "GROUP", "interaction", 2000,
                         "The group decided the venue is in Porto"});
  in.evidence.push_back({"r2", "bob", "bob", "bob", "bob", "profile", 1000,
                         "Bob thinks the Porto venue is too far from the beach"});
  auto out = answer->Answer(in, nullptr);
  REQUIRE_OK(out);
  CHECK(out->cited_ids == std::vector<std::string>{"r2"});
}

}  // namespace
}  // namespace speakermem::retrieval
