// Writer rewards on hand-computed examples (weights: validity json 0.25,
// schema 0.35, duplicate 0.25, stop 0.15; penalties json 0.25, action 0.15,
// count 0.10, length 0.10; memory 0.80 SL + 0.20 chain).
#include "writer/rewards.h"

#include <catch2/catch.hpp>

#include "tests/test_util.h"

namespace speakermem::eval {

using writer::ScoreWriterActions;
using writer::WriterRewardInput;
namespace {

storage::Message Msg(uint64_t seq, const std::string& speaker, const std::string& text) {
  storage::Message m;
  m.seq = seq;
  m.message_id = "m" + std::to_string(seq);
  m.speaker = speaker;
  m.speaker_id = speaker;
  m.text = text;
  m.timestamp_ms = 1700000000000 + static_cast<int64_t>(seq) * 1000;
  m.session = "s1";
  return m;
}

storage::Record Rec(const std::string& id, const std::string& owner, const std::string& content) {
  storage::Record r;
  r.record_id = id;
  r.owner = owner;
  r.source = owner;
  r.layer = "core";
  r.utype = "fact";
  r.content = content;
  return r;
}

WriterRewardInput Base() {
  WriterRewardInput in;
  in.segment = {Msg(4, "Alice", "I now drink coffee every morning"),
                Msg(5, "Bob", "I moved to Lisbon last week"), Msg(6, "Alice", "Nice, Bob!")};
  in.pre_state = {Rec("r000000000001", "Alice", "Alice drinks tea"),
                  Rec("r000000000002", "Bob", "Bob lives in Porto")};
  return in;
}

const char* kAddBob =
    R"({"action":"ADD","owner":"Bob","source":"Bob","layer":"per_speaker_core","utype":"fact","content":"Bob lives in Lisbon"})";
const char* kUpdateAlice =
    R"({"action":"UPDATE","entry_id":"r000000000001","content":"Alice drinks coffee every morning"})";

std::string Out(std::vector<std::string> actions) {
  std::string s = R"({"actions":[)";
  for (size_t i = 0; i < actions.size(); ++i) s += (i ? "," : "") + actions[i];
  return s + "]}";
}

TEST_CASE("a clean, novel action list earns full validity and no penalty", "[rewards]") {
  WriterRewardInput in = Base();
  in.output = Out({kUpdateAlice, kAddBob});
  auto r = ScoreWriterActions(in);
  REQUIRE_OK(r);
  CHECK(r->json_valid);
  CHECK(r->attempted == 2);
  CHECK(r->r_schema == 1.0);
  CHECK(r->r_dup == 1.0);
  CHECK(r->r_stop == 1.0);
  CHECK(r->validity == Approx(1.0));
  CHECK(r->penalty == 0.0);
  CHECK(r->rejections.empty());
  // Post-state: the tea record superseded, two new records.
  CHECK(r->post_state.size() == 4);
  CHECK(r->post_state[0].superseded_by == r->post_state[2].record_id);
  CHECK(r->post_state[2].supersedes == std::vector<std::string>{"r000000000001"});
  CHECK(r->post_state[3].record_id == "r000000000004");
}

TEST_CASE("invalid JSON scores zero validity and the json penalty", "[rewards]") {
  WriterRewardInput in = Base();
  in.output = "Sure! I would add that Bob moved.";
  in.length_limit_reached = true;
  auto r = ScoreWriterActions(in);
  REQUIRE_OK(r);
  CHECK_FALSE(r->json_valid);
  CHECK(r->validity == 0.0);
  CHECK(r->z_json);
  CHECK(r->z_len);
  CHECK(r->penalty == Approx(0.25 + 0.10));
}

TEST_CASE("a repeated action costs the duplicate and stop components", "[rewards]") {
  WriterRewardInput in = Base();
  in.output = Out({kAddBob, kAddBob});
  auto r = ScoreWriterActions(in);
  REQUIRE_OK(r);
  CHECK(r->unique_keys == 1);
  CHECK(r->r_dup == Approx(0.5));
  CHECK(r->r_schema == 1.0);  // a duplicate is well formed
  CHECK(r->r_stop == 0.0);    // it did not stop after its last novel action
  CHECK(r->validity == Approx(0.25 + 0.35 + 0.25 * 0.5));
  CHECK(r->penalty == 0.0);
  REQUIRE(r->rejections.size() == 1);
  CHECK(r->rejections[0].reason == "duplicate_in_batch");
}

TEST_CASE("a schema error costs the schema component and the action penalty", "[rewards]") {
  WriterRewardInput in = Base();
  in.output = Out(
      {R"({"action":"ADD","owner":"Zed","source":"Zed","layer":"per_speaker_core","content":"Zed is new"})",
       kAddBob});
  auto r = ScoreWriterActions(in);
  REQUIRE_OK(r);
  CHECK(r->schema_valid == 1);
  CHECK(r->r_schema == Approx(0.5));
  CHECK(r->r_stop == 1.0);
  CHECK(r->validity == Approx(0.25 + 0.35 * 0.5 + 0.25 + 0.15));
  CHECK(r->z_act);
  CHECK(r->penalty == Approx(0.15));
}

TEST_CASE("an unchanged UPDATE or an ADD already in the state is not novel", "[rewards]") {
  WriterRewardInput in = Base();
  in.output = Out(
      {kAddBob, R"({"action":"UPDATE","entry_id":"r000000000001","content":"Alice drinks tea."})"});
  auto r = ScoreWriterActions(in);
  REQUIRE_OK(r);
  CHECK(r->r_stop == 0.0);
  CHECK(r->r_schema == 1.0);
  in.output = Out(
      {kAddBob,
       R"({"action":"ADD","owner":"Bob","source":"Bob","layer":"core","content":"Bob lives in Porto"})"});
  r = ScoreWriterActions(in);
  REQUIRE_OK(r);
  CHECK(r->r_stop == 0.0);
  // A single NOOP is novel by definition.
  in.output = R"({"actions":[{"action":"NOOP"}]})";
  r = ScoreWriterActions(in);
  REQUIRE_OK(r);
  CHECK(r->validity == Approx(1.0));
}

TEST_CASE("more actions than the budget set the count penalty", "[rewards]") {
  WriterRewardInput in = Base();  // 3 messages: budget max(8, 6) = 8
  std::vector<std::string> many;
  for (int i = 0; i < 9; ++i) {
    many.push_back(
        R"({"action":"ADD","owner":"Bob","source":"Bob","layer":"core","content":"Bob fact )" +
        std::to_string(i) + R"("})");
  }
  in.output = Out(many);
  auto r = ScoreWriterActions(in);
  REQUIRE_OK(r);
  CHECK(r->action_budget == 8);
  CHECK(r->z_count);
  CHECK(r->penalty == Approx(0.10));
  REQUIRE(r->rejections.size() == 1);
  CHECK(r->rejections[0].reason == "over_budget");
}

TEST_CASE("the memory reward compares the post-state with a reference", "[rewards]") {
  WriterRewardInput in = Base();
  in.output = Out({kUpdateAlice, kAddBob});
  // The reference made the same two changes.
  auto ref = ScoreWriterActions(in);
  REQUIRE_OK(ref);
  in.reference_post_state = ref->post_state;
  auto same = ScoreWriterActions(in);
  REQUIRE_OK(same);
  CHECK(same->has_memory);
  CHECK(same->sl.score == Approx(1.0));
  CHECK(same->chain == Approx(1.0));
  CHECK(same->memory_reward == Approx(1.0));
  // Only the ADD, not the UPDATE: no chain edge (chain 0), and Alice's
  // bucket holds tea instead of coffee.
  in.output = Out({kAddBob});
  auto partial = ScoreWriterActions(in);
  REQUIRE_OK(partial);
  CHECK(partial->chain == 0.0);
  CHECK(partial->sl.per_owner.at("Bob") == Approx(1.0));
  CHECK(partial->sl.per_owner.at("Alice") < 1.0);
  CHECK(partial->memory_reward == Approx(0.80 * partial->sl.score));
  REQUIRE_CODE(ScoreWriterActions(WriterRewardInput{}), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace speakermem::eval
