// The model-backed path against the quirks of real small models and their
// servers (tests/fake/quirks.h): nothing a reply held is lost, no stage
// falls back for a form it can read, and every coercion is counted.
#include "tests/fake/quirks.h"

#include <catch2/catch.hpp>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "llm/metrics.h"
#include "metrics/prometheus_registry.h"
#include "nlohmann/json.hpp"
#include "retrieval/stages.h"
#include "tests/fake/fake_model_server.h"
#include "tests/fake/standard_reply.h"
#include "tests/integration/test_server.h"
#include "tests/integration/writer_script.h"

namespace speakermem {
namespace {

using testing::FakeModelServer;
using testing::FakeRequest;
using testing::Quirk;
using testing::QuirkSpec;

// The value of the sample of `name` whose labels include every `labels`
// entry ("stage=\"select\""); 0 when there is none.
double Sample(const std::string& exposition, const std::string& name,
              const std::vector<std::string>& labels) {
  std::istringstream lines(exposition);
  std::string line;
  double total = 0;
  while (std::getline(lines, line)) {
    if (line.rfind(name + "{", 0) != 0 && line.rfind(name + " ", 0) != 0) continue;
    bool all = true;
    for (const auto& l : labels) all = all && absl::StrContains(line, l);
    if (all) total += std::stod(line.substr(line.rfind(' ') + 1));
  }
  return total;
}

// What a clean, compliant model answers each query stage.
std::string CleanQueryReply(const FakeRequest& req) {
  if (req.stage == "project") {
    return R"({"rows": ["Bob"], "issue": "hobby", "tense": "head", "source": "", "owner": ""})";
  }
  if (req.stage == "select") return R"({"ranking": [1, 0], "anchors": [1]})";
  if (req.stage == "sufficiency") return R"({"sufficient": true, "search_term": ""})";
  return R"({"answer": "Bob likes surfing.", "abstain": false, "cited": ["m1"]})";
}

llm::ModelsConfig AllOn(const FakeModelServer& fake) {
  llm::ModelsConfig m;
  m.defaults.provider = "openai";
  m.defaults.base_url = fake.base_url();
  m.defaults.max_retries = 0;
  return m;
}

struct QueryRun {
  retrieval::Projection projection;
  retrieval::SelectOutput select;
  retrieval::SufficiencyOutput sufficiency;
  retrieval::AnswerOutput answer;
  std::vector<retrieval::StageCall> calls;  // project, select, sufficiency, answer
  std::string exposition;
};

// Every query stage once, through the quirky endpoint.
QueryRun RunQueryStages(FakeModelServer* fake, std::map<std::string, QuirkSpec> quirks,
                        int rounds = 1) {
  fake->SetDefault(testing::QuirkyHandler(CleanQueryReply, std::move(quirks)));
  auto registry = metrics::NewPrometheusRegistry();
  llm::LlmMetrics metrics(registry.get());
  auto stages = retrieval::BuildQueryStages(AllOn(*fake), &metrics, [](auto&) { return ""; });
  REQUIRE_OK(stages);
  QueryRun run;
  std::vector<retrieval::RosterMember> roster = {{"alice", {"Alice"}}, {"bob", {"Bob"}}};
  std::vector<retrieval::Candidate> cands = {{"m1", "Alice", "alice", "Porto it is", 1, 1.0},
                                             {"m2", "Bob", "bob", "I like surfing", 2, 0.5}};
  for (int r = 0; r < rounds; ++r) {
    run.calls.assign(4, retrieval::StageCall());
    auto p = stages->project->Project({"What does Bob like?", "", roster}, &run.calls[0]);
    REQUIRE_OK(p);
    run.projection = *p;
    auto s = stages->select->Select({"What does Bob like?", *p, cands, 2}, &run.calls[1]);
    REQUIRE_OK(s);
    run.select = *s;
    auto j = stages->sufficiency->Judge({"What does Bob like?", cands}, &run.calls[2]);
    REQUIRE_OK(j);
    run.sufficiency = *j;
    retrieval::AnswerInput in;
    in.question = "What does Bob like?";
    in.projection = *p;
    in.evidence.push_back({"m2", "S1", "Bob", "bob", "", "", 2, "I like surfing"});
    auto a = stages->answer->Answer(in, &run.calls[3]);
    REQUIRE_OK(a);
    run.answer = *a;
  }
  run.exposition = registry->Exposition();
  return run;
}

// The clean replies were read in full, by the model, not by a fallback.
// (`whole_projection` false: a bare array carries Project's rows only, so
// the issue is the question.)
void CheckCleanResult(const QueryRun& run, bool whole_projection = true) {
  for (const auto& c : run.calls) {
    INFO(c.note);
    CHECK_FALSE(c.fell_back);
  }
  CHECK(run.projection.rows == std::vector<std::string>{"bob"});
  CHECK(run.projection.issue == (whole_projection ? "hobby" : "What does Bob like?"));
  REQUIRE(run.select.ranking.size() == 2);
  CHECK(run.select.ranking[0] == 1);
  CHECK(run.sufficiency.sufficient);
  CHECK(run.answer.answer == "Bob likes surfing.");
  CHECK_FALSE(run.answer.abstained);
  CHECK(run.answer.cited_ids == std::vector<std::string>{"m1"});
  CHECK(Sample(run.exposition, "speakermem_stage_fallbacks_total", {}) == 0);
}

TEST_CASE("query stages read a bare top-level array as their reply", "[quirks][stages]") {
  FakeModelServer fake;
  QueryRun run = RunQueryStages(&fake, {{"", {Quirk::kTopLevelArray}}});
  CheckCleanResult(run, false);
  // Project and Select: the schema's array property; Sufficiency and Answer:
  // their object inside a one-element array.
  CHECK(Sample(run.exposition, "speakermem_model_coercions_total",
               {"stage=\"project\"", "kind=\"top_level_array\""}) == 1);
  CHECK(Sample(run.exposition, "speakermem_model_coercions_total",
               {"stage=\"select\"", "kind=\"top_level_array\""}) == 1);
  CHECK(Sample(run.exposition, "speakermem_model_coercions_total",
               {"stage=\"answer\"", "kind=\"array_wrapped_object\""}) == 1);
  CHECK(Sample(run.exposition, "speakermem_model_coercions_total",
               {"stage=\"sufficiency\"", "kind=\"array_wrapped_object\""}) == 1);
  CHECK(absl::StrContains(run.calls[1].note, "coerced: top_level_array"));
}

TEST_CASE("prose citing [0] before the JSON does not become the reply", "[quirks][stages]") {
  FakeModelServer fake;
  QueryRun run = RunQueryStages(&fake, {{"", {Quirk::kProseBeforeJson}}});
  CheckCleanResult(run);
  CHECK(Sample(run.exposition, "speakermem_model_coercions_total",
               {"stage=\"select\"", "kind=\"skipped_non_fitting_json\""}) == 1);
}

TEST_CASE("string booleans and string rankings are read and counted", "[quirks][stages]") {
  FakeModelServer fake;
  QueryRun run = RunQueryStages(&fake, {{"", {Quirk::kStringScalars}}});
  CheckCleanResult(run);
  CHECK(run.select.anchors == std::vector<size_t>{1});
  CHECK(Sample(run.exposition, "speakermem_model_coercions_total",
               {"stage=\"sufficiency\"", "kind=\"string_boolean\""}) == 1);
  CHECK(Sample(run.exposition, "speakermem_model_coercions_total",
               {"stage=\"answer\"", "kind=\"string_boolean\""}) == 1);
  // Two ranking items and one anchor.
  CHECK(Sample(run.exposition, "speakermem_model_coercions_total",
               {"stage=\"select\"", "kind=\"string_index\""}) == 3);
  CHECK(absl::StrContains(run.calls[2].note, "string_boolean"));
}

TEST_CASE("a 422 refusal of json_schema steps down to json_object and is remembered",
          "[quirks][stages]") {
  FakeModelServer fake;
  QueryRun run = RunQueryStages(&fake, {{"", {Quirk::kRefuseJsonSchema}}}, 2);
  CheckCleanResult(run);
  // Per stage: json_schema refused, json_object answered; the second round
  // asks json_object at once.
  std::vector<std::string> formats;
  for (const auto& r : fake.requests()) {
    if (r.stage != "select") continue;
    nlohmann::json body = nlohmann::json::parse(r.body);
    formats.push_back(body["response_format"]["type"].get<std::string>());
  }
  CHECK(formats == std::vector<std::string>{"json_schema", "json_object", "json_object"});
  CHECK(Sample(run.exposition, "speakermem_model_format_step_downs_total",
               {"stage=\"select\"", "to=\"json_object\""}) == 1);
  CHECK(Sample(run.exposition, "speakermem_stage_fallbacks_total", {}) == 0);
}

// ------------------------------------------------------------------ Writer

// A clean Writer: one ADD per message of the prompt to the speaker's core;
// a message starting "Actually" UPDATEs the first record shown (E1).
std::string CleanWriterReply(const FakeRequest& req) {
  nlohmann::json actions = nlohmann::json::array();
  for (const auto& m : testing::WriterPromptMessages(req)) {
    if (absl::StartsWith(m.text, "Actually")) {
      actions.push_back({{"action", "UPDATE"},
                         {"owner", ""},
                         {"source", ""},
                         {"layer", ""},
                         {"utype", ""},
                         {"content", m.speaker + " says: " + m.text},
                         {"entry_id", "E1"}});
      continue;
    }
    actions.push_back({{"action", "ADD"},
                       {"owner", m.speaker},
                       {"source", m.speaker},
                       {"layer", "per_speaker_core"},
                       {"utype", "fact"},
                       {"content", m.speaker + " says: " + m.text},
                       {"entry_id", ""}});
  }
  return nlohmann::json{{"actions", actions}}.dump();
}

void IngestTexts(client::Client* c, const std::string& channel,
                 const std::vector<std::pair<std::string, std::string>>& speaker_text,
                 int first = 0) {
  v1::IngestRequest req;
  req.set_channel(channel);
  for (size_t i = 0; i < speaker_text.size(); ++i) {
    auto* m = req.add_messages();
    m->set_message_id(absl::StrCat(channel, "-", first + static_cast<int>(i)));
    m->set_speaker(speaker_text[i].first);
    m->set_text(speaker_text[i].second);
    m->set_timestamp_ms(1700000000000 + (first + static_cast<int64_t>(i)) * 1000);
    m->set_session("s1");
  }
  REQUIRE_OK(c->Ingest(req));
}

std::vector<std::pair<std::string, std::string>> TenStatements() {
  std::vector<std::pair<std::string, std::string>> out;
  const char* topics[] = {"sailing", "chess",  "baking", "cycling", "jazz",
                          "pottery", "hiking", "poetry", "karate",  "gardening"};
  for (int i = 0; i < 10; ++i) {
    out.push_back({i % 2 ? "Bob" : "Alice", absl::StrCat("I have taken up ", topics[i])});
  }
  return out;
}

TEST_CASE(
    "a Writer reply cut at max_tokens keeps its complete actions and derives the rest "
    "by splitting",
    "[quirks][writer-service]") {
  FakeModelServer fake;
  // The first call (all ten messages) is cut after 3 complete actions of 10.
  fake.SetDefault(testing::QuirkyHandler(CleanWriterReply,
                                         {{"writer", QuirkSpec{Quirk::kCutAtMaxTokens, 1, 3}}}));
  testing::TestServer ts(testing::WriterOn(fake, 10), /*metrics=*/true);
  IngestTexts(ts.client(), "cut", TenStatements());
  testing::FlushWait(ts.client(), "cut");
  auto records = testing::AllRecords(ts.client(), "cut");
  CHECK(records.size() == 10);  // the 3 kept and the 7 the cut lost; none twice
  std::set<std::string> topics;
  for (const auto& r : records) topics.insert(r.content());
  CHECK(topics.size() == 10);
  CHECK(fake.count("writer") == 3);  // the cut call, then two halves
  std::string m = testing::HttpGetMetrics(ts.server()->metrics_port());
  CHECK(Sample(m, "speakermem_model_calls_total", {"stage=\"writer\"", "outcome=\"truncated\""}) ==
        1);
  CHECK(Sample(m, "speakermem_model_coercions_total",
               {"stage=\"writer\"", "kind=\"salvaged_cut_reply\""}) == 1);
  CHECK(Sample(m, "speakermem_model_coercions_total",
               {"stage=\"writer\"", "kind=\"split_segment\""}) == 1);
  CHECK(Sample(m, "speakermem_writer_parked_segments", {}) == 0);
  CHECK(Sample(m, "speakermem_writer_segments_total", {"outcome=\"applied\""}) == 1);
}

TEST_CASE(
    "a one-message segment whose reply is cut with nothing complete is parked, not "
    "retried forever",
    "[quirks][writer-service]") {
  FakeModelServer fake;
  fake.SetDefault(testing::QuirkyHandler(CleanWriterReply,
                                         {{"writer", QuirkSpec{Quirk::kCutAtMaxTokens, -1, 0}}}));
  testing::TestServer ts(testing::WriterOn(fake, 10), true);
  IngestTexts(ts.client(), "one", {{"Alice", "I have taken up sailing"}});
  testing::FlushWait(ts.client(), "one");
  CHECK(testing::AllRecords(ts.client(), "one").empty());
  std::string m = testing::HttpGetMetrics(ts.server()->metrics_port());
  CHECK(Sample(m, "speakermem_writer_parked_segments", {}) == 1);
  CHECK(fake.count("writer") == 2);  // max_attempts
}

TEST_CASE("UPDATE entry ids spelled differently reach their record", "[quirks][writer-service]") {
  FakeModelServer fake;
  fake.SetDefault(
      testing::QuirkyHandler(CleanWriterReply, {{"writer", QuirkSpec{Quirk::kEntryIdSpelling}}}));
  testing::TestServer ts(testing::WriterOn(fake, 1), true);
  // One message a segment: the second and third revise the first's record,
  // spelled "1" and then "[E1]".
  IngestTexts(ts.client(), "ids", {{"Alice", "I have taken up sailing"}});
  testing::FlushWait(ts.client(), "ids");
  IngestTexts(ts.client(), "ids", {{"Alice", "Actually it is rowing now"}}, 1);
  testing::FlushWait(ts.client(), "ids");
  IngestTexts(ts.client(), "ids", {{"Alice", "Actually it is kayaking now"}}, 2);
  testing::FlushWait(ts.client(), "ids");
  v1::ListRecordsRequest req;
  req.set_channel("ids");
  req.set_include_superseded(true);
  auto all = ts.client()->ListRecords(req);
  REQUIRE_OK(all);
  REQUIRE(all->records_size() == 3);
  int heads = 0;
  for (const auto& r : all->records()) heads += r.superseded_by().empty();
  CHECK(heads == 1);
  std::string m = testing::HttpGetMetrics(ts.server()->metrics_port());
  CHECK(Sample(m, "speakermem_writer_rejected_actions_total", {"reason=\"missing_entry\""}) == 0);
  CHECK(Sample(m, "speakermem_model_coercions_total",
               {"stage=\"writer\"", "kind=\"entry_id_spelling\""}) == 2);
}

TEST_CASE("an ADD without source takes the speaker of its message", "[quirks][writer-service]") {
  FakeModelServer fake;
  fake.SetDefault(
      testing::QuirkyHandler(CleanWriterReply, {{"writer", QuirkSpec{Quirk::kAddWithoutSource}}}));
  testing::TestServer ts(testing::WriterOn(fake, 10), true);
  IngestTexts(ts.client(), "src", TenStatements());
  testing::FlushWait(ts.client(), "src");
  auto records = testing::AllRecords(ts.client(), "src");
  REQUIRE(records.size() == 10);
  for (const auto& r : records) {
    INFO(r.content());
    CHECK(r.source() == r.owner());
  }
  std::string m = testing::HttpGetMetrics(ts.server()->metrics_port());
  CHECK(Sample(m, "speakermem_writer_rejected_actions_total", {"reason=\"unknown_source\""}) == 0);
  CHECK(Sample(m, "speakermem_model_coercions_total",
               {"stage=\"writer\"", "kind=\"source_from_message\""}) == 10);
}

// Every call answered like a clean model, `delay_ms` late.
void AnswerLate(FakeModelServer* fake, int delay_ms) {
  fake->SetDefault([delay_ms](const FakeRequest& req) {
    testing::FakeReply r = testing::StandardReply(req);
    r.delay_ms = delay_ms;
    return r;
  });
}

// The embed stage on the endpoint at `url`, `batch` inputs per request.
testing::TestServer::Configure EmbedOn(const std::string& url, int batch) {
  return [url, batch](server::ServerConfig* c) {
    REQUIRE_OK(c->models.SetOverride("embed", "provider", "openai"));
    REQUIRE_OK(c->models.SetOverride("embed", "base_url", url));
    REQUIRE_OK(c->models.SetOverride("embed", "embed_batch", std::to_string(batch)));
  };
}

TEST_CASE("Flush with wait_embeddings returns once everything is embedded", "[quirks][flush]") {
  FakeModelServer fake;
  AnswerLate(&fake, 100);  // a slow embedding endpoint
  testing::TestServer ts(EmbedOn(fake.base_url(), 4), true);
  IngestTexts(ts.client(), "emb", TenStatements());
  v1::FlushRequest f;
  f.set_channel("emb");
  f.set_wait(true);
  f.set_wait_embeddings(true);
  f.set_timeout_ms(60000);
  REQUIRE_OK(ts.client()->Flush(f));
  std::string m = testing::HttpGetMetrics(ts.server()->metrics_port());
  CHECK(Sample(m, "speakermem_embed_pending_messages", {}) == 0);
  size_t inputs = 0;
  for (const auto& r : fake.requests()) {
    if (r.stage == "embed") inputs += nlohmann::json::parse(r.body)["input"].size();
  }
  CHECK(inputs >= 10);  // every message (and record) embedded before the call returned
}

TEST_CASE("each record is embedded once while the embedder catches up", "[quirks][embed]") {
  // A slow embedding endpoint: the Writer has written every record before
  // the embedder's first record batch ends, and the snapshot warmed after
  // that batch must leave the queued rest to the embedder.
  FakeModelServer fake;
  AnswerLate(&fake, 30);  // a slow embedding endpoint
  // Made-up words, none shared between messages, and no limit on a
  // person's records per segment, so that the Writer joins nothing and
  // writes a record per message.
  testing::TestServer ts(
      [&](server::ServerConfig* c) {
        EmbedOn(fake.base_url(), 16)(c);
        c->memory.writer.offline.max_core_per_segment = 0;
      },
      true);
  const char* syllables[] = {"ka", "lo", "mi", "ru", "te", "zo", "pa", "ne", "vu", "shi"};
  auto word = [&](int n) {
    return absl::StrCat(syllables[n % 10], syllables[(n / 10) % 10], syllables[(n / 100) % 10],
                        "n");
  };
  std::vector<std::pair<std::string, std::string>> texts;
  for (int i = 0; i < 300; ++i) {
    texts.push_back(
        {i % 2 ? "Bob" : "Alice",
         absl::StrCat("My ", word(3 * i), " is ", word(3 * i + 1), " near ", word(3 * i + 2))});
  }
  IngestTexts(ts.client(), "once", texts);
  v1::FlushRequest f;
  f.set_channel("once");
  f.set_wait(true);
  f.set_wait_embeddings(true);
  f.set_timeout_ms(120000);
  REQUIRE_OK(ts.client()->Flush(f));
  std::map<std::string, int> times;  // input text -> embeddings requested
  for (const auto& r : fake.requests()) {
    if (r.stage != "embed") continue;
    const nlohmann::json body = nlohmann::json::parse(r.body);
    for (const auto& x : body["input"]) ++times[x.get<std::string>()];
  }
  std::vector<v1::DerivedRecord> records = testing::AllRecords(ts.client(), "once");
  REQUIRE(records.size() > 64);  // more than one embedder batch
  size_t twice = 0;
  for (const auto& r : records) {
    CHECK(times[r.content()] >= 1);
    twice += times[r.content()] > 1;
  }
  CHECK(twice == 0);
}

}  // namespace
}  // namespace speakermem
