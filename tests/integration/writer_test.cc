// System 2 end to end: the real server, its Writer pool and store, with the
// offline Writer or a fake model endpoint as the Writer.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <set>
#include <thread>

#include "datasets/datasets.h"
#include "nlohmann/json.hpp"
#include "tests/fake/fake_model_server.h"
#include "tests/integration/test_server.h"
#include "tests/integration/writer_script.h"

namespace speakermem {
namespace {

using testing::AllRecords;
using testing::FakeModelServer;
using testing::FakeReply;
using testing::FlushWait;
using testing::TestServer;
using testing::WriterOn;

v1::IngestRequest Batch(const std::string& channel, int n, int offset = 0,
                        const std::string& session = "s1") {
  v1::IngestRequest req;
  req.set_channel(channel);
  const char* speakers[] = {"Alice", "Bob", "Carol"};
  for (int i = offset; i < offset + n; ++i) {
    auto* m = req.add_messages();
    m->set_message_id(channel + "-" + std::to_string(i));
    m->set_speaker(speakers[i % 3]);
    m->set_text("I think topic number " + std::to_string(i) + " matters to me");
    m->set_timestamp_ms(1700000000000 + i * 1000);
    m->set_session(session);
    m->set_turn(i);
  }
  return req;
}

// The Writer of these tests: one ADD to the speaker's core per message line
// of the prompt, deterministic.
FakeReply EchoWriter(const testing::FakeRequest& req) {
  nlohmann::json actions = nlohmann::json::array();
  for (const auto& m : testing::WriterPromptMessages(req)) {
    actions.push_back({{"action", "ADD"},
                       {"owner", m.speaker},
                       {"source", m.speaker},
                       {"layer", "per_speaker_core"},
                       {"utype", "fact"},
                       {"content", m.text}});
  }
  return FakeReply{200, FakeModelServer::ChatBody(nlohmann::json{{"actions", actions}}.dump())};
}

TEST_CASE("Writer calls equal ceil(n/25) for a single-session stream", "[writer-service]") {
  FakeModelServer fake;
  fake.SetDefault(EchoWriter);
  TestServer ts(WriterOn(fake));
  constexpr int kN = 113;  // ceil(113/25) = 5
  REQUIRE_OK(ts.client()->Ingest(Batch("w", 60)));
  REQUIRE_OK(ts.client()->Ingest(Batch("w", 53, 60)));
  // Four full windows are written without being asked.
  for (int i = 0; i < 3000 && fake.count("writer") < 4; ++i) {  // up to 30 s (SCHED_IDLE)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  CHECK(fake.count("writer") == 4);
  FlushWait(ts.client(), "w");
  CHECK(fake.count("writer") == (kN + 24) / 25);
  auto records = AllRecords(ts.client(), "w");
  CHECK(records.size() == kN);
  // A second flush with nothing pending calls nothing.
  FlushWait(ts.client(), "w");
  CHECK(fake.count("writer") == 5);
}

TEST_CASE("a session change closes the Writer segment", "[writer-service]") {
  FakeModelServer fake;
  fake.SetDefault(EchoWriter);
  TestServer ts(WriterOn(fake));
  REQUIRE_OK(ts.client()->Ingest(Batch("s", 7, 0, "morning")));
  REQUIRE_OK(ts.client()->Ingest(Batch("s", 3, 7, "evening")));
  for (int i = 0; i < 3000 && fake.count("writer") < 1; ++i) {  // up to 30 s (SCHED_IDLE)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  CHECK(fake.count("writer") == 1);  // the morning session, without a flush
  FlushWait(ts.client(), "s");
  CHECK(fake.count("writer") == 2);
  CHECK(AllRecords(ts.client(), "s").size() == 10);
}

// A Writer reply of valid actions among an unknown owner, a bad layer, a
// missing UPDATE target, a duplicate, and ten more than the budget allows.
nlohmann::json MixedActions() {
  nlohmann::json actions = nlohmann::json::array({
      {{"action", "ADD"},
       {"owner", "Alice"},
       {"source", "Alice"},
       {"layer", "per_speaker_profile"},
       {"utype", "stance"},
       {"content", "Alice prefers tea"}},
      {{"action", "ADD"},
       {"owner", "Mallory"},
       {"source", "Alice"},
       {"layer", "per_speaker_core"},
       {"utype", "fact"},
       {"content", "Mallory is new"}},
      {{"action", "ADD"},
       {"owner", "Bob"},
       {"source", "Bob"},
       {"layer", "per_speaker_feelings"},
       {"utype", "fact"},
       {"content", "Bob is fine"}},
      {{"action", "UPDATE"}, {"entry_id", "r000000009999"}, {"content", "nothing"}},
      {{"action", "ADD"},
       {"owner", "Alice"},
       {"source", "Alice"},
       {"layer", "per_speaker_profile"},
       {"utype", "stance"},
       {"content", "Alice prefers tea."}},
      {{"action", "ADD"},
       {"owner", "GROUP"},
       {"source", "Bob"},
       {"layer", "group_interaction"},
       {"utype", "decision"},
       {"content", "The group meets on Friday"}},
  });
  for (int i = 0; i < 10; ++i) {
    actions.push_back({{"action", "ADD"},
                       {"owner", "Bob"},
                       {"source", "Bob"},
                       {"layer", "per_speaker_core"},
                       {"utype", "fact"},
                       {"content", "Bob fact number " + std::to_string(i)}});
  }
  return actions;
}

TEST_CASE("a Writer reply mixing valid and invalid actions applies only the valid ones",
          "[writer-service][validate]") {
  FakeModelServer fake;
  const nlohmann::json actions = MixedActions();
  fake.Enqueue("writer",
               FakeReply{200, FakeModelServer::ChatBody(
                                  "Sure:\n" + nlohmann::json{{"actions", actions}}.dump())});
  // The next segment's replies are broken JSON until it is parked.
  fake.SetDefault([](const testing::FakeRequest&) {
    return FakeReply{200, FakeModelServer::ChatBody("{\"actions\": [ {\"action\": \"ADD\", ")};
  });
  TestServer ts(WriterOn(fake, 2), /*metrics=*/true);
  REQUIRE_OK(ts.client()->Ingest(Batch("v", 2)));
  FlushWait(ts.client(), "v");
  auto records = AllRecords(ts.client(), "v");
  std::set<std::string> contents;
  for (const auto& r : records) contents.insert(r.content());
  // 1 (Alice) + 1 (GROUP) + 6 Bob facts: max(8, 2 x 2 messages) = 8 actions.
  CHECK(records.size() == 8);
  CHECK(contents.count("Alice prefers tea"));
  CHECK(contents.count("The group meets on Friday"));
  CHECK_FALSE(contents.count("Mallory is new"));
  CHECK_FALSE(contents.count("Bob is fine"));

  REQUIRE_OK(ts.client()->Ingest(Batch("v", 2, 2)));
  FlushWait(ts.client(), "v");
  v1::ListParkedRequest pr;
  pr.set_channel("v");
  auto parked = ts.client()->ListParked(pr);
  REQUIRE_OK(parked);
  REQUIRE(parked->segments_size() == 1);
  CHECK(parked->segments(0).first_seq() == 3);
  CHECK(parked->segments(0).last_seq() == 4);
  CHECK(parked->segments(0).attempts() == 2);
  CHECK(parked->segments(0).reason().find("invalid_json") == 0);

  std::string metrics = testing::HttpGetMetrics(ts.server()->metrics_port());
  INFO(metrics);
  for (const char* line :
       {"speakermem_writer_rejected_actions_total{reason=\"unknown_owner\"} 1",
        "speakermem_writer_rejected_actions_total{reason=\"bad_layer\"} 1",
        "speakermem_writer_rejected_actions_total{reason=\"missing_entry\"} 1",
        "speakermem_writer_rejected_actions_total{reason=\"duplicate_in_batch\"} 1",
        "speakermem_writer_rejected_actions_total{reason=\"over_budget\"} 4",
        "speakermem_writer_rejected_actions_total{reason=\"invalid_json\"} 2",
        "speakermem_writer_segments_total{outcome=\"parked\"} 1",
        "speakermem_writer_parked_segments 1"}) {
    CHECK(metrics.find(line) != std::string::npos);
  }
}

// Reads ../shared/data; a failure under CI=true when the data is missing.
std::string SocialMemDir() {
  std::string base = testing::SharedDataDir();
  std::string dir = base + "/socialmem/networks";
  if (base.empty() || !std::filesystem::exists(dir)) {
    if (testing::InCi()) FAIL("shared data missing under CI: " << dir);
    WARN("shared data not found; skipping");
    return "";
  }
  return dir;
}

TEST_CASE("offline Writer on the SocialMem networks: layers, scope, provenance, chains",
          "[writer-service][data]") {
  std::string dir = SocialMemDir();
  if (dir.empty()) return;
  TestServer ts([](server::ServerConfig* c) { c->memory.writer.idle_flush_ms = 0; });
  std::map<std::string, int> layers;
  int chains = 0, records_total = 0;
  std::string chain_channel, chain_head;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    auto convs = datasets::LoadFile(entry.path().string(), datasets::Format::kSocialMem, "");
    REQUIRE_OK(convs);
    const auto& conv = (*convs)[0];
    std::vector<v1::DialogueMessage> msgs;
    std::set<std::string> ids;
    for (const auto& m : conv.messages) {
      v1::DialogueMessage w;
      w.set_message_id(m.message_id);
      w.set_speaker(m.speaker);
      w.set_speaker_id(m.speaker_id);
      w.set_text(m.text);
      w.set_timestamp_ms(m.timestamp_ms);
      w.set_session(m.session);
      w.set_turn(m.turn);
      msgs.push_back(w);
      ids.insert(m.message_id);
    }
    REQUIRE_OK(ts.client()->IngestStream(conv.channel, msgs, {}, nullptr));
    FlushWait(ts.client(), conv.channel);
    for (const auto& r : AllRecords(ts.client(), conv.channel)) {
      ++records_total;
      INFO(conv.channel << " " << r.record_id() << " " << r.content());
      ++layers[v1::Layer_Name(r.layer())];
      if (r.layer() == v1::INTERACTION || r.layer() == v1::INSIGHT) {
        CHECK(r.scope() == v1::GROUP);
        CHECK(r.owner() == "GROUP");
      } else {
        CHECK(r.scope() == v1::PERSON);
        CHECK(r.owner() != "GROUP");
      }
      CHECK_FALSE(r.from_ids().empty());
      for (const auto& f : r.from_ids()) CHECK(ids.count(f));
      if (!r.supersedes().empty()) {
        ++chains;
        chain_channel = conv.channel;
        chain_head = r.record_id();
      }
    }
  }
  CHECK(records_total > 100);
  for (const char* l : {"CORE", "PROFILE", "INTERACTION", "INSIGHT"}) {
    INFO(l);
    CHECK(layers[l] > 0);
  }
  REQUIRE(chains > 0);
  // The full view shows the old and the new state.
  v1::GetRecordRequest gr;
  gr.set_channel(chain_channel);
  gr.set_record_id(chain_head);
  auto rec = ts.client()->GetRecord(gr);
  REQUIRE_OK(rec);
  REQUIRE(rec->chain_size() >= 2);
  CHECK(rec->chain(0).state() == v1::SUPERSEDED);
  CHECK(rec->chain(rec->chain_size() - 1).state() == v1::ACTIVE);
  CHECK(rec->chain(rec->chain_size() - 1).supersedes(0) ==
        rec->chain(rec->chain_size() - 2).record_id());
  CHECK(rec->supporting_messages_size() > 0);
  // Heads only by default.
  v1::ListRecordsRequest heads;
  heads.set_channel(chain_channel);
  heads.set_page_size(1000);
  auto h = ts.client()->ListRecords(heads);
  REQUIRE_OK(h);
  for (const auto& r : h->records()) CHECK(r.state() == v1::ACTIVE);
}

}  // namespace
}  // namespace speakermem

// ------------------------------------------- scored against the references

#include "eval/writer_eval.h"

namespace speakermem {
namespace {

std::string TrajectoryDir() {
  std::string base = testing::SharedDataDir();
  std::string dir = base + "/socialmem/trajectories";
  if (base.empty() || !std::filesystem::exists(dir)) {
    if (testing::InCi()) FAIL("shared data missing under CI: " << dir);
    WARN("shared data not found; skipping");
    return "";
  }
  return dir;
}

TEST_CASE("the offline Writer beats one-record-per-message on the reference trajectories",
          "[writer-eval][data]") {
  std::string dir = TrajectoryDir();
  if (dir.empty()) return;
  testing::TempDir work;
  double offline = 0, baseline = 0;
  int n = 0, wins = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    std::string name = entry.path().filename().string();
    if (name.rfind("social_grp_", 0) != 0) continue;
    auto t = eval::LoadTrajectory(entry.path().string());
    REQUIRE_OK(t);
    auto r = eval::EvaluateWriter(*t, writer::NewOfflineWriter(), work.Sub("db"));
    REQUIRE_OK(r);
    double base = writer::SpeakerLevenshtein(eval::OnePerMessageBaseline(*t), t->reference).score;
    WARN(name << ": offline " << r->sl.score << ", baseline " << base << ", " << r->records
              << " records vs " << t->reference.size() << " in the reference, " << r->writer_calls
              << " Writer calls");
    // Segments never cross a session: sum over sessions of ceil(len/window).
    std::map<std::string, size_t> per_session;
    for (const auto& m : t->messages) ++per_session[m.session];
    size_t bound = 0;
    for (const auto& [s, len] : per_session) bound += (len + t->window - 1) / t->window;
    CHECK(r->writer_calls == bound);
    offline += r->sl.score;
    baseline += base;
    wins += r->sl.score > base;
    ++n;
  }
  REQUIRE(n == 10);
  WARN("mean SpeakerLevenshtein over " << n << " networks: offline " << offline / n << ", baseline "
                                       << baseline / n);
  CHECK(offline / n > baseline / n);
  CHECK(wins >= 8);
}

TEST_CASE("replaying the reference actions through our validation rebuilds the recorded states",
          "[writer-eval][data]") {
  std::string dir = TrajectoryDir();
  if (dir.empty()) return;
  testing::TempDir work;
  size_t files = 0, updates = 0, rejected = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    INFO(name);
    auto t = eval::LoadTrajectory(entry.path().string());
    REQUIRE_OK(t);
    auto ref = eval::ReplayReference(*t, work.Sub("ref"));
    REQUIRE_OK(ref);
    // The replayed state is the recorded one, except where the reference
    // Writer ADDed an exact copy of a record already in the state: our
    // validation rejects that as duplicate_of_state (one such action in
    // social_grp_1a2b3c4d), so the copy is missing from the replay.
    size_t dups =
        ref->rejections.count("duplicate_of_state") ? ref->rejections.at("duplicate_of_state") : 0;
    CHECK(ref->rejected == dups);
    CHECK(ref->entries.size() + dups == t->reference.size());
    if (dups == 0) {
      CHECK(writer::SpeakerLevenshtein(ref->entries, t->reference).score == Approx(1.0));
    } else {
      CHECK(writer::SpeakerLevenshtein(ref->entries, t->reference).score > 0.95);
    }
    CHECK(ref->edges.size() == t->reference_updates);
    rejected += ref->rejected;
    updates += ref->edges.size();
    ++files;
  }
  CHECK(files == 15);
  CHECK(updates > 0);
  CHECK(rejected == 1);
}

TEST_CASE("the offline Writer builds UPDATE chains on the manual update cases",
          "[writer-eval][data]") {
  std::string dir = TrajectoryDir();
  if (dir.empty()) return;
  testing::TempDir work;
  for (const char* name :
       {"manual_update_alpha.json", "manual_update_beta.json", "manual_update_gamma.json"}) {
    INFO(name);
    auto t = eval::LoadTrajectory(dir + "/" + name);
    REQUIRE_OK(t);
    auto r = eval::EvaluateWriter(*t, writer::NewOfflineWriter(), work.Sub("db"));
    REQUIRE_OK(r);
    WARN(name << ": SpeakerLevenshtein " << r->sl.score << ", " << r->update_links
              << " UPDATE links, " << r->records << " active records (reference "
              << t->reference.size() << ", " << t->reference_updates << " updates)");
    CHECK(r->update_links >= 3);
    double base = writer::SpeakerLevenshtein(eval::OnePerMessageBaseline(*t), t->reference).score;
    CHECK(r->sl.score > base);
  }
  for (const char* name : {"manual_noop_ack.json", "manual_noop_greeting.json"}) {
    INFO(name);
    auto t = eval::LoadTrajectory(dir + "/" + name);
    REQUIRE_OK(t);
    auto r = eval::EvaluateWriter(*t, writer::NewOfflineWriter(), work.Sub("db"));
    REQUIRE_OK(r);
    CHECK(r->records == 0);
  }
}

}  // namespace
}  // namespace speakermem

// ---------------------------------------------- corrections, re-derivation

namespace speakermem {
namespace {

TEST_CASE("an operator correction heads the chain and the Writer cannot undo it",
          "[writer-service][correct]") {
  FakeModelServer fake;
  TestServer ts(WriterOn(fake, 2), /*metrics=*/true);
  fake.Enqueue("writer", FakeReply{200, FakeModelServer::ChatBody(
                                            "{\"actions\": [{\"action\": \"ADD\", \"owner\": "
                                            "\"Bob\", \"source\": \"Bob\", \"layer\": "
                                            "\"per_speaker_core\", \"utype\": \"stance\", "
                                            "\"content\": \"Bob prefers the beach\"}]}")});
  REQUIRE_OK(ts.client()->Ingest(Batch("k", 2)));
  FlushWait(ts.client(), "k");
  auto records = AllRecords(ts.client(), "k");
  REQUIRE(records.size() == 1);
  const std::string original = records[0].record_id();

  v1::CorrectRecordRequest cr;
  cr.set_channel("k");
  cr.set_record_id(original);
  cr.set_content("Bob prefers the mountains (confirmed with Bob)");
  auto corrected = ts.client()->CorrectRecord(cr);
  REQUIRE_OK(corrected);
  CHECK(corrected->record().source() == "operator");
  CHECK(corrected->record().owner() == "Bob");
  CHECK(corrected->record().operator_locked());
  CHECK(corrected->record().supersedes(0) == original);
  const std::string fixed = corrected->record().record_id();
  // Correcting a superseded record is refused.
  REQUIRE_CODE(ts.client()->CorrectRecord(cr), absl::StatusCode::kFailedPrecondition);
  cr.set_record_id("r999999999999");
  REQUIRE_CODE(ts.client()->CorrectRecord(cr), absl::StatusCode::kNotFound);

  // The next Writer reply tries to UPDATE the corrected head. A worker
  // that read the Writer state before the correction derives the new
  // segment on stale heads; its apply is refused and the segment derived
  // again (outcome "stale"), so every reply from here on is the UPDATE.
  const FakeReply update{200, FakeModelServer::ChatBody(
                                  "{\"actions\": [{\"action\": \"UPDATE\", \"entry_id\": \"" +
                                  fixed + "\", \"content\": \"Bob prefers the beach again\"}]}")};
  for (int i = 0; i < 3; ++i) fake.Enqueue("writer", update);
  REQUIRE_OK(ts.client()->Ingest(Batch("k", 2, 2)));
  FlushWait(ts.client(), "k");
  v1::GetRecordRequest gr;
  gr.set_channel("k");
  gr.set_record_id(fixed);
  auto history = ts.client()->GetRecord(gr);
  REQUIRE_OK(history);
  CHECK(history->record().state() == v1::ACTIVE);
  REQUIRE(history->chain_size() == 2);
  CHECK(history->chain(0).record_id() == original);
  CHECK(history->chain(1).content() == "Bob prefers the mountains (confirmed with Bob)");
  std::string metrics = testing::HttpGetMetrics(ts.server()->metrics_port());
  CHECK(metrics.find("speakermem_writer_rejected_actions_total{reason=\"operator_locked\"} 1") !=
        std::string::npos);
}

TEST_CASE("a segment derived while an operator corrected a record is derived again",
          "[writer-service][correct]") {
  FakeModelServer fake;
  TestServer ts(WriterOn(fake, 2), /*metrics=*/true);
  fake.Enqueue("writer", FakeReply{200, testing::Actions(nlohmann::json::array({testing::Add(
                                            "Bob", "Bob", "per_speaker_core", "Bob likes tea")}))});
  REQUIRE_OK(ts.client()->Ingest(Batch("k", 2)));
  FlushWait(ts.client(), "k");
  auto records = AllRecords(ts.client(), "k");
  REQUIRE(records.size() == 1);

  // The next segment's first reply is slow; the operator corrects the record
  // while the model works, so that derivation is on stale heads.
  FakeReply slow{200, testing::Actions(nlohmann::json::array({testing::Add(
                          "Carol", "Carol", "per_speaker_core", "Carol likes coffee")}))};
  slow.delay_ms = 1000;
  fake.Enqueue("writer", slow);
  fake.Enqueue("writer",
               FakeReply{200, testing::Actions(nlohmann::json::array({testing::Add(
                                  "Carol", "Carol", "per_speaker_core", "Carol likes coffee")}))});
  REQUIRE_OK(ts.client()->Ingest(Batch("k", 2, 2)));
  for (int i = 0; i < 5000 && fake.in_flight() == 0; ++i) {  // up to 10 s: the Writer is SCHED_IDLE
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  REQUIRE(fake.in_flight() == 1);
  v1::CorrectRecordRequest cr;
  cr.set_channel("k");
  cr.set_record_id(records[0].record_id());
  cr.set_content("Bob likes green tea");
  REQUIRE_OK(ts.client()->CorrectRecord(cr));
  FlushWait(ts.client(), "k");

  CHECK(fake.count("writer") == 3);
  std::vector<std::string> contents;
  for (const auto& r : AllRecords(ts.client(), "k")) {
    if (r.state() == v1::ACTIVE) contents.push_back(r.content());
  }
  CHECK_THAT(contents, Catch::Matchers::UnorderedEquals(
                           std::vector<std::string>{"Bob likes green tea", "Carol likes coffee"}));
  std::string metrics = testing::HttpGetMetrics(ts.server()->metrics_port());
  CHECK(metrics.find("speakermem_writer_segments_total{outcome=\"stale\"} 1") != std::string::npos);
}

TEST_CASE("Rederive rebuilds System 2 atomically and keeps operator corrections",
          "[writer-service][rederive]") {
  TestServer ts([](server::ServerConfig* c) { c->memory.writer.idle_flush_ms = 0; });
  v1::IngestRequest req;
  req.set_channel("r");
  const char* lines[][2] = {{"Alice", "I prefer the beach for the offsite"},
                            {"Bob", "Decision: the offsite is in Lisbon in May"},
                            {"Chen", "I will book the night train from Madrid"},
                            {"Dana", "I'm vegetarian, the venue needs real options"},
                            {"Alice", "Updated decision: the offsite moves to Porto in May"}};
  for (int i = 0; i < 5; ++i) {
    auto* m = req.add_messages();
    m->set_message_id("r" + std::to_string(i));
    m->set_speaker(lines[i][0]);
    m->set_text(lines[i][1]);
    m->set_timestamp_ms(1700000000000 + i * 60000);
    m->set_session(i < 2 ? "s1" : "s2");
  }
  REQUIRE_OK(ts.client()->Ingest(req));
  FlushWait(ts.client(), "r");
  auto before = AllRecords(ts.client(), "r");
  REQUIRE(before.size() >= 4);
  v1::CorrectRecordRequest cr;
  cr.set_channel("r");
  for (const auto& r : before) {
    if (r.owner() == "Dana" && r.state() == v1::ACTIVE) cr.set_record_id(r.record_id());
  }
  REQUIRE_FALSE(cr.record_id().empty());
  cr.set_content("Dana is vegan, not only vegetarian");
  REQUIRE_OK(ts.client()->CorrectRecord(cr));

  v1::RederiveRequest rr;
  rr.set_channel("r");
  auto done = ts.client()->Rederive(rr);
  REQUIRE_OK(done);
  CHECK(done->cursor_seq() == 5);
  auto after = AllRecords(ts.client(), "r");
  // The same deterministic Writer re-derives the same state, plus the
  // correction carried over as a locked record (its old chain is gone).
  size_t derived_after = 0, corrections = 0;
  for (const auto& r : after) {
    if (r.source() == "operator") {
      ++corrections;
      CHECK(r.operator_locked());
      CHECK(r.content() == "Dana is vegan, not only vegetarian");
      CHECK(r.supersedes_size() == 0);
    } else {
      ++derived_after;
    }
  }
  CHECK(corrections == 1);
  CHECK(derived_after == before.size());
  // The Writer carries on with new messages afterwards.
  REQUIRE_OK(ts.client()->Ingest(Batch("r", 2, 10, "s3")));
  FlushWait(ts.client(), "r");
  CHECK(AllRecords(ts.client(), "r").size() > after.size());
  rr.set_channel("nope");
  REQUIRE_CODE(ts.client()->Rederive(rr), absl::StatusCode::kNotFound);
}

TEST_CASE("a failed Rederive keeps the old derived state", "[writer-service][rederive]") {
  FakeModelServer fake;
  fake.SetDefault(EchoWriter);
  TestServer ts(WriterOn(fake, 3));
  REQUIRE_OK(ts.client()->Ingest(Batch("f", 6)));
  FlushWait(ts.client(), "f");
  auto before = AllRecords(ts.client(), "f");
  REQUIRE(before.size() == 6);
  fake.SetDefault([](const testing::FakeRequest&) {
    FakeReply r;
    r.status = 500;
    r.body = "{}";
    return r;
  });
  v1::RederiveRequest rr;
  rr.set_channel("f");
  REQUIRE_CODE(ts.client()->Rederive(rr), absl::StatusCode::kUnavailable);
  auto after = AllRecords(ts.client(), "f");
  REQUIRE(after.size() == before.size());
  for (size_t i = 0; i < after.size(); ++i) CHECK(after[i].record_id() == before[i].record_id());
}

}  // namespace
}  // namespace speakermem

// ------------------------------------------------------ trajectory capture

namespace speakermem {
namespace {

void IngestChat(client::Client* c, const std::string& channel, int n) {
  v1::IngestRequest req;
  req.set_channel(channel);
  const char* lines[] = {"I prefer the beach venue in Lisbon for the offsite",
                         "I think the budget is too tight for Lisbon",
                         "We decided to book the Lisbon venue for May",
                         "Actually I now prefer the mountain venue in Porto"};
  const char* who[] = {"Alice", "Bob", "Carol"};
  for (int i = 0; i < n; ++i) {
    auto* m = req.add_messages();
    m->set_message_id("t" + std::to_string(i));
    m->set_speaker(who[i % 3]);
    m->set_text(std::string(lines[i % 4]) + " (" + std::to_string(i) + ")");
    m->set_timestamp_ms(1700000000000 + i * 60000);
    m->set_session("s1");
  }
  REQUIRE_OK(c->Ingest(req));
}

TEST_CASE("captured transitions replay to the same derived state", "[writer-service][capture]") {
  testing::TestServer ts([](server::ServerConfig* c) {
    c->memory.writer.capture_trajectories = true;
    c->memory.writer.idle_flush_ms = 0;
  });
  IngestChat(ts.client(), "cap", 60);
  testing::FlushWait(ts.client(), "cap");
  // Page through them one at a time.
  v1::ListTransitionsRequest req;
  req.set_channel("cap");
  req.set_page_size(1);
  nlohmann::json transitions = nlohmann::json::array();
  v1::ListTransitionsResponse last;
  do {
    auto r = ts.client()->ListTransitions(req);
    REQUIRE_OK(r);
    CHECK(r->transitions_size() <= 1);
    for (const auto& t : r->transitions()) transitions.push_back(nlohmann::json::parse(t));
    req.set_after_seq(r->next_after_seq());
    last = *r;
  } while (req.after_seq() != 0);
  CHECK(last.capture_enabled());
  CHECK(last.window_size() == 25);
  REQUIRE(transitions.size() == 3);  // 25 + 25 + 10 messages
  for (const auto& t : transitions) {
    CHECK(t["messages"].size() >= 10);
    CHECK(t["report"]["json_valid"].get<bool>());
    CHECK_FALSE(t["target_text"].get<std::string>().empty());
    CHECK(t.contains("pre_state"));
    CHECK(t.contains("post_state"));
  }
  // Written out in the reference layout, the file loads as a trajectory and
  // its actions, replayed through validation, rebuild what the server holds.
  testing::TempDir dir;
  const std::string path = dir.Sub("cap.json");
  std::ofstream(path) << nlohmann::json{
      {"schema", "speakermem-v4-trajectories/1"},
      {"window_size", 25},
      {"network_id", "cap"},
      {"transitions",
       transitions}}.dump();
  auto t = eval::LoadTrajectory(path);
  REQUIRE_OK(t);
  CHECK(t->messages.size() == 60);
  auto replayed = eval::ReplayReference(*t, dir.Sub("replay"));
  REQUIRE_OK(replayed);
  std::vector<writer::StateEntry> live;
  v1::ListRecordsRequest lr;
  lr.set_channel("cap");
  lr.set_page_size(1000);
  auto records = ts.client()->ListRecords(lr);
  REQUIRE_OK(records);
  for (const auto& r : records->records()) {
    live.push_back(
        writer::StateEntry{r.owner(), r.source(), v1::Layer_Name(r.layer()), r.content()});
  }
  REQUIRE(!live.empty());
  CHECK(replayed->entries.size() == live.size());
  CHECK(writer::SpeakerLevenshtein(replayed->entries, live).score == Approx(1.0));
  CHECK(replayed->rejected == 0);
}

TEST_CASE("without capture no transitions are kept", "[writer-service][capture]") {
  testing::TestServer ts([](server::ServerConfig* c) { c->memory.writer.idle_flush_ms = 0; });
  IngestChat(ts.client(), "nocap", 30);
  testing::FlushWait(ts.client(), "nocap");
  v1::ListTransitionsRequest req;
  req.set_channel("nocap");
  auto r = ts.client()->ListTransitions(req);
  REQUIRE_OK(r);
  CHECK(r->transitions_size() == 0);
  CHECK_FALSE(r->capture_enabled());
  req.set_channel("missing");
  REQUIRE_CODE(ts.client()->ListTransitions(req), absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace speakermem
