// Deletions and edits through the real server: ForgetSpeaker, DeleteMessages,
// EditMessage, DeleteChannel propagate to records, chains, vectors, indexes,
// captured transitions and the bytes on disk, and survive a restart.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "tests/integration/test_server.h"

namespace speakermem {
namespace {

using testing::AllRecords;
using testing::Say;
using testing::TestServer;

// A chat where Bob alone says "zeppelin" and "quokka".
std::vector<std::pair<std::string, std::string>> Chat() {
  std::vector<std::pair<std::string, std::string>> out;
  for (int i = 0; i < 10; ++i) {
    out.push_back({"Alice", "I prefer the beach venue in Lisbon, round " + std::to_string(i)});
    out.push_back(
        {"Bob", "I think the zeppelin tour with my quokka is best, round " + std::to_string(i)});
    out.push_back({"Carol", "We decided to book the Lisbon venue, round " + std::to_string(i)});
  }
  out.push_back({"Alice", "I will ask Bob about the budget"});
  return out;
}

bool Mentions(const std::string& text) {
  return text.find("zeppelin") != std::string::npos || text.find("quokka") != std::string::npos;
}

// Whether any file under `dir` contains `needle` (bytes on disk).
bool OnDisk(const std::string& dir, const std::string& needle) {
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir)) {
    if (!e.is_regular_file()) continue;
    std::ifstream in(e.path(), std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    if (ss.str().find(needle) != std::string::npos) return true;
  }
  return false;
}

void CheckChains(const std::vector<v1::DerivedRecord>& records) {
  std::map<std::string, const v1::DerivedRecord*> by_id;
  for (const auto& r : records) by_id[r.record_id()] = &r;
  for (const auto& r : records) {
    INFO(r.record_id());
    if (!r.superseded_by().empty()) {
      REQUIRE(by_id.count(r.superseded_by()));
      const auto& s = *by_id.at(r.superseded_by());
      CHECK(std::find(s.supersedes().begin(), s.supersedes().end(), r.record_id()) !=
            s.supersedes().end());
    }
    for (const auto& p : r.supersedes()) {
      REQUIRE(by_id.count(p));
      CHECK(by_id.at(p)->superseded_by() == r.record_id());
    }
  }
}

// Bob's words are in none of the team channel's messages, records, chains,
// roster, transitions or export.
void CheckBobGoneFromStore(client::Client* c) {
  auto msgs = testing::AllMessages(c, "team");
  CHECK(msgs.size() == 21);
  for (const auto& m : msgs) {
    CHECK(m.speaker() != "Bob");
    CHECK_FALSE(Mentions(m.text()));
  }
  // Alice's message naming Bob is hers, and stays.
  CHECK(msgs.back().text() == "I will ask Bob about the budget");
  for (const auto& r : AllRecords(c, "team")) {
    CHECK(r.owner() != "Bob");
    CHECK(r.source() != "Bob");
    CHECK_FALSE(Mentions(r.content()));
  }
  CheckChains(AllRecords(c, "team"));
  v1::GetRosterRequest gr;
  gr.set_channel("team");
  auto roster = c->GetRoster(gr);
  REQUIRE_OK(roster);
  for (const auto& s : roster->speakers()) CHECK(s.speaker_id() != "Bob");
  v1::ListTransitionsRequest lt;
  lt.set_channel("team");
  auto tr = c->ListTransitions(lt);
  REQUIRE_OK(tr);
  for (const auto& t : tr->transitions()) CHECK_FALSE(Mentions(t));
  // Nor in an export of the channel.
  size_t items = 0;
  REQUIRE_OK(c->ExportChannel("team", [&](const v1::ChannelItem& it) {
    ++items;
    CHECK_FALSE(Mentions(it.DebugString()));
    CHECK(it.message().speaker() != "Bob");
    return absl::OkStatus();
  }));
  CHECK(items > 21);
}

// Nor does any query mode find them.
void CheckBobGoneFromQueries(client::Client* c) {
  for (auto mode : {v1::PIPELINE, v1::BM25_ONLY, v1::DENSE_ONLY}) {
    v1::QueryRequest q;
    q.set_channel("team");
    q.set_question("Who talked about the zeppelin tour and the quokka?");
    q.set_mode(mode);
    q.mutable_budgets()->set_s1_top_k(50);
    auto r = c->Query(q);
    REQUIRE_OK(r);
    CHECK_FALSE(Mentions(r->answer()));
    for (const auto& e : r->evidence()) CHECK_FALSE(Mentions(e.message().text()));
    for (const auto& row : r->rows()) {
      CHECK(row.row() != "Bob");
      for (const auto& rec : row.records()) CHECK_FALSE(Mentions(rec.content()));
      for (const auto& rec : row.sourced()) CHECK_FALSE(Mentions(rec.content()));
      CHECK_FALSE(Mentions(row.fallback().text()));
    }
  }
}

TEST_CASE("ForgetSpeaker removes every word of the speaker everywhere, durably", "[deletion]") {
  TestServer ts([](server::ServerConfig* c) {
    c->memory.writer.idle_flush_ms = 0;
    c->memory.writer.capture_trajectories = true;
  });
  auto* c = ts.client();
  Say(c, "team", Chat(), 0);
  testing::FlushWait(c, "team");
  bool bob_records = false;
  for (const auto& r : AllRecords(c, "team"))
    bob_records |= r.owner() == "Bob" || r.source() == "Bob";
  REQUIRE(bob_records);
  REQUIRE(OnDisk(ts.data_dir(), "zeppelin"));

  v1::ForgetSpeakerRequest f;
  f.set_channel("team");
  f.set_speaker("Bob");
  auto forgot = c->ForgetSpeaker(f);
  REQUIRE_OK(forgot);
  CHECK(forgot->counts().messages_deleted() == 10);
  CHECK(forgot->counts().records_deleted() > 0);
  CHECK(forgot->counts().transitions_deleted() > 0);

  CheckBobGoneFromStore(c);
  CheckBobGoneFromQueries(c);
  // The bytes left the disk (compacted; shard files hold no text).
  CHECK_FALSE(OnDisk(ts.data_dir(), "zeppelin"));
  // Idempotent: again, nothing more to do.
  auto again = c->ForgetSpeaker(f);
  REQUIRE_OK(again);
  CHECK(again->counts().messages_deleted() == 0);
  CHECK(again->counts().records_deleted() == 0);
  // Durable: after a restart (indexes rebuilt from the store) still gone.
  ts.Restart();
  c = ts.client();
  CheckBobGoneFromStore(c);
  CheckBobGoneFromQueries(c);
}

TEST_CASE("DeleteMessages drops unsupported records, trims the rest and repairs chains",
          "[deletion]") {
  TestServer ts([](server::ServerConfig* c) { c->memory.writer.idle_flush_ms = 0; });
  auto* c = ts.client();
  // Revisions of the same facts make UPDATE chains with the offline Writer.
  std::vector<std::pair<std::string, std::string>> lines;
  for (int i = 0; i < 12; ++i) {
    lines.push_back({"Alice", "I prefer the beach venue in Lisbon"});
    lines.push_back({"Alice", "Actually I now prefer the mountain venue in Porto"});
    lines.push_back({"Bob", "I think the budget is too tight for Porto"});
  }
  Say(c, "d", lines, 0);
  testing::FlushWait(c, "d");
  auto before = AllRecords(c, "d");
  REQUIRE(!before.empty());
  // Delete the messages cited by the first record.
  std::set<std::string> gone(before.front().from_ids().begin(), before.front().from_ids().end());
  size_t expect_deleted = 0, expect_trimmed = 0;
  for (const auto& r : before) {
    size_t cited = 0;
    for (const auto& f : r.from_ids()) cited += gone.count(f);
    if (cited == 0) continue;
    (cited == static_cast<size_t>(r.from_ids_size()) ? expect_deleted : expect_trimmed) += 1;
  }
  v1::DeleteMessagesRequest del;
  del.set_channel("d");
  for (const auto& id : gone) del.add_message_ids(id);
  del.add_message_ids("no-such-id");
  auto r = c->DeleteMessages(del);
  REQUIRE_OK(r);
  CHECK(r->counts().messages_deleted() == gone.size());
  CHECK(r->counts().records_deleted() == expect_deleted);
  CHECK(r->counts().records_updated() >= expect_trimmed);
  auto after = AllRecords(c, "d");
  CHECK(after.size() == before.size() - expect_deleted);
  size_t marked = 0;
  for (const auto& rec : after) {
    for (const auto& f : rec.from_ids()) CHECK_FALSE(gone.count(f));
    CHECK(rec.from_ids_size() > 0);
    marked += rec.support_changed();
  }
  CHECK(marked >= expect_trimmed);
  CheckChains(after);
  for (const auto& m : testing::AllMessages(c, "d")) CHECK_FALSE(gone.count(m.message_id()));
  // Idempotent.
  auto again = c->DeleteMessages(del);
  REQUIRE_OK(again);
  CHECK(again->counts().messages_deleted() == 0);
}

TEST_CASE("EditMessage changes System 1, its indexes, and marks the records citing it",
          "[deletion]") {
  TestServer ts([](server::ServerConfig* c) { c->memory.writer.idle_flush_ms = 0; });
  auto* c = ts.client();
  Say(c, "e", Chat(), 0);
  testing::FlushWait(c, "e");
  v1::EditMessageRequest ed;
  ed.set_channel("e");
  ed.set_message_id("m1");  // Bob's first zeppelin message
  ed.set_text("I think the submarine tour is best");
  auto r = c->EditMessage(ed);
  REQUIRE_OK(r);
  CHECK(r->counts().messages_edited() == 1);
  auto msgs = testing::AllMessages(c, "e");
  CHECK(msgs[1].text() == "I think the submarine tour is best");
  for (const auto& rec : AllRecords(c, "e")) {
    bool cites =
        std::find(rec.from_ids().begin(), rec.from_ids().end(), "m1") != rec.from_ids().end();
    if (cites) CHECK(rec.support_changed());
  }
  v1::QueryRequest q;
  q.set_channel("e");
  q.set_question("submarine");
  q.set_mode(v1::BM25_ONLY);
  auto hit = c->Retrieve(q);
  REQUIRE_OK(hit);
  REQUIRE(hit->evidence_size() >= 1);
  CHECK(hit->evidence(0).message().message_id() == "m1");
  ed.set_message_id("missing");
  REQUIRE_CODE(c->EditMessage(ed), absl::StatusCode::kNotFound);
  ed.set_message_id("m1");
  ed.set_text("");
  REQUIRE_CODE(c->EditMessage(ed), absl::StatusCode::kInvalidArgument);
}

TEST_CASE("DeleteChannel removes everything, idempotently, and the name can be reused",
          "[deletion]") {
  TestServer ts([](server::ServerConfig* c) { c->memory.writer.idle_flush_ms = 0; });
  auto* c = ts.client();
  Say(c, "gone", Chat(), 0);
  Say(c, "kept", {{"Dana", "The quokka sanctuary opens in May"}}, 0);
  testing::FlushWait(c, "gone");
  ts.Restart();  // so a shard file exists
  c = ts.client();
  v1::DeleteChannelRequest dc;
  dc.set_channel("gone");
  auto r = c->DeleteChannel(dc);
  REQUIRE_OK(r);
  CHECK(r->existed());
  v1::GetMessagesRequest gm;
  gm.set_channel("gone");
  REQUIRE_CODE(c->GetMessages(gm), absl::StatusCode::kNotFound);
  v1::ListChannelsRequest lc;
  auto chans = c->ListChannels(lc);
  REQUIRE_OK(chans);
  REQUIRE(chans->channels_size() == 1);
  CHECK(chans->channels(0).channel() == "kept");
  CHECK_FALSE(OnDisk(ts.data_dir(), "zeppelin"));
  CHECK(OnDisk(ts.data_dir(), "sanctuary"));  // other channels untouched
  auto again = c->DeleteChannel(dc);
  REQUIRE_OK(again);
  CHECK_FALSE(again->existed());
  // A new channel of the same name starts empty.
  Say(c, "gone", {{"Eve", "hello again"}}, 0);
  auto fresh = testing::AllMessages(c, "gone");
  REQUIRE(fresh.size() == 1);
  CHECK(fresh[0].seq() == 1);
  v1::QueryRequest q;
  q.set_channel("gone");
  q.set_question("zeppelin quokka");
  q.set_mode(v1::DENSE_ONLY);
  auto dense = c->Retrieve(q);
  REQUIRE_OK(dense);
  for (const auto& e : dense->evidence()) CHECK_FALSE(Mentions(e.message().text()));
  ts.Restart();
  c = ts.client();
  CHECK(testing::AllMessages(c, "gone").size() == 1);
}

}  // namespace
}  // namespace speakermem
