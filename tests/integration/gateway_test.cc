// The model gateway against a fake OpenAI-compatible server on loopback: the
// real curl path, every fault the fake can inject, attempt counts as the
// fake saw them.
#include <catch2/catch.hpp>
#include <thread>

#include "common/log.h"
#include "eval/judge.h"
#include "llm/metrics.h"
#include "llm/model_client.h"
#include "metrics/prometheus_registry.h"
#include "nlohmann/json.hpp"
#include "retrieval/stages.h"
#include "tests/fake/fake_model_server.h"
#include "tests/test_util.h"

namespace speakermem {
namespace {

using testing::FakeModelServer;
using testing::FakeReply;

llm::EndpointConfig Endpoint(const FakeModelServer& fake) {
  llm::EndpointConfig c;
  c.provider = "openai";
  c.base_url = fake.base_url();
  c.model = "fake-model";
  c.timeout_ms = 5000;
  c.max_retries = 3;
  c.backoff_initial_ms = 1;
  c.backoff_max_ms = 5;
  return c;
}

std::unique_ptr<llm::ModelClient> Client(const llm::EndpointConfig& c,
                                         llm::LlmMetrics* metrics = nullptr,
                                         const std::string& key = "") {
  auto client = llm::NewOpenAiClient(c, metrics, [&](const std::string&) { return key; });
  REQUIRE_OK(client);
  return std::move(*client);
}

llm::ChatRequest Req(const std::string& stage = "answer") {
  return llm::ChatRequest{stage, "system prompt", "user prompt", true};
}

FakeReply Status(int code, std::vector<std::pair<std::string, std::string>> headers = {}) {
  FakeReply r;
  r.status = code;
  r.body = "{\"error\": {\"message\": \"status " + std::to_string(code) + "\"}}";
  r.headers = std::move(headers);
  return r;
}

TEST_CASE("a chat call returns content, usage and sends the stage header", "[gateway]") {
  FakeModelServer fake;
  fake.Enqueue("answer", FakeReply{200, FakeModelServer::ChatBody("{\"answer\": \"x\"}")});
  auto c = Endpoint(fake);
  c.api_key_env = "KEY_VAR";
  auto client = Client(c, nullptr, "k-123");
  auto r = client->Chat(Req());
  REQUIRE_OK(r);
  CHECK(r->text == "{\"answer\": \"x\"}");
  CHECK(r->finish_reason == "stop");
  CHECK_FALSE(r->truncated);
  CHECK(r->usage.tokens_in == 11);
  CHECK(r->usage.tokens_out == 7);
  CHECK_FALSE(r->usage.estimated);
  CHECK(r->attempts == 1);
  auto reqs = fake.requests();
  REQUIRE(reqs.size() == 1);
  CHECK(reqs[0].path == "/v1/chat/completions");
  CHECK(reqs[0].stage == "answer");
  CHECK(reqs[0].headers["authorization"] == "Bearer k-123");
  CHECK(reqs[0].body.find("\"response_format\":{\"type\":\"json_object\"}") != std::string::npos);
  CHECK(reqs[0].body.find("\"model\":\"fake-model\"") != std::string::npos);
}

TEST_CASE("usage is estimated and marked when the endpoint sends none", "[gateway]") {
  FakeModelServer fake;
  fake.Enqueue("", FakeReply{200, FakeModelServer::ChatBody("{\"a\": 1}", "stop", false)});
  auto r = Client(Endpoint(fake))->Chat(Req());
  REQUIRE_OK(r);
  CHECK(r->usage.estimated);
  CHECK(r->usage.tokens_in > 0);
  CHECK(r->usage.tokens_out > 0);
}

TEST_CASE("429 is retried, honouring Retry-After over the backoff", "[gateway][retry]") {
  FakeModelServer fake;
  auto c = Endpoint(fake);
  // A backoff this long would blow the deadline; Retry-After: 0 must win.
  c.backoff_initial_ms = 60000;
  c.backoff_max_ms = 60000;
  fake.Enqueue("", Status(429, {{"Retry-After", "0"}}));
  fake.Enqueue("", FakeReply{200, FakeModelServer::ChatBody("{}")});
  auto r = Client(c)->Chat(Req());
  REQUIRE_OK(r);
  CHECK(r->attempts == 2);
  CHECK(fake.count("") == 2);
}

TEST_CASE("a Retry-After beyond the deadline ends the call at once", "[gateway][retry]") {
  FakeModelServer fake;
  auto c = Endpoint(fake);
  c.timeout_ms = 2000;
  fake.Enqueue("", Status(429, {{"Retry-After", "120"}}));
  auto r = Client(c)->Chat(Req());
  REQUIRE_CODE(r, absl::StatusCode::kDeadlineExceeded);
  CHECK(fake.count("") == 1);
}

TEST_CASE("429s that outlast the retries are RESOURCE_EXHAUSTED", "[gateway][retry]") {
  FakeModelServer fake;
  fake.SetDefault([](const testing::FakeRequest&) { return Status(429); });
  auto c = Endpoint(fake);
  c.max_retries = 2;
  auto r = Client(c)->Chat(Req("select"));
  REQUIRE_CODE(r, absl::StatusCode::kResourceExhausted);
  CHECK(fake.count("select") == 3);
  CHECK(std::string(r.status().message()).find("stage select") != std::string::npos);
}

TEST_CASE("5xx is retried then succeeds, persistent 5xx is UNAVAILABLE", "[gateway][retry]") {
  FakeModelServer fake;
  fake.Enqueue("", Status(500));
  fake.Enqueue("", Status(503));
  auto r = Client(Endpoint(fake))->Chat(Req());
  REQUIRE_OK(r);
  CHECK(r->attempts == 3);
  CHECK(fake.count("") == 3);

  fake.Reset();
  fake.SetDefault([](const testing::FakeRequest&) { return Status(500); });
  auto c = Endpoint(fake);
  c.max_retries = 3;
  auto bad = Client(c)->Chat(Req());
  REQUIRE_CODE(bad, absl::StatusCode::kUnavailable);
  CHECK(fake.count("") == 4);
}

TEST_CASE("400, 401, 403 and 404 are not retried", "[gateway][retry]") {
  struct Case {
    int status;
    absl::StatusCode code;
  };
  for (Case k :
       {Case{400, absl::StatusCode::kInvalidArgument},
        Case{401, absl::StatusCode::kUnauthenticated},
        Case{403, absl::StatusCode::kPermissionDenied}, Case{404, absl::StatusCode::kNotFound}}) {
    INFO(k.status);
    FakeModelServer fake;
    fake.SetDefault([&](const testing::FakeRequest&) { return Status(k.status); });
    auto r = Client(Endpoint(fake))->Chat(Req());
    REQUIRE_CODE(r, k.code);
    CHECK(fake.count("") == 1);
  }
}

TEST_CASE("a dropped connection is retried", "[gateway][retry]") {
  FakeModelServer fake;
  FakeReply drop;
  drop.drop = true;
  fake.Enqueue("", drop);
  auto r = Client(Endpoint(fake))->Chat(Req());
  REQUIRE_OK(r);
  CHECK(r->attempts == 2);
  CHECK(fake.count("") == 2);

  fake.Reset();
  fake.SetDefault([](const testing::FakeRequest&) {
    FakeReply d;
    d.drop = true;
    return d;
  });
  auto c = Endpoint(fake);
  c.max_retries = 1;
  auto bad = Client(c)->Chat(Req());
  REQUIRE_CODE(bad, absl::StatusCode::kUnavailable);
  CHECK(fake.count("") == 2);
}

TEST_CASE("a call that cannot finish within its deadline is DEADLINE_EXCEEDED",
          "[gateway][deadline]") {
  FakeModelServer fake;
  fake.SetDefault([](const testing::FakeRequest&) {
    FakeReply slow{200, FakeModelServer::ChatBody("{}")};
    slow.delay_ms = 1500;
    return slow;
  });
  auto c = Endpoint(fake);
  c.timeout_ms = 300;
  auto r = Client(c)->Chat(Req());
  REQUIRE_CODE(r, absl::StatusCode::kDeadlineExceeded);
  CHECK(fake.count("") == 1);  // no retry past the deadline
}

TEST_CASE("an attempt slower than attempt_timeout_ms is abandoned and retried",
          "[gateway][deadline]") {
  FakeModelServer fake;
  FakeReply slow{200, FakeModelServer::ChatBody("{}")};
  slow.delay_ms = 2000;
  fake.Enqueue("", slow);
  auto c = Endpoint(fake);
  c.timeout_ms = 10000;
  c.attempt_timeout_ms = 200;
  auto r = Client(c)->Chat(Req());
  REQUIRE_OK(r);
  CHECK(r->attempts == 2);
  CHECK(fake.count("") == 2);
}

TEST_CASE("an unreachable endpoint is UNAVAILABLE after the retries", "[gateway]") {
  int dead_port;
  {
    FakeModelServer gone;
    dead_port = gone.port();
  }
  llm::EndpointConfig c;
  c.provider = "openai";
  c.base_url = "http://127.0.0.1:" + std::to_string(dead_port) + "/v1";
  c.max_retries = 2;
  c.backoff_initial_ms = 1;
  c.timeout_ms = 5000;
  auto r = Client(c)->Chat(Req());
  REQUIRE_CODE(r, absl::StatusCode::kUnavailable);
}

TEST_CASE("a reply that is not the API's JSON is an error naming the stage", "[gateway]") {
  FakeModelServer fake;
  fake.Enqueue("", FakeReply{200, "{this is not json"});
  auto r = Client(Endpoint(fake))->Chat(Req("project"));
  REQUIRE_CODE(r, absl::StatusCode::kInternal);
  CHECK(std::string(r.status().message()).find("stage project") != std::string::npos);
  CHECK(fake.count("") == 1);
}

TEST_CASE("the endpoint's rejection of response_format is remembered", "[gateway]") {
  FakeModelServer fake;
  FakeReply reject = Status(400);
  reject.body = "{\"error\": {\"message\": \"response_format is not supported\"}}";
  fake.Enqueue("", reject);
  auto client = Client(Endpoint(fake));
  REQUIRE_OK(client->Chat(Req()));
  REQUIRE_OK(client->Chat(Req()));
  auto reqs = fake.requests();
  REQUIRE(reqs.size() == 3);
  CHECK(reqs[0].body.find("response_format") != std::string::npos);
  CHECK(reqs[1].body.find("response_format") == std::string::npos);
  CHECK(reqs[2].body.find("response_format") == std::string::npos);
}

TEST_CASE("embeddings are batched and returned in input order", "[gateway][embed]") {
  FakeModelServer fake;
  auto c = Endpoint(fake);
  c.embed_batch = 2;
  auto r = Client(c)->Embed("embed", {"a", "bb", "ccc", "dddd", "eeeee"});
  REQUIRE_OK(r);
  CHECK(fake.count("embed") == 3);
  REQUIRE(r->vectors.size() == 5);
  for (const auto& v : r->vectors) CHECK(v.size() == 8);
  CHECK(r->vectors[0] != r->vectors[1]);
  CHECK(r->usage.tokens_in == 15);

  fake.Enqueue("embed", FakeReply{200, FakeModelServer::EmbeddingsBody({{1, 2}})});
  auto wrong = Client(c)->Embed("embed", {"x", "y"});
  REQUIRE_CODE(wrong, absl::StatusCode::kInternal);
}

TEST_CASE("the concurrency limit holds under parallel callers", "[gateway]") {
  FakeModelServer fake;
  fake.SetDefault([](const testing::FakeRequest&) {
    FakeReply r{200, FakeModelServer::ChatBody("{}")};
    r.delay_ms = 30;
    return r;
  });
  auto c = Endpoint(fake);
  c.max_concurrency = 2;
  auto client = Client(c);
  std::vector<std::thread> threads;
  std::atomic<int> ok{0};
  for (int i = 0; i < 6; ++i) {
    threads.emplace_back([&] { ok += client->Chat(Req()).ok(); });
  }
  for (auto& t : threads) t.join();
  CHECK(ok == 6);
  CHECK(fake.max_in_flight() <= 2);
}

TEST_CASE("the API key never appears in errors, logs or metrics", "[gateway][secret]") {
  const std::string key = "sk-very-secret-0123456789";
  FakeModelServer fake;
  FakeReply echo = Status(401);
  echo.body = "{\"error\": {\"message\": \"Incorrect API key provided: " + key + "\"}}";
  fake.Enqueue("", echo);
  fake.Enqueue("", Status(500));
  fake.Enqueue("", FakeReply{200, "garbage " + key});
  std::vector<std::string> lines;
  SetLogSink([&](absl::string_view l) { lines.emplace_back(l); });
  SetLogLevel(LogLevel::kDebug);
  auto registry = metrics::NewPrometheusRegistry();
  llm::LlmMetrics metrics(registry.get());
  auto c = Endpoint(fake);
  c.api_key_env = "SECRET_VAR";
  auto client = Client(c, &metrics, key);
  auto r1 = client->Chat(Req());
  auto r2 = client->Chat(Req());
  SetLogLevel(LogLevel::kInfo);
  SetLogSink(nullptr);
  REQUIRE_CODE(r1, absl::StatusCode::kUnauthenticated);
  REQUIRE_CODE(r2, absl::StatusCode::kInternal);
  // The key went over the wire (it must), and nowhere else.
  CHECK(fake.requests()[0].headers["authorization"] == "Bearer " + key);
  CHECK(std::string(r1.status().message()).find(key) == std::string::npos);
  CHECK(std::string(r1.status().message()).find("[redacted]") != std::string::npos);
  CHECK(std::string(r2.status().message()).find(key) == std::string::npos);
  for (const auto& l : lines) CHECK(l.find(key) == std::string::npos);
  CHECK_FALSE(lines.empty());  // the retry was logged
  std::string exposition = registry->Exposition();
  CHECK(exposition.find(key) == std::string::npos);
  CHECK(exposition.find("speakermem_model_calls_total") != std::string::npos);
}

TEST_CASE("a missing API key variable is FAILED_PRECONDITION", "[gateway][secret]") {
  llm::EndpointConfig c;
  c.provider = "openai";
  c.api_key_env = "SURELY_UNSET_VAR_FOR_TEST";
  auto client = llm::NewOpenAiClient(c, nullptr, [](const std::string&) { return ""; });
  REQUIRE_CODE(client, absl::StatusCode::kFailedPrecondition);
  CHECK(std::string(client.status().message()).find("SURELY_UNSET_VAR_FOR_TEST") !=
        std::string::npos);
}

// ------------------------------------------------ model-backed query stages

llm::ModelsConfig AllOnFake(const FakeModelServer& fake, int max_retries = 0) {
  llm::ModelsConfig m;
  m.defaults = Endpoint(fake);
  m.defaults.max_retries = max_retries;
  return m;
}

std::vector<retrieval::RosterMember> Roster() { return {{"alice", {"Alice"}}, {"bob", {"Bob"}}}; }

TEST_CASE("model Project parses prose-wrapped JSON and maps names to ids", "[gateway][stages]") {
  FakeModelServer fake;
  fake.Enqueue("project", FakeReply{200, FakeModelServer::ChatBody(
                                             "Here is the plan:\n```json\n{\"rows\": [\"Alice\", "
                                             "\"GROUP\", \"Mallory\"], \"issue\": \"venue\", "
                                             "\"tense\": \"full\", \"source\": \"alice\", "
                                             "\"owner\": \"Bob\",}\n```\nDone.")});
  auto stages = retrieval::BuildQueryStages(AllOnFake(fake), nullptr, [](auto&) { return ""; });
  REQUIRE_OK(stages);
  retrieval::StageCall call;
  auto p = stages->project->Project({"what does alice think of bob's venue?", "", Roster()}, &call);
  REQUIRE_OK(p);
  CHECK(p->rows == std::vector<std::string>{"alice", "GROUP"});  // unknown name dropped
  CHECK(p->tense == retrieval::Tense::kFull);
  CHECK(p->source == "alice");
  CHECK(p->owner == "bob");
  CHECK(call.model_calls == 1);
  CHECK(call.usage.tokens_in == 11);
  CHECK_FALSE(call.fell_back);
}

TEST_CASE("a truncated reply is reported as such, not parsed", "[gateway][stages]") {
  FakeModelServer fake;
  fake.Enqueue("project",
               FakeReply{200, FakeModelServer::ChatBody("{\"rows\": [\"ALL\"]}", "length")});
  auto project = retrieval::NewModelProject(Client(Endpoint(fake)));
  auto p = project->Project({"q", "", Roster()}, nullptr);
  REQUIRE_CODE(p, absl::StatusCode::kOutOfRange);
  CHECK(std::string(p.status().message()).find("stage project") != std::string::npos);
  CHECK(std::string(p.status().message()).find("finish_reason=length") != std::string::npos);
}

TEST_CASE("each query stage falls back to its safe default when the model fails",
          "[gateway][stages][fallback]") {
  FakeModelServer fake;
  fake.SetDefault([](const testing::FakeRequest&) { return Status(500); });
  auto registry = metrics::NewPrometheusRegistry();
  llm::LlmMetrics metrics(registry.get());
  auto stages = retrieval::BuildQueryStages(AllOnFake(fake), &metrics, [](auto&) { return ""; });
  REQUIRE_OK(stages);

  retrieval::StageCall pc;
  auto p = stages->project->Project({"What does Bob like?", "", Roster()}, &pc);
  REQUIRE_OK(p);
  CHECK(pc.fell_back);
  CHECK(p->rows == std::vector<std::string>{"ALL"});
  CHECK(p->issue == "What does Bob like?");

  std::vector<retrieval::Candidate> cands = {{"m1", "Bob", "bob", "I like surfing", 1, 1.0},
                                             {"m2", "Alice", "alice", "Porto it is", 2, 0.5}};
  retrieval::StageCall sc;
  auto sel = stages->select->Select({"What does Bob like?", *p, cands, 2}, &sc);
  REQUIRE_OK(sel);
  CHECK(sc.fell_back);
  CHECK(sel->ranking.size() == 2);

  retrieval::StageCall uc;
  auto suff = stages->sufficiency->Judge({"What does Bob like?", cands}, &uc);
  REQUIRE_OK(suff);
  CHECK(uc.fell_back);

  retrieval::StageCall ac;
  retrieval::AnswerInput ain;
  ain.question = "What does Bob like?";
  ain.projection = *p;
  ain.evidence.push_back({"m1", "S1", "Bob", "bob", "", "", 1, "I like surfing"});
  auto ans = stages->answer->Answer(ain, &ac);
  REQUIRE_OK(ans);
  CHECK(ac.fell_back);
  CHECK(ans->answer.find("surfing") != std::string::npos);
  CHECK(ac.note.find("fallback") == 0);

  std::string exposition = registry->Exposition();
  for (const char* stage : {"project", "select", "sufficiency", "answer"}) {
    INFO(stage);
    CHECK(exposition.find(std::string("speakermem_stage_fallbacks_total{stage=\"") + stage +
                          "\"} 1") != std::string::npos);
  }
  // Embeddings never fall back.
  retrieval::StageCall ec;
  REQUIRE_CODE(stages->embed->Embed({"x"}, &ec), absl::StatusCode::kUnavailable);
}

TEST_CASE("model Select, Sufficiency and Answer parse their replies", "[gateway][stages]") {
  FakeModelServer fake;
  fake.Enqueue("select", FakeReply{200, FakeModelServer::ChatBody(
                                            "{\"ranking\": [1, 7, 1], \"anchors\": [1, 0, 2]}")});
  fake.Enqueue("sufficiency",
               FakeReply{200, FakeModelServer::ChatBody("{\"sufficient\": false, \"search_term\": "
                                                        "\"surf\"}")});
  fake.Enqueue("answer", FakeReply{200, FakeModelServer::ChatBody(
                                            "{\"answer\": \"Bob likes surfing.\", \"abstain\": "
                                            "false, \"cited\": [\"m1\"]}")});
  auto stages = retrieval::BuildQueryStages(AllOnFake(fake), nullptr, [](auto&) { return ""; });
  REQUIRE_OK(stages);
  std::vector<retrieval::Candidate> cands = {{"m1", "Bob", "bob", "I like surfing", 1, 1.0},
                                             {"m2", "Alice", "alice", "Porto it is", 2, 0.5}};
  retrieval::Projection p;
  p.rows = {"bob"};
  auto sel = stages->select->Select({"q", p, cands, 1}, nullptr);
  REQUIRE_OK(sel);
  CHECK(sel->ranking == std::vector<size_t>{1, 0});  // duplicates and bad ids dropped
  CHECK(sel->anchors == std::vector<size_t>{1});     // capped at max_anchors
  auto suff = stages->sufficiency->Judge({"q", cands}, nullptr);
  REQUIRE_OK(suff);
  CHECK_FALSE(suff->sufficient);
  CHECK(suff->search_term == "surf");
  retrieval::AnswerInput ain;
  ain.question = "q";
  auto ans = stages->answer->Answer(ain, nullptr);
  REQUIRE_OK(ans);
  CHECK(ans->answer == "Bob likes surfing.");
  CHECK(ans->cited_ids == std::vector<std::string>{"m1"});
}

TEST_CASE("model Embed normalises vectors and learns the dimension", "[gateway][stages]") {
  FakeModelServer fake;
  auto embed = retrieval::NewModelEmbed(Client(Endpoint(fake)));
  CHECK(embed->dimension() == 0);
  retrieval::StageCall call;
  auto v = embed->Embed({"hello", "world"}, &call);
  REQUIRE_OK(v);
  CHECK(embed->dimension() == 8);
  double norm = 0;
  for (float x : (*v)[0]) norm += x * x;
  CHECK(norm == Approx(1.0).epsilon(1e-5));
  CHECK(call.model_calls == 1);
}

}  // namespace
}  // namespace speakermem

// --------------------------------------------------------------- judge

namespace speakermem {
namespace {

TEST_CASE("the Judge stage gives verdicts and partial credit, and is absent when offline",
          "[gateway][judge]") {
  testing::FakeModelServer fake;
  fake.Enqueue("judge",
               testing::FakeReply{200, testing::FakeModelServer::ChatBody(
                                           "{\"verdict\": \"yes\", \"reason\": \"same\"}")});
  fake.Enqueue("judge", testing::FakeReply{200, testing::FakeModelServer::ChatBody(
                                                    "{\"score\": 0.75, \"reason\": \"most\"}")});
  fake.Enqueue("judge", testing::FakeReply{
                            200, testing::FakeModelServer::ChatBody("{\"verdict\": \"maybe\"}")});
  llm::ModelsConfig m;
  m.defaults = Endpoint(fake);
  auto judge = eval::BuildJudge(m, nullptr, [](auto&) { return ""; });
  REQUIRE_OK(judge);
  REQUIRE(*judge != nullptr);
  llm::StageCall call;
  auto v = (*judge)->Judge({"Where?", "Porto", "In Porto.", false}, &call);
  REQUIRE_OK(v);
  CHECK(v->correct);
  CHECK(v->score == 1.0);
  auto p = (*judge)->Judge({"Why?", "long", "part", true}, &call);
  REQUIRE_OK(p);
  CHECK(p->score == 0.75);
  REQUIRE_CODE((*judge)->Judge({"q", "g", "a", false}, &call), absl::StatusCode::kInvalidArgument);
  CHECK(call.model_calls == 3);

  llm::ModelsConfig none;
  auto absent = eval::BuildJudge(none, nullptr);
  REQUIRE_OK(absent);
  CHECK(*absent == nullptr);
}

}  // namespace
}  // namespace speakermem

namespace speakermem {
namespace {

// The user and system prompts of the last `stage` request the fake saw.
std::pair<std::string, std::string> LastPrompts(const FakeModelServer& fake,
                                                const std::string& stage) {
  std::pair<std::string, std::string> out;
  for (const auto& r : fake.requests()) {
    if (r.stage != stage) continue;
    const nlohmann::json body = nlohmann::json::parse(r.body);
    out = {body["messages"][0]["content"].get<std::string>(),
           body["messages"][1]["content"].get<std::string>()};
  }
  return out;
}

TEST_CASE(
    "Select shows clipped previews, a day only where it changes, and no anchors to "
    "choose in the re-select",
    "[gateway][stages][select]") {
  FakeModelServer fake;
  fake.SetDefault([](const testing::FakeRequest&) {
    return FakeReply{200, FakeModelServer::ChatBody(R"({"ranking": [2, 0], "anchors": [2]})")};
  });
  auto select = retrieval::NewModelSelect(Client(Endpoint(fake)));
  const int64_t day = 86'400'000, t0 = 1'683'540'000'000;  // 2023-05-08 10:00 UTC
  const std::string long_text =
      "We settled on Porto for the offsite because the flights are cheap and the venue has a "
      "garden for the barbecue";
  std::vector<retrieval::Candidate> cands = {
      {"m1", "Bob", "bob", long_text, t0, 1.0},
      {"m2", "Alice", "alice", "Porto it is", t0 + 60'000, 0.5},
      {"m3", "Bob", "bob", "I like surfing", t0 + day, 0.2}};
  retrieval::SelectInput in{"Where is the offsite?", {}, cands, 2};
  in.max_chars = 40;
  retrieval::StageCall call;
  auto sel = select->Select(in, &call);
  REQUIRE_OK(sel);
  CHECK(sel->ranking == std::vector<size_t>{2, 0, 1});  // left out: after, in recall order
  CHECK(sel->anchors == std::vector<size_t>{2});
  auto [system, user] = LastPrompts(fake, "select");
  CHECK(system.find("at most 2 numbers") != std::string::npos);
  CHECK(user.find("[0] 2023-05-08 Bob: We settled on Porto for the offsite...\n") !=
        std::string::npos);
  CHECK(user.find("[1] Alice: Porto it is\n") != std::string::npos);  // same day: no date
  CHECK(user.find("[2] 2023-05-09 Bob: I like surfing\n") != std::string::npos);

  // The re-select: per-candidate previews, nothing to anchor.
  in.max_anchors = 0;
  in.max_chars = 0;
  in.max_chars_each = {20};
  sel = select->Select(in, &call);
  REQUIRE_OK(sel);
  CHECK(sel->anchors.empty());
  std::tie(system, user) = LastPrompts(fake, "select");
  CHECK(system.find("at most") == std::string::npos);
  CHECK(system.find("\"anchors\": []") != std::string::npos);
  CHECK(user.find("[0] 2023-05-08 Bob: We settled on Porto...\n") != std::string::npos);
  CHECK(user.find("[1] 2023-05-08 10:01 Alice: Porto it is\n") != std::string::npos);  // whole
}

}  // namespace
}  // namespace speakermem
