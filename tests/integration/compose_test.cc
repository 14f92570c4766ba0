// The query path as the paper defines it: the evidence pack the answerer
// sees (display names, rows, explicit "(none)", GROUP cells tagged, a
// full-tense chain in order), returned verbatim, and the no_s2 ablation.
#include <catch2/catch.hpp>

#include "nlohmann/json.hpp"
#include "tests/fake/fake_model_server.h"
#include "tests/integration/test_server.h"
#include "tests/integration/writer_script.h"

namespace speakermem {
namespace {

using testing::FakeModelServer;
using testing::FakeReply;
using testing::FlushWait;
using testing::TestServer;

using testing::Actions;
using testing::Add;

// Speakers with opaque ids, as SocialMem's p_... ids: the pack must show
// their display names.
void Say(client::Client* c, const std::vector<std::array<std::string, 3>>& lines, int offset,
         const std::string& session) {
  v1::IngestRequest req;
  req.set_channel("team");
  for (size_t i = 0; i < lines.size(); ++i) {
    auto* m = req.add_messages();
    m->set_message_id("m" + std::to_string(offset + i));
    m->set_speaker(lines[i][0]);
    m->set_speaker_id(lines[i][1]);
    m->set_text(lines[i][2]);
    m->set_timestamp_ms(1700000000000 + (offset + static_cast<int>(i)) * 60000);
    m->set_session(session);
  }
  REQUIRE_OK(c->Ingest(req));
}

struct Team {
  FakeModelServer fake;
  std::unique_ptr<TestServer> ts;

  Team() {
    std::string url = fake.base_url();
    ts = std::make_unique<TestServer>([url](server::ServerConfig* c) {
      for (const char* stage : {"writer", "answer"}) {
        REQUIRE_OK(c->models.SetOverride(stage, "provider", "openai"));
        REQUIRE_OK(c->models.SetOverride(stage, "base_url", url));
      }
      c->memory.writer.idle_flush_ms = 0;
    });
    fake.Enqueue("writer", FakeReply{200, Actions({
                                              Add("p_alice", "p_alice", "per_speaker_core",
                                                  "Alice prefers the beach venue in Lisbon"),
                                              Add("p_bob", "p_bob", "per_speaker_core",
                                                  "Bob thinks the venue is too expensive"),
                                              Add("GROUP", "p_alice", "group_interaction",
                                                  "The group decided the venue is in Lisbon"),
                                          })});
    Say(ts->client(),
        {{{"Alice", "p_alice", "I prefer the beach venue in Lisbon"}},
         {{"Bob", "p_bob", "The venue is too expensive for me"}},
         {{"Carol", "p_carol", "My cat knitted a scarf yesterday"}},
         {{"Alice", "p_alice", "Decision: the venue is in Lisbon"}}},
        0, "s1");
    FlushWait(ts->client(), "team");
    std::string lisbon;
    v1::ListRecordsRequest lr;
    lr.set_channel("team");
    auto recs = ts->client()->ListRecords(lr);
    REQUIRE_OK(recs);
    for (const auto& r : recs->records()) {
      if (r.content().find("beach venue") != std::string::npos) lisbon = r.record_id();
    }
    REQUIRE_FALSE(lisbon.empty());
    fake.Enqueue(
        "writer",
        FakeReply{200, Actions({{{"action", "UPDATE"},
                                 {"entry_id", lisbon},
                                 {"content", "Alice now prefers the mountain venue in Porto"}}})});
    Say(ts->client(), {{{"Alice", "p_alice", "Actually I prefer the mountain venue in Porto now"}}},
        10, "s2");
    FlushWait(ts->client(), "team");
  }
};

std::string AnswerPrompt(const FakeModelServer& fake) {
  std::string user;
  for (const auto& req : fake.requests()) {
    if (req.stage != "answer") continue;
    user.clear();
    const nlohmann::json body = nlohmann::json::parse(req.body);
    for (const auto& m : body["messages"]) {
      if (m["role"] == "user") user += m["content"].get<std::string>();
    }
  }
  return user;
}

TEST_CASE("the answerer sees the composed pack: names, (none), GROUP, a chain in order",
          "[compose]") {
  Team t;
  t.fake.Enqueue("answer", FakeReply{200, FakeModelServer::ChatBody(
                                              R"js({"answer": "Alice moved to Porto.",
                                                    "abstain": false, "cited": []})js")});
  v1::QueryRequest q;
  q.set_channel("team");
  q.set_question("How did the group and everyone change their view of the venue?");
  auto r = t.ts->client()->Query(q);
  REQUIRE_OK(r);
  CHECK(r->projection().tense() == v1::FULL);
  const std::string user = AnswerPrompt(t.fake);
  INFO(user);
  INFO("answer: " << r->answer() << " stages asked: " << t.fake.count("answer"));
  CHECK(r->answer() == "Alice moved to Porto.");
  const std::string& pack = r->evidence_pack();
  REQUIRE_FALSE(pack.empty());
  // The response carries exactly the text the answerer saw.
  CHECK(user.find(pack) != std::string::npos);
  // The members by name, never by id.
  CHECK(user.find("Members: ") != std::string::npos);
  CHECK(user.find("p_alice") == std::string::npos);
  // Display names, never roster ids.
  CHECK(pack.find("p_alice") == std::string::npos);
  CHECK(pack.find("p_carol") == std::string::npos);
  CHECK(pack.find("\nAlice:\n") != std::string::npos);
  // Carol said nothing about the venue: an explicit empty row.
  CHECK(pack.find("\nCarol: (none)\n") != std::string::npos);
  // The group's decision, tagged as a group conclusion, proposed by Alice.
  const size_t group = pack.find("\nThe group:\n");
  REQUIRE(group != std::string::npos);
  const size_t decided = pack.find("The group decided the venue is in Lisbon");
  REQUIRE(decided != std::string::npos);
  const std::string group_line =
      pack.substr(pack.rfind('\n', decided) + 1, decided - pack.rfind('\n', decided) - 1);
  CHECK(group_line.find("GROUP CONCLUSION") != std::string::npos);
  CHECK(group_line.find("proposed by Alice") != std::string::npos);
  // Full tense: Alice's chain, the superseded Lisbon node before the
  // current Porto one.
  const size_t old_node = pack.find("Alice prefers the beach venue in Lisbon");
  const size_t new_node = pack.find("Alice now prefers the mountain venue in Porto");
  REQUIRE(old_node != std::string::npos);
  REQUIRE(new_node != std::string::npos);
  CHECK(old_node < new_node);
  CHECK(pack.substr(pack.rfind('\n', old_node), old_node - pack.rfind('\n', old_node))
            .find("history (superseded)") != std::string::npos);
  CHECK(pack.substr(pack.rfind('\n', new_node), new_node - pack.rfind('\n', new_node))
            .find(", current") != std::string::npos);
  // The system prompt teaches the format.
  std::string system;
  for (const auto& req : t.fake.requests()) {
    if (req.stage != "answer") continue;
    const nlohmann::json body = nlohmann::json::parse(req.body);
    for (const auto& m : body["messages"]) {
      if (m["role"] == "system") system = m["content"].get<std::string>();
    }
  }
  CHECK(system.find("(none)") != std::string::npos);
  CHECK(system.find("GROUP CONCLUSION") != std::string::npos);
  CHECK(system.find("I don't know: the evidence does not answer that.") != std::string::npos);
}

TEST_CASE("no_s2 returns no rows and the same System 1 evidence", "[compose]") {
  Team t;
  v1::QueryRequest q;
  q.set_channel("team");
  q.set_question("Which venue does everyone prefer?");
  auto with = t.ts->client()->Retrieve(q);
  REQUIRE_OK(with);
  CHECK(with->rows_size() > 0);
  q.set_no_s2(true);
  auto without = t.ts->client()->Retrieve(q);
  REQUIRE_OK(without);
  CHECK(without->rows_size() == 0);
  REQUIRE(without->evidence_size() == with->evidence_size());
  for (int i = 0; i < with->evidence_size(); ++i) {
    CHECK(without->evidence(i).message().message_id() == with->evidence(i).message().message_id());
  }
  CHECK(with->evidence_pack().find("Memory, by row:") != std::string::npos);
  CHECK(without->evidence_pack().find("Memory, by row:") == std::string::npos);
  CHECK(without->evidence_pack().find("Conversation excerpts") != std::string::npos);
}

}  // namespace
}  // namespace speakermem
