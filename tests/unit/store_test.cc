#include "storage/store.h"

#include <atomic>
#include <catch2/catch.hpp>
#include <thread>

#include "rocksdb/db.h"
#include "storage/keys.h"
#include "storage/layers.h"
#include "storage/record_id.h"
#include "tests/test_util.h"

namespace speakermem::storage {
namespace {

using speakermem::testing::TempDir;

Message Msg(const std::string& id, const std::string& speaker, const std::string& text, int64_t ts,
            const std::string& speaker_id = "") {
  Message m;
  m.message_id = id;
  m.speaker = speaker;
  m.speaker_id = speaker_id;
  m.text = text;
  m.timestamp_ms = ts;
  m.session = "s1";
  return m;
}

std::unique_ptr<Store> OpenStore(const std::string& path) {
  StoreOptions o;
  o.path = path;
  auto s = Store::Open(o);
  REQUIRE_OK(s);
  return std::move(*s);
}

const ChannelRef kChan{"default", "team"};

TEST_CASE("keys of a channel are contiguous and ordered by seq", "[store]") {
  ChannelRef a{"t", "a"}, ab{"t", "ab"};
  CHECK(keys::MessageKey(a, 1) < keys::MessageKey(a, 2));
  CHECK(keys::MessageKey(a, 255) < keys::MessageKey(a, 256));
  CHECK(keys::MessageKey(a, ~0ull) < keys::ChannelPrefixEnd(a));
  CHECK(keys::ChannelPrefixEnd(a) <= keys::MessageKey(ab, 0));
  CHECK(keys::SessionTurnKey(a, "s", -1, 9) < keys::SessionTurnKey(a, "s", 0, 1));
  ChannelRef parsed;
  absl::string_view rest;
  const std::string roster_key = keys::RosterKey(a, 7);  // a speaker by ordinal, not name
  REQUIRE(keys::ParseChannelKey(roster_key, &parsed, &rest));
  CHECK(parsed == a);
  CHECK(rest == std::string("r\x01\0\0\0\x07", 6));
  CHECK(keys::SpeakerKey(a, 7, 2) < keys::SpeakerKey(a, 7, 3));
  CHECK(keys::SpeakerKey(a, 7, ~0ull) < keys::SpeakerKey(a, 8, 0));
}

TEST_CASE("append assigns sequence numbers, ids and a roster", "[store]") {
  TempDir dir;
  auto store = OpenStore(dir.path());
  std::vector<Message> batch = {Msg("a1", "Alice", "hi", 1000), Msg("", "Bob", "yo", 2000),
                                Msg("a2", "Ally", "hey", 3000, "Alice")};
  auto r = store->AppendMessages(kChan, &batch);
  REQUIRE_OK(r);
  CHECK(r->stored == 3);
  CHECK(r->duplicates == 0);
  CHECK(r->first_seq == 1);
  CHECK(r->last_seq == 3);
  CHECK(r->messages[1].message_id == "~2");

  auto roster = store->GetRoster(kChan);
  REQUIRE_OK(roster);
  REQUIRE(roster->size() == 2);
  const RosterEntry& alice = (*roster)[0];
  CHECK(alice.speaker_id == "Alice");
  CHECK(alice.aliases == std::vector<std::string>{"Alice", "Ally"});
  CHECK(alice.message_count == 2);
  CHECK(alice.first_seen_ms == 1000);
  CHECK(alice.last_seen_ms == 3000);
  auto resolved = store->ResolveSpeaker(kChan, "Ally");
  REQUIRE_OK(resolved);
  CHECK(*resolved == "Alice");
  REQUIRE_CODE(store->ResolveSpeaker(kChan, "Carol"), absl::StatusCode::kNotFound);

  auto info = store->GetChannelInfo(kChan);
  REQUIRE_OK(info);
  CHECK(info->message_count == 3);
  CHECK(info->speaker_count == 2);
  CHECK(info->first_message_ms == 1000);
  CHECK(info->last_message_ms == 3000);
}

TEST_CASE("re-sent message ids are duplicates, within and across batches", "[store]") {
  TempDir dir;
  auto store = OpenStore(dir.path());
  std::vector<Message> first = {Msg("x", "Alice", "one", 1), Msg("y", "Alice", "two", 2)};
  REQUIRE_OK(store->AppendMessages(kChan, &first));
  std::vector<Message> again = {Msg("y", "Alice", "two", 2), Msg("z", "Bob", "three", 3),
                                Msg("z", "Bob", "three", 3)};
  auto r = store->AppendMessages(kChan, &again);
  REQUIRE_OK(r);
  CHECK(r->stored == 1);
  CHECK(r->duplicates == 2);
  CHECK(r->messages[0].duplicate);
  CHECK(r->messages[0].seq == 2);
  CHECK(r->messages[2].duplicate);
  CHECK(r->messages[2].seq == 3);
  auto info = store->GetChannelInfo(kChan);
  CHECK(info->message_count == 3);
  auto roster = store->GetRoster(kChan);
  CHECK((*roster)[0].message_count == 2);  // Alice not counted twice
}

TEST_CASE("scan pages in seq order with speaker and time filters", "[store]") {
  TempDir dir;
  auto store = OpenStore(dir.path());
  std::vector<Message> batch;
  for (int i = 0; i < 25; ++i) {
    batch.push_back(Msg("m" + std::to_string(i), i % 2 ? "Bob" : "Alice",
                        "text " + std::to_string(i), 1000 + i * 10));
  }
  REQUIRE_OK(store->AppendMessages(kChan, &batch));

  MessageQuery q;
  q.limit = 10;
  std::vector<uint64_t> seen;
  for (int page = 0; page < 5; ++page) {
    auto p = store->ScanMessages(kChan, q);
    REQUIRE_OK(p);
    for (const auto& m : p->messages) seen.push_back(m.seq);
    if (p->next_after_seq == 0) break;
    q.after_seq = p->next_after_seq;
  }
  REQUIRE(seen.size() == 25);
  for (size_t i = 0; i < seen.size(); ++i) CHECK(seen[i] == i + 1);

  MessageQuery bob;
  bob.speaker_id = "Bob";
  bob.limit = 100;
  auto p = store->ScanMessages(kChan, bob);
  REQUIRE_OK(p);
  CHECK(p->messages.size() == 12);
  for (const auto& m : p->messages) CHECK(m.speaker == "Bob");

  MessageQuery ranged;
  ranged.start_ms = 1050;
  ranged.end_ms = 1100;
  auto r = store->ScanMessages(kChan, ranged);
  REQUIRE_OK(r);
  REQUIRE(r->messages.size() == 5);
  CHECK(r->messages.front().timestamp_ms == 1050);
  CHECK(r->messages.back().timestamp_ms == 1090);

  MessageQuery capped;
  capped.max_scan = 4;
  capped.start_ms = 1200;  // nothing matches in the first 4
  auto c = store->ScanMessages(kChan, capped);
  REQUIRE_OK(c);
  CHECK(c->messages.empty());
  CHECK(c->next_after_seq == 4);

  REQUIRE_CODE(store->ScanMessages({"default", "nope"}, q), absl::StatusCode::kNotFound);
}

TEST_CASE("data survives reopening and seqs continue", "[store]") {
  TempDir dir;
  {
    auto store = OpenStore(dir.path());
    std::vector<Message> b = {Msg("a", "Alice", "persist me", 5)};
    REQUIRE_OK(store->AppendMessages(kChan, &b));
  }
  auto store = OpenStore(dir.path());
  std::vector<Message> b = {Msg("b", "Bob", "after reopen", 6)};
  auto r = store->AppendMessages(kChan, &b);
  REQUIRE_OK(r);
  CHECK(r->first_seq == 2);
  auto msgs = store->GetMessagesBySeq(kChan, {1, 2, 99});
  REQUIRE_OK(msgs);
  REQUIRE(msgs->size() == 2);
  CHECK((*msgs)[0].text == "persist me");
  auto seq = store->FindMessageId(kChan, "b");
  REQUIRE_OK(seq);
  CHECK(*seq == 2);
  size_t count = 0;
  REQUIRE_OK(store->ForEachMessage([&](const ChannelRef& ch, const Message&) {
    CHECK(ch == kChan);
    ++count;
    return absl::OkStatus();
  }));
  CHECK(count == 2);
}

TEST_CASE("channels list per tenant, paged by name", "[store]") {
  TempDir dir;
  auto store = OpenStore(dir.path());
  for (const char* name : {"b", "a", "ab", "c"}) {
    std::vector<Message> m = {Msg("", "Alice", "x", 1), Msg("", "Bob", "y", 2)};
    REQUIRE_OK(store->AppendMessages({"default", name}, &m));
  }
  std::vector<Message> other = {Msg("", "Eve", "z", 1)};
  REQUIRE_OK(store->AppendMessages({"other", "a"}, &other));
  auto first = store->ListChannels("default", "", 2);
  REQUIRE_OK(first);
  REQUIRE(first->size() == 2);
  CHECK((*first)[0].channel == "a");
  CHECK((*first)[1].channel == "ab");
  CHECK((*first)[0].speaker_count == 2);
  auto rest = store->ListChannels("default", "ab", 10);
  REQUIRE_OK(rest);
  REQUIRE(rest->size() == 2);
  CHECK((*rest)[0].channel == "b");
  CHECK((*rest)[1].channel == "c");
  auto others = store->ListChannels("other", "", 10);
  REQUIRE(others->size() == 1);
}

TEST_CASE("a store of a newer format version is refused", "[store]") {
  TempDir dir;
  {
    rocksdb::Options o;
    o.create_if_missing = true;
    rocksdb::DB* raw = nullptr;
    REQUIRE(rocksdb::DB::Open(o, dir.path(), &raw).ok());
    std::unique_ptr<rocksdb::DB> db(raw);
    REQUIRE(db->Put(rocksdb::WriteOptions(), keys::kFormatVersionKey,
                    std::to_string(kFormatVersion + 1))
                .ok());
  }
  StoreOptions o;
  o.path = dir.path();
  REQUIRE_CODE(Store::Open(o), absl::StatusCode::kFailedPrecondition);
}

TEST_CASE("a store with an unknown column family is refused", "[store]") {
  TempDir dir;
  {
    rocksdb::Options o;
    o.create_if_missing = true;
    rocksdb::DB* raw = nullptr;
    REQUIRE(rocksdb::DB::Open(o, dir.path(), &raw).ok());
    std::unique_ptr<rocksdb::DB> db(raw);
    rocksdb::ColumnFamilyHandle* h = nullptr;
    REQUIRE(db->CreateColumnFamily(rocksdb::ColumnFamilyOptions(), "from_the_future", &h).ok());
    db->DestroyColumnFamilyHandle(h);
  }
  StoreOptions o;
  o.path = dir.path();
  REQUIRE_CODE(Store::Open(o), absl::StatusCode::kFailedPrecondition);
}

TEST_CASE("a store locked by another opener is UNAVAILABLE", "[store]") {
  TempDir dir;
  auto first = OpenStore(dir.path());
  StoreOptions o;
  o.path = dir.path();
  REQUIRE_CODE(Store::Open(o), absl::StatusCode::kUnavailable);
}

}  // namespace
}  // namespace speakermem::storage

namespace speakermem::storage {
namespace {

// `n` messages of Alice's, m0..m(n-1), appended to kChan.
std::vector<Message> AliceSays(Store* store, int n) {
  std::vector<Message> msgs;
  for (int i = 0; i < n; ++i) msgs.push_back(Msg("m" + std::to_string(i), "Alice", "x", 1000 + i));
  REQUIRE_OK(store->AppendMessages(kChan, &msgs));
  return msgs;
}

// A record of Alice's (`alice`: her speaker id) from m0.
Record AliceRecord(uint64_t number, const std::string& alice, const std::string& layer = "core") {
  Record r;
  r.record_id = RecordId(number);
  r.content = "Alice likes x";
  r.source = r.owner = alice;
  r.layer = layer;
  r.from_ids = {"m0"};
  return r;
}

TEST_CASE("a channel snapshot sees the channel as of one instant", "[store][snapshot]") {
  TempDir dir;
  auto store = OpenStore(dir.path());
  std::vector<Message> first = AliceSays(store.get(), 5);
  Record r = AliceRecord(1, first[0].speaker_id);
  SegmentApply apply;
  apply.new_cursor = 5;
  apply.next_record = 2;
  apply.new_records = {r};
  REQUIRE_OK(store->ApplySegment(kChan, apply));

  absl::StatusOr<std::unique_ptr<ChannelSnapshot>> snap = store->SnapshotChannel(kChan);
  REQUIRE_OK(snap);
  // Writes after the snapshot: more messages, another record, the cursor.
  std::vector<Message> later;
  for (int i = 5; i < 9; ++i) later.push_back(Msg("m" + std::to_string(i), "Bob", "y", 2000 + i));
  REQUIRE_OK(store->AppendMessages(kChan, &later));
  Record r2 = r;
  r2.record_id = "r000000000002";
  SegmentApply more;
  more.expected_cursor = 5;
  more.new_cursor = 9;
  more.next_record = 3;
  more.new_records = {r2};
  REQUIRE_OK(store->ApplySegment(kChan, more));

  CHECK((*snap)->info().message_count == 5);
  CHECK((*snap)->writer_state().cursor_seq == 5);
  std::vector<std::string> ids;
  uint64_t after = 0;
  do {
    absl::StatusOr<MessagePage> page = (*snap)->Messages(after, 2);
    REQUIRE_OK(page);
    for (const auto& m : page->messages) ids.push_back(m.message_id);
    after = page->next_after_seq;
  } while (after != 0);
  CHECK(ids == std::vector<std::string>{"m0", "m1", "m2", "m3", "m4"});
  absl::StatusOr<std::vector<Record>> records = (*snap)->Records();
  REQUIRE_OK(records);
  REQUIRE(records->size() == 1);
  CHECK(records->front().record_id == "r000000000001");
  // The live store has moved on.
  CHECK(store->GetChannelInfo(kChan)->message_count == 9);
  CHECK(store->SnapshotChannel(ChannelRef{"default", "nope"}).status().code() ==
        absl::StatusCode::kNotFound);
}

// A segment's records span layers (column families). A reader listing
// records while the Writer applies must see each segment whole: the query
// path's index continues after the newest id it has seen, so a segment seen
// in part lost its other records for good.
TEST_CASE("records listed while segments are applied are whole segments", "[store][snapshot]") {
  TempDir dir;
  auto store = OpenStore(dir.path());
  const std::string alice = AliceSays(store.get(), 4)[0].speaker_id;
  constexpr uint64_t kSegments = 400;
  std::atomic<bool> done{false};
  absl::Status written;  // Catch2 assertions are not thread-safe: checked after the join
  std::thread writer([&] {
    for (uint64_t s = 0; s < kSegments; ++s) {
      SegmentApply apply;
      apply.expected_cursor = s == 0 ? 0 : 1;
      apply.new_cursor = 1;
      apply.next_record = 1 + 4 * (s + 1);
      for (uint64_t k = 0; k < 4; ++k) {
        apply.new_records.push_back(AliceRecord(1 + 4 * s + k, alice, kLayerTable[k].code));
      }
      written = store->ApplySegment(kChan, apply);
      if (!written.ok()) break;
    }
    done = true;
  });
  size_t reads = 0, partial = 0;
  RecordQuery q;
  q.include_superseded = true;
  q.limit = UINT32_MAX;
  while (!done) {
    absl::StatusOr<std::vector<Record>> records = store->ListRecords(kChan, q);
    REQUIRE_OK(records);
    ++reads;
    if (records->size() % 4 != 0) ++partial;
    for (size_t i = 0; i < records->size(); ++i) {
      if ((*records)[i].record_id != RecordId(1 + i)) ++partial;
    }
  }
  writer.join();
  REQUIRE_OK(written);
  INFO(reads << " reads");
  CHECK(partial == 0);
  CHECK(store->ListRecords(kChan, q)->size() == 4 * kSegments);
}

}  // namespace
}  // namespace speakermem::storage
