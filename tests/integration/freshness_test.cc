// Fresh answers in a live channel: the unwritten tail (messages after the
// Writer cursor) is evidence newer than every System 2 record; the response
// reports the derivation lag; a query can ask to wait for the Writer.
#include <catch2/catch.hpp>

#include "datasets/datasets.h"
#include "nlohmann/json.hpp"
#include "server/convert.h"
#include "tests/fake/fake_model_server.h"
#include "tests/integration/test_server.h"

namespace speakermem {
namespace {

using testing::FakeModelServer;
using testing::FakeReply;
using testing::FlushWait;
using testing::TestServer;

// The demo conversation: session s1 decides Lisbon, session s2 moves the
// offsite to Porto (s2-05).
std::vector<v1::DialogueMessage> Session(const std::string& session) {
  auto convs = datasets::LoadFile(SPEAKERMEM_SOURCE_DIR "/examples/team_chat.jsonl",
                                  datasets::Format::kJsonl, "team-offsite");
  REQUIRE_OK(convs);
  std::vector<v1::DialogueMessage> out;
  for (const auto& c : *convs) {
    for (const auto& m : c.messages) {
      if (m.session != session) continue;
      v1::DialogueMessage w;
      server::ToProto(m, "", &w);  // the loader's message, as a client sends it
      out.push_back(std::move(w));
    }
  }
  REQUIRE_FALSE(out.empty());
  return out;
}

void Ingest(client::Client* c, const std::vector<v1::DialogueMessage>& msgs) {
  v1::IngestRequest req;
  req.set_channel("team-offsite");
  for (const auto& m : msgs) *req.add_messages() = m;
  REQUIRE_OK(c->Ingest(req));
}

// s1 ingested and derived; s2 ingested and left to the idle flush, which
// does not come during the test.
void DecisionThenChange(TestServer* ts) {
  Ingest(ts->client(), Session("s1"));
  FlushWait(ts->client(), "team-offsite");
  Ingest(ts->client(), Session("s2"));
}

v1::QueryRequest Where() {
  v1::QueryRequest q;
  q.set_channel("team-offsite");
  q.set_question("Where is the offsite now?");
  return q;
}

TEST_CASE("a change not yet derived outranks the record of the old decision", "[freshness]") {
  TestServer ts([](server::ServerConfig* c) { c->memory.writer.idle_flush_ms = 600000; });
  DecisionThenChange(&ts);
  auto r = ts.client()->Query(Where());
  REQUIRE_OK(r);
  INFO(r->answer());
  INFO(r->evidence_pack());
  // Memory still holds the Lisbon decision...
  bool lisbon_record = false;
  for (const auto& row : r->rows()) {
    for (const auto& rec : row.records()) {
      lisbon_record = lisbon_record || rec.content().find("Lisbon") != std::string::npos;
    }
  }
  CHECK(lisbon_record);
  // ...but the answer follows the newer message, says so, and cites it.
  CHECK(r->answer().find("Porto") != std::string::npos);
  CHECK(r->answer().find("newer than memory") != std::string::npos);
  REQUIRE(r->cited_ids_size() >= 1);
  CHECK(r->cited_ids(0) == "s2-05");
  // The lag: 13 messages derived, the 12 of s2 not, spanning 22 minutes.
  CHECK(r->freshness().newest_seq() == 25);
  CHECK(r->freshness().derived_through_seq() == 13);
  CHECK(r->freshness().lag_messages() == 12);
  CHECK(r->freshness().lag_ms() == 22 * 60 * 1000);
  CHECK_FALSE(r->freshness().waited());
  bool marked = false;
  for (const auto& e : r->evidence()) {
    CHECK(e.newer_than_memory() == (e.message().seq() > 13));
    marked = marked || (e.message().message_id() == "s2-05" && e.newer_than_memory());
  }
  CHECK(marked);
  // Retrieve reports the lag too.
  auto rr = ts.client()->Retrieve(Where());
  REQUIRE_OK(rr);
  CHECK(rr->freshness().lag_messages() == 12);
}

TEST_CASE("strict freshness waits for the Writer before answering", "[freshness]") {
  TestServer ts([](server::ServerConfig* c) { c->memory.writer.idle_flush_ms = 600000; });
  DecisionThenChange(&ts);
  v1::QueryRequest q = Where();
  q.set_fresh(true);
  q.set_fresh_timeout_ms(60000);
  auto r = ts.client()->Query(q);
  REQUIRE_OK(r);
  CHECK(r->freshness().waited());
  CHECK(r->freshness().lag_messages() == 0);
  CHECK(r->freshness().derived_through_seq() == 25);
  for (const auto& e : r->evidence()) CHECK_FALSE(e.newer_than_memory());
  INFO(r->answer());
  INFO(r->evidence_pack());
  CHECK(r->answer().find("Porto") != std::string::npos);
}

TEST_CASE("strict freshness gives up at its timeout with DEADLINE_EXCEEDED", "[freshness]") {
  // A Writer that never answers in time: every call hangs past the wait.
  FakeModelServer fake;
  fake.SetDefault([](const testing::FakeRequest&) {
    FakeReply r;
    r.body = FakeModelServer::ChatBody("{\"actions\": []}");
    r.delay_ms = 3000;
    return r;
  });
  std::string url = fake.base_url();
  TestServer ts([url](server::ServerConfig* c) {
    c->memory.writer.idle_flush_ms = 600000;
    REQUIRE_OK(c->models.SetOverride("writer", "provider", "openai"));
    REQUIRE_OK(c->models.SetOverride("writer", "base_url", url));
  });
  Ingest(ts.client(), Session("s1"));
  v1::QueryRequest q = Where();
  q.set_fresh(true);
  q.set_fresh_timeout_ms(200);
  auto r = ts.client()->Query(q);
  REQUIRE_CODE(r.status(), absl::StatusCode::kDeadlineExceeded);
}

TEST_CASE("the model-backed answerer sees the unwritten tail marked newer than memory",
          "[freshness]") {
  FakeModelServer fake;
  std::string url = fake.base_url();
  TestServer ts([url](server::ServerConfig* c) {
    c->memory.writer.idle_flush_ms = 600000;
    REQUIRE_OK(c->models.SetOverride("answer", "provider", "openai"));
    REQUIRE_OK(c->models.SetOverride("answer", "base_url", url));
  });
  DecisionThenChange(&ts);
  fake.Enqueue("answer",
               FakeReply{200, FakeModelServer::ChatBody(
                                  R"js({"answer": "Porto (newer than memory)", "abstain": false,
                                        "cited": ["s2-05"]})js")});
  auto r = ts.client()->Query(Where());
  REQUIRE_OK(r);
  CHECK(r->answer() == "Porto (newer than memory)");
  CHECK(r->freshness().lag_messages() == 12);
  std::string prompt;
  for (const auto& req : fake.requests()) {
    if (req.stage == "answer") prompt = req.body;
  }
  REQUIRE_FALSE(prompt.empty());
  auto body = nlohmann::json::parse(prompt);
  std::string system, user;
  for (const auto& m : body["messages"]) {
    (m["role"] == "system" ? system : user) += m["content"].get<std::string>();
  }
  CHECK(system.find("NEWER THAN MEMORY") != std::string::npos);
  auto line_of = [&](const std::string& id) {
    size_t at = user.find("[" + id + "]");
    return at == std::string::npos ? std::string() : user.substr(at, user.find('\n', at) - at);
  };
  CHECK(line_of("s2-05").find("(NEWER THAN MEMORY)") != std::string::npos);
  REQUIRE_FALSE(line_of("s1-11").empty());
  CHECK(line_of("s1-11").find("NEWER") == std::string::npos);  // derived: not marked
}

}  // namespace
}  // namespace speakermem
