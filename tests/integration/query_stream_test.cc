// QueryStream end to end: evidence first, answer deltas, the final response;
// a model's server-sent events relayed as they come; a cancelled call stops
// the model's stream; endpoints that refuse or ignore streaming.
#include <catch2/catch.hpp>
#include <chrono>
#include <thread>

#include "nlohmann/json.hpp"
#include "tests/fake/fake_model_server.h"
#include "tests/integration/test_server.h"

namespace speakermem {
namespace {

using testing::FakeModelServer;
using testing::FakeReply;
using testing::TestServer;

void IngestOffsite(client::Client* c) {
  v1::IngestRequest req;
  req.set_channel("s");
  const char* lines[][2] = {{"Alice", "The offsite is in Lisbon in May"},
                            {"Bob", "I booked the train to Lisbon"},
                            {"Alice", "Change of plan: the offsite moves to Porto"}};
  for (int i = 0; i < 3; ++i) {
    auto* m = req.add_messages();
    m->set_message_id("s-" + std::to_string(i));
    m->set_speaker(lines[i][0]);
    m->set_text(lines[i][1]);
    m->set_timestamp_ms(1700000000000 + i * 60000);
    m->set_session("s1");
  }
  REQUIRE_OK(c->Ingest(req));
}

v1::QueryRequest Question() {
  v1::QueryRequest q;
  q.set_channel("s");
  q.set_question("Where is the offsite?");
  return q;
}

// The events of one streamed query, in order, by kind.
struct Events {
  std::vector<std::string> kinds;
  std::vector<std::string> deltas;
  v1::QueryResponse evidence;
  std::string joined() const {
    std::string s;
    for (const auto& d : deltas) s += d;
    return s;
  }
};

absl::StatusOr<v1::QueryResponse> Stream(client::Client* c, const v1::QueryRequest& q, Events* ev) {
  return c->QueryStream(q, [ev](const v1::QueryEvent& e) {
    if (e.has_evidence()) {
      ev->kinds.push_back("evidence");
      ev->evidence = e.evidence();
    } else if (e.has_delta()) {
      ev->kinds.push_back("delta");
      ev->deltas.push_back(e.delta());
    } else if (e.has_final()) {
      ev->kinds.push_back("final");
    }
    return true;
  });
}

TEST_CASE("QueryStream sends evidence, the offline answer as one delta, then the final",
          "[stream]") {
  TestServer ts;
  IngestOffsite(ts.client());
  Events ev;
  auto r = Stream(ts.client(), Question(), &ev);
  REQUIRE_OK(r);
  CHECK(ev.kinds == std::vector<std::string>{"evidence", "delta", "final"});
  CHECK(ev.evidence.answer().empty());
  CHECK_FALSE(ev.evidence.evidence_pack().empty());
  CHECK(ev.evidence.evidence_size() > 0);
  CHECK(ev.evidence.evidence_pack() == r->evidence_pack());
  CHECK(ev.joined() == r->answer());
  CHECK_FALSE(r->answer().empty());
  bool answered = false;
  for (const auto& t : r->trace()) answered = answered || t.stage() == "answer";
  CHECK(answered);
  // The same as Query.
  auto unary = ts.client()->Query(Question());
  REQUIRE_OK(unary);
  CHECK(unary->answer() == r->answer());

  // Errors end the stream with the canonical code, before any event.
  Events none;
  v1::QueryRequest missing = Question();
  missing.set_channel("nope");
  CHECK(Stream(ts.client(), missing, &none).status().code() == absl::StatusCode::kNotFound);
  v1::QueryRequest blank = Question();
  blank.set_question("  ");
  CHECK(Stream(ts.client(), blank, &none).status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(none.kinds.empty());
}

// A server whose Answer stage is the fake model, answering `answer`.
struct ModelAnswered {
  FakeModelServer fake;
  std::unique_ptr<TestServer> ts;
  const std::string answer = "The offsite moved to Porto \u2014 Alice said so on day 3.";

  ModelAnswered() {
    std::string url = fake.base_url();
    ts = std::make_unique<TestServer>([url](server::ServerConfig* c) {
      REQUIRE_OK(c->models.SetOverride("answer", "provider", "openai"));
      REQUIRE_OK(c->models.SetOverride("answer", "base_url", url));
      REQUIRE_OK(c->models.SetOverride("answer", "max_retries", "0"));
    });
    IngestOffsite(ts->client());
  }

  FakeReply Reply(int piece, int delay_ms = 0) const {
    nlohmann::json content = {{"answer", answer}, {"abstain", false}, {"cited", {"s-2"}}};
    FakeReply r{200, FakeModelServer::ChatBody(content.dump())};
    r.stream_piece = static_cast<size_t>(piece);
    r.stream_delay_ms = delay_ms;
    return r;
  }
};

TEST_CASE("QueryStream relays the model's streamed answer piece by piece", "[stream][model]") {
  ModelAnswered m;
  // 5-byte pieces 20 ms apart: each is relayed before the next arrives
  // (pieces that arrive while a write is in flight go out as one delta).
  m.fake.Enqueue("answer", m.Reply(5, 20));
  Events ev;
  auto r = Stream(m.ts->client(), Question(), &ev);
  REQUIRE_OK(r);
  CHECK(r->answer() == m.answer);
  CHECK(ev.joined() == m.answer);
  CHECK(ev.deltas.size() >= 4);
  CHECK(ev.kinds.front() == "evidence");
  CHECK(ev.kinds.back() == "final");
  REQUIRE(r->cited_ids_size() == 1);
  CHECK(r->cited_ids(0) == "s-2");
  // The request asked for a stream with usage, and the usage was read.
  auto reqs = m.fake.requests();
  REQUIRE(reqs.size() == 1);
  auto body = nlohmann::json::parse(reqs[0].body);
  CHECK(body.value("stream", false));
  CHECK(body["stream_options"].value("include_usage", false));
  CHECK(m.fake.streams_done() == 1);
  for (const auto& t : r->trace()) {
    if (t.stage() == "answer") CHECK(t.tokens_in() == 11);  // ChatBody's usage
  }
  // A unary Query of the same server does not stream.
  m.fake.Enqueue("answer", m.Reply(5));
  auto unary = m.ts->client()->Query(Question());
  REQUIRE_OK(unary);
  CHECK(unary->answer() == m.answer);
  CHECK_FALSE(nlohmann::json::parse(m.fake.requests().back().body).contains("stream"));
}

TEST_CASE("cancelling a QueryStream stops the model's stream", "[stream][model]") {
  ModelAnswered m;
  m.fake.Enqueue("answer", m.Reply(2, 100));  // about 3 s of events
  int deltas = 0;
  auto start = std::chrono::steady_clock::now();
  auto r = m.ts->client()->QueryStream(Question(), [&deltas](const v1::QueryEvent& e) {
    return !(e.has_delta() && ++deltas == 2);  // stop at the second delta
  });
  CHECK(r.status().code() == absl::StatusCode::kCancelled);
  // The server abandons the model call: the fake sees its stream cut.
  for (int i = 0; i < 100 && m.fake.streams_cut() == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  CHECK(m.fake.streams_cut() == 1);
  CHECK(m.fake.streams_done() == 0);
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(3));
}

TEST_CASE("a model failing mid-stream ends the call with its status after the evidence",
          "[stream][model]") {
  ModelAnswered m;
  FakeReply cut = m.Reply(5, 10);
  // The role event and eight 5-byte pieces ({"abstain":false,"answer":"The
  // offsite m), then the connection closes.
  cut.stream_cut_after = 9;
  m.fake.Enqueue("answer", cut);
  Events ev;
  auto r = Stream(m.ts->client(), Question(), &ev);
  CHECK(r.status().code() == absl::StatusCode::kUnavailable);
  CHECK(r.status().message().find("broke off") != std::string::npos);
  CHECK(r.status().message().find("ended early") != std::string::npos);
  REQUIRE_FALSE(ev.kinds.empty());
  CHECK(ev.kinds.front() == "evidence");
  CHECK(ev.kinds.back() == "delta");  // no final
  CHECK(ev.joined() == "The offsite m");

  // A model failing before any text went out: the offline answer, as Query.
  m.fake.Enqueue("answer", FakeReply{500, "{}"});
  Events fell;
  auto f = Stream(m.ts->client(), Question(), &fell);
  REQUIRE_OK(f);
  CHECK(fell.deltas.size() == 1);
  CHECK(fell.joined() == f->answer());
  bool noted = false;
  for (const auto& t : f->trace()) noted = noted || t.note().rfind("fallback:", 0) == 0;
  CHECK(noted);
}

TEST_CASE("an endpoint that refuses or ignores streaming still answers the stream",
          "[stream][model]") {
  ModelAnswered m;
  // Refuses stream_options (400 naming it), then streams without usage.
  m.fake.Enqueue(
      "answer",
      FakeReply{400, R"({"error":{"message":"Unrecognized request argument: stream_options"}})"});
  m.fake.Enqueue("answer", m.Reply(6));
  Events ev;
  auto r = Stream(m.ts->client(), Question(), &ev);
  REQUIRE_OK(r);
  CHECK(ev.joined() == m.answer);
  auto reqs = m.fake.requests();
  REQUIRE(reqs.size() == 2);
  auto second = nlohmann::json::parse(reqs[1].body);
  CHECK(second.value("stream", false));
  CHECK_FALSE(second.contains("stream_options"));
  // Remembered for the endpoint: the next call does not ask for usage.
  FakeReply ignoring = m.Reply(6);
  ignoring.ignore_stream = true;  // answers one JSON completion
  m.fake.Enqueue("answer", ignoring);
  Events whole;
  auto r2 = Stream(m.ts->client(), Question(), &whole);
  REQUIRE_OK(r2);
  CHECK_FALSE(nlohmann::json::parse(m.fake.requests().back().body).contains("stream_options"));
  CHECK(whole.deltas == std::vector<std::string>{m.answer});
  CHECK(r2->answer() == m.answer);
}

}  // namespace
}  // namespace speakermem
