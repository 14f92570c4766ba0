// The query pipeline end to end: budgets, System 2 rows, head/full, empty
// rows, person vs GROUP, and every stage's fallback through a failing fake
// model endpoint.
#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <functional>
#include <set>
#include <thread>

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

void Ingest(client::Client* c, const std::string& channel,
            const std::vector<std::pair<std::string, std::string>>& lines, int offset,
            const std::string& session) {
  v1::IngestRequest req;
  req.set_channel(channel);
  for (size_t i = 0; i < lines.size(); ++i) {
    auto* m = req.add_messages();
    m->set_message_id(channel + "-" + std::to_string(offset + i));
    m->set_speaker(lines[i].first);
    m->set_text(lines[i].second);
    m->set_timestamp_ms(1700000000000 + (offset + static_cast<int>(i)) * 60000);
    m->set_session(session);
  }
  REQUIRE_OK(c->Ingest(req));
}

// A channel whose System 2 is scripted through the fake Writer.
struct Scripted {
  FakeModelServer fake;
  std::unique_ptr<TestServer> ts;

  // `extra` configures the server further (the rows' constants).
  explicit Scripted(std::function<void(server::ServerConfig*)> extra = nullptr) {
    std::string url = fake.base_url();
    ts = std::make_unique<TestServer>([url, extra](server::ServerConfig* c) {
      REQUIRE_OK(c->models.SetOverride("writer", "provider", "openai"));
      REQUIRE_OK(c->models.SetOverride("writer", "base_url", url));
      c->memory.writer.idle_flush_ms = 0;
      if (extra) extra(c);
    });
    fake.Enqueue(
        "writer",
        FakeReply{
            200,
            Actions({
                Add("Alice", "Alice", "per_speaker_core",
                    "Alice prefers the beach venue in Lisbon"),
                Add("Alice", "Alice", "per_speaker_core",
                    "Alice likes surfing lessons at the venue"),
                Add("Alice", "Alice", "per_speaker_core", "Alice runs the venue budget sheet"),
                Add("Bob", "Bob", "per_speaker_core", "Bob thinks the venue is too expensive"),
                Add("Bob", "Alice", "per_speaker_profile",
                    "Alice believes Bob agreed to the venue"),
                Add("Bob", "Alice", "per_speaker_profile", "Alice says Bob wants a cheaper venue"),
                Add("GROUP", "Alice", "group_interaction",
                    "The group decided the venue is in Lisbon"),
            })});
    Ingest(ts->client(), "p",
           {{"Alice", "I prefer the beach venue in Lisbon"},
            {"Bob", "The venue is too expensive for me"},
            {"Carol", "My cat knitted a scarf yesterday"},
            {"Alice", "Bob agreed to the venue, I believe"},
            {"Bob", "Fine, Lisbon it is"}},
           0, "s1");
    FlushWait(ts->client(), "p");
  }
};

const v1::EvidenceRow* Row(const v1::QueryResponse& r, const std::string& row) {
  for (const auto& x : r.rows()) {
    if (x.row() == row) return &x;
  }
  return nullptr;
}

TEST_CASE("budgets are respected exactly: s1_top_k, s2_k per row, source-k apart",
          "[pipeline][budgets]") {
  Scripted s;
  v1::QueryRequest q;
  q.set_channel("p");
  q.set_question("What does everyone think about the venue?");
  q.mutable_budgets()->set_s1_top_k(3);
  q.mutable_budgets()->set_s2_k(1);
  q.mutable_budgets()->set_s2_source_k(1);
  auto r = s.ts->client()->Retrieve(q);
  REQUIRE_OK(r);
  CHECK(r->evidence_size() == 3);
  CHECK(r->answer().empty());  // Retrieve runs no Answer stage
  const v1::EvidenceRow* alice = Row(*r, "Alice");
  const v1::EvidenceRow* bob = Row(*r, "Bob");
  REQUIRE(alice != nullptr);
  REQUIRE(bob != nullptr);
  CHECK(alice->records_size() == 1);  // s2_k = 1 of Alice's three
  CHECK(alice->records(0).owner() == "Alice");
  // Alice as the source of records about Bob or of the group decision she
  // proposed: one, outside her own budget.
  REQUIRE(alice->sourced_size() == 1);
  CHECK(alice->sourced(0).owner() != "Alice");
  CHECK(alice->sourced(0).source() == "Alice");
  CHECK(bob->records_size() == 1);
  for (const auto& rec : bob->records()) CHECK(rec.owner() == "Bob");

  q.mutable_budgets()->set_s2_k(2);
  q.mutable_budgets()->set_s2_source_k(2);
  q.mutable_budgets()->set_s1_top_k(5);
  r = s.ts->client()->Retrieve(q);
  REQUIRE_OK(r);
  CHECK(r->evidence_size() == 5);
  CHECK(Row(*r, "Alice")->records_size() == 2);
  CHECK(Row(*r, "Alice")->sourced_size() == 2);
  CHECK(Row(*r, "Bob")->records_size() == 2);

  // Caps.
  q.mutable_budgets()->set_s1_top_k(100000);
  REQUIRE_CODE(s.ts->client()->Retrieve(q), absl::StatusCode::kInvalidArgument);
  q.mutable_budgets()->set_s1_top_k(5);
  q.mutable_budgets()->set_s2_k(51);
  REQUIRE_CODE(s.ts->client()->Retrieve(q), absl::StatusCode::kInvalidArgument);
}

// Every record of every row, owned and sourced.
std::vector<v1::DerivedRecord> RowRecords(const v1::QueryResponse& r) {
  std::vector<v1::DerivedRecord> out;
  for (const auto& row : r.rows()) {
    out.insert(out.end(), row.records().begin(), row.records().end());
    out.insert(out.end(), row.sourced().begin(), row.sourced().end());
  }
  return out;
}

// Retrieve for `q` on the scripted channel with the rows' provenance
// weight and offline record floor set.
v1::QueryResponse RetrieveWithRows(const v1::QueryRequest& q, double weight, double floor) {
  Scripted s([weight, floor](server::ServerConfig* c) {
    c->memory.rows.provenance_weight = weight;
    c->memory.rows.record_floor_offline = floor;
  });
  auto r = s.ts->client()->Retrieve(q);
  REQUIRE_OK(r);
  return *r;
}

TEST_CASE("a record enters its row on similarity plus its backing by System 1",
          "[pipeline][rows]") {
  v1::QueryRequest q;
  q.set_channel("p");
  q.set_question("What does Bob think about the venue?");
  q.mutable_budgets()->set_s1_top_k(1);  // one message backs records
  q.mutable_budgets()->set_s2_k(5);
  q.mutable_budgets()->set_s2_source_k(5);
  SECTION("backing admits: only records drawn from the recalled message") {
    // A floor similarity alone cannot clear (it is at most 1), backing can.
    const v1::QueryResponse r = RetrieveWithRows(q, 100, 1.0);
    REQUIRE(r.evidence_size() == 1);
    const std::string recalled = r.evidence(0).message().message_id();
    const auto records = RowRecords(r);
    CHECK_FALSE(records.empty());
    for (const auto& rec : records) {
      INFO(rec.content());
      CHECK(std::count(rec.from_ids().begin(), rec.from_ids().end(), recalled) == 1);
    }
    // The score the floor judged: similarity plus 100 x the rank weight of
    // the first System 1 item (1), whatever the record's similarity.
    for (const auto& row : r.rows()) {
      for (double sc : row.scores()) CHECK(sc >= 100.0);
    }
  }
  SECTION("without backing the same floor admits nothing") {
    CHECK(RowRecords(RetrieveWithRows(q, 0, 1.0)).empty());
  }
}

TEST_CASE("a roster member with no evidence is an explicit empty row", "[pipeline][rows]") {
  Scripted s;
  v1::QueryRequest q;
  q.set_channel("p");
  q.set_question("Who never mentioned the venue?");
  auto r = s.ts->client()->Retrieve(q);
  REQUIRE_OK(r);
  const v1::EvidenceRow* carol = Row(*r, "Carol");
  REQUIRE(carol != nullptr);
  CHECK(carol->records_size() == 0);
  CHECK(carol->empty());
  const v1::EvidenceRow* bob = Row(*r, "Bob");
  REQUIRE(bob != nullptr);
  CHECK_FALSE(bob->empty());
}

TEST_CASE("a person without derived records falls back to their best message", "[pipeline][rows]") {
  Scripted s;
  v1::QueryRequest q;
  q.set_channel("p");
  q.set_question("What did Carol say about the scarf?");
  auto r = s.ts->client()->Retrieve(q);
  REQUIRE_OK(r);
  const v1::EvidenceRow* carol = Row(*r, "Carol");
  REQUIRE(carol != nullptr);
  CHECK_FALSE(carol->empty());
  CHECK(carol->fallback().text() == "My cat knitted a scarf yesterday");
}

TEST_CASE("GROUP records never stand in for a person's stance", "[pipeline][rows]") {
  Scripted s;
  v1::QueryRequest q;
  q.set_channel("p");
  q.set_question("What does Bob think about the venue?");
  auto r = s.ts->client()->Query(q);
  REQUIRE_OK(r);
  REQUIRE(r->projection().rows_size() >= 1);
  CHECK(r->projection().rows(0) == "Bob");
  for (const auto& row : r->rows()) {
    for (const auto& rec : row.records()) {
      if (row.row() != "GROUP") CHECK(rec.owner() != "GROUP");
    }
  }
  CHECK(Row(*r, "GROUP") == nullptr);  // a person question has no GROUP row
  CHECK_FALSE(r->abstained());
  REQUIRE(r->cited_ids_size() == 1);
  CHECK(r->answer().find("group decided") == std::string::npos);
}

TEST_CASE("head shows the current state, full the whole chain", "[pipeline][tense]") {
  Scripted s;
  // Second segment: UPDATE of Alice's venue preference.
  v1::ListRecordsRequest lr;
  lr.set_channel("p");
  lr.set_owner("Alice");
  auto recs = s.ts->client()->ListRecords(lr);
  REQUIRE_OK(recs);
  std::string beach;
  for (const auto& rec : recs->records()) {
    if (rec.content().find("beach venue") != std::string::npos) beach = rec.record_id();
  }
  REQUIRE_FALSE(beach.empty());
  // A query now caches the channel's records; the UPDATE below must reach
  // the cached view too (incremental refresh).
  v1::QueryRequest warm;
  warm.set_channel("p");
  warm.set_question("Which venue does Alice prefer?");
  auto before = s.ts->client()->Retrieve(warm);
  REQUIRE_OK(before);
  REQUIRE(Row(*before, "Alice") != nullptr);
  s.fake.Enqueue(
      "writer",
      FakeReply{200, Actions({{{"action", "UPDATE"},
                               {"entry_id", beach},
                               {"content", "Alice now prefers the mountain venue in Porto"}}})});
  Ingest(s.ts->client(), "p", {{"Alice", "Actually I prefer the mountain venue in Porto now"}}, 10,
         "s2");
  FlushWait(s.ts->client(), "p");

  v1::QueryRequest q;
  q.set_channel("p");
  q.set_question("Which venue does Alice prefer?");
  q.mutable_budgets()->set_s2_k(1);
  q.set_tense(v1::HEAD);
  auto head = s.ts->client()->Retrieve(q);
  REQUIRE_OK(head);
  const v1::EvidenceRow* a = Row(*head, "Alice");
  REQUIRE(a != nullptr);
  REQUIRE(a->records_size() == 1);
  CHECK(a->records(0).content() == "Alice now prefers the mountain venue in Porto");
  CHECK(a->records(0).state() == v1::ACTIVE);

  q.set_tense(v1::FULL);
  auto full = s.ts->client()->Retrieve(q);
  REQUIRE_OK(full);
  a = Row(*full, "Alice");
  REQUIRE(a != nullptr);
  REQUIRE(a->records_size() == 2);  // the chain, oldest first
  CHECK(a->records(0).state() == v1::SUPERSEDED);
  CHECK(a->records(0).content() == "Alice prefers the beach venue in Lisbon");
  CHECK(a->records(1).content() == "Alice now prefers the mountain venue in Porto");
  CHECK(full->projection().tense() == v1::FULL);

  // Project chooses full by itself for a history question.
  v1::QueryRequest hist;
  hist.set_channel("p");
  hist.set_question("How did Alice's venue preference change over time?");
  auto h = s.ts->client()->Retrieve(hist);
  REQUIRE_OK(h);
  CHECK(h->projection().tense() == v1::FULL);
}

TEST_CASE("each query stage falls back when its model fails, noted in the trace",
          "[pipeline][fallback]") {
  FakeModelServer fake;
  fake.SetDefault([](const testing::FakeRequest&) {
    FakeReply r;
    r.status = 500;
    r.body = "{}";
    return r;
  });
  std::string url = fake.base_url();
  TestServer ts([url](server::ServerConfig* c) {
    for (const char* stage : {"project", "select", "sufficiency", "answer"}) {
      REQUIRE_OK(c->models.SetOverride(stage, "provider", "openai"));
      REQUIRE_OK(c->models.SetOverride(stage, "base_url", url));
      REQUIRE_OK(c->models.SetOverride(stage, "max_retries", "0"));
    }
  });
  Ingest(ts.client(), "f",
         {{"Alice", "The offsite is in Porto in May"}, {"Bob", "I booked the train to Porto"}}, 0,
         "s1");
  v1::QueryRequest q;
  q.set_channel("f");
  q.set_question("Where is the offsite?");
  q.mutable_budgets()->set_ask(true);
  q.mutable_budgets()->set_s1_top_k(1);
  auto r = ts.client()->Query(q);
  REQUIRE_OK(r);
  std::set<std::string> fell_back;
  for (const auto& t : r->trace()) {
    if (t.note().rfind("fallback:", 0) == 0) fell_back.insert(t.stage());
  }
  CHECK(fell_back.count("project"));
  CHECK(fell_back.count("select"));
  CHECK(fell_back.count("answer"));
  CHECK(r->projection().rows(0) == "ALL");  // Project's safe default
  CHECK(r->projection().issue() == "Where is the offsite?");
  CHECK(r->answer().find("Porto") != std::string::npos);
  CHECK(fake.count("project") == 1);
  CHECK(fake.count("answer") == 1);
}

}  // namespace
}  // namespace speakermem

namespace speakermem {
namespace {

// Dense-only top-1 for `text` is `id`, within a few seconds (embedding is
// asynchronous).
bool DenseFinds(client::Client* c, const std::string& channel, const std::string& text,
                const std::string& id) {
  for (int i = 0; i < 200; ++i) {
    v1::QueryRequest q;
    q.set_channel(channel);
    q.set_question(text);
    q.set_mode(v1::DENSE_ONLY);
    q.mutable_budgets()->set_s1_top_k(1);
    auto r = c->Retrieve(q);
    if (r.ok() && r->evidence_size() == 1 && r->evidence(0).message().message_id() == id) {
      return true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  return false;
}

TEST_CASE("vector shards are saved at shutdown, loaded at start, and brought level when stale",
          "[pipeline][vectors]") {
  TestServer ts;
  const std::string shards = ts.dir().Sub("data.shards");
  std::vector<std::pair<std::string, std::string>> first, second;
  for (int i = 0; i < 30; ++i) {
    first.push_back({"Alice", "first batch note number " + std::to_string(i) + " about topic" +
                                  std::to_string(i * 7919 % 1000)});
    second.push_back({"Bob", "second batch remark " + std::to_string(i) + " on subject" +
                                 std::to_string(i * 104729 % 1000)});
  }
  Ingest(ts.client(), "v", first, 0, "s1");
  REQUIRE(DenseFinds(ts.client(), "v", first[29].second, "v-29"));
  ts.Restart();  // clean shutdown saves the shard
  REQUIRE(std::filesystem::exists(shards));
  size_t files = 0;
  for (const auto& e : std::filesystem::directory_iterator(shards))
    files += e.path().extension() == ".faiss";
  CHECK(files == 1);
  CHECK(DenseFinds(ts.client(), "v", first[3].second, "v-3"));
  // Keep the shard as of now, add more, then put the old file back as if
  // the server had crashed before saving again.
  const std::string old = ts.dir().Sub("shards.old");
  std::filesystem::copy(shards, old);
  Ingest(ts.client(), "v", second, 100, "s2");
  REQUIRE(DenseFinds(ts.client(), "v", second[29].second, "v-129"));
  ts.Stop();
  std::filesystem::remove_all(shards);
  std::filesystem::rename(old, shards);
  ts.Start();
  CHECK(DenseFinds(ts.client(), "v", second[29].second, "v-129"));
  CHECK(DenseFinds(ts.client(), "v", second[0].second, "v-100"));
  CHECK(DenseFinds(ts.client(), "v", first[0].second, "v-0"));
}

}  // namespace
}  // namespace speakermem

namespace speakermem {
namespace {

TEST_CASE("a multiple-choice query answers with one of its options", "[pipeline][options]") {
  TestServer ts;
  Ingest(ts.client(), "mc",
         {{"Alice", "I booked the venue in Lisbon for the offsite"},
          {"Bob", "My cat knitted a scarf yesterday"},
          {"Carol", "Porto was too expensive this year"}},
         0, "s1");
  v1::QueryRequest q;
  q.set_channel("mc");
  q.set_question("Which city did Alice book the venue in?");
  q.add_options("A: Porto");
  q.add_options("B: Lisbon");
  q.add_options("C: Madrid");
  auto r = ts.client()->Query(q);
  REQUIRE_OK(r);
  CHECK(r->answer() == "B: Lisbon");
  q.add_options("no letter");
  REQUIRE_CODE(ts.client()->Query(q), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace speakermem
