// The record index shared by the Writer and the query path
// (recordindex/): what Append indexes and unlinks, and how ChannelIndexes
// keeps a channel's index current on a real store: the Writer's fold without
// a store read, a reader catching up on what others wrote, a rebuild after
// the records were rewritten under it, and Forget.
#include <catch2/catch.hpp>

#include "recordindex/channel_indexes.h"
#include "storage/record_id.h"
#include "tests/test_util.h"
#include "tests/unit/test_store.h"
#include "text/text.h"

namespace speakermem::recordindex {
namespace {

storage::Record Rec(uint64_t n, const std::string& owner, const std::string& text,
                    const std::string& supersedes = "") {
  storage::Record r;
  r.record_id = storage::RecordId(n);
  r.owner = r.source = owner;
  r.layer = "core";
  r.content = text;
  r.from_ids = {"m1"};
  if (!supersedes.empty()) r.supersedes = {supersedes};
  return r;
}

TEST_CASE("Append indexes heads and nodes, and a chain link unlinks the old head",
          "[recordindex]") {
  RecordIndex idx;
  idx.Append(
      {Rec(1, "dana", "Dana plans the offsite in Lisbon"), Rec(2, "omar", "Omar is vegetarian")});
  CHECK(idx.head_count == 2);
  CHECK(idx.Find(storage::RecordId(2))->owner == "omar");
  CHECK(idx.Find("r999") == nullptr);
  CHECK(idx.postings.at(text::Stem("lisbon")) == std::vector<size_t>{0});
  CHECK(idx.head_keys.count({"dana", "core", "dana plans the offsite in lisbon"}) == 1);

  idx.Append({Rec(3, "dana", "Dana moved the offsite to Porto", storage::RecordId(1))});
  CHECK(idx.records.size() == 3);
  CHECK(idx.head_count == 2);
  CHECK(idx.records[0].superseded_by == storage::RecordId(3));
  CHECK(idx.heads_by_owner.at("dana") == std::vector<size_t>{2});
  CHECK(idx.postings.at(text::Stem("lisbon")).empty());
  CHECK(idx.node_postings.at(text::Stem("lisbon")) == std::vector<size_t>{0});  // history kept
  CHECK(idx.nodes_by_owner.at("dana") == std::vector<size_t>{0, 2});
  CHECK(idx.head_keys.count({"dana", "core", "dana plans the offsite in lisbon"}) == 0);
  // Token ids are interned once and ascend per record.
  for (const auto& ids : idx.token_ids) CHECK(std::is_sorted(ids.begin(), ids.end()));
}

class Channel {
 public:
  Channel() : store_(testing::OpenTestStore(dir_.path())) {
    std::vector<storage::Message> msgs(1);
    msgs[0].message_id = "m1";
    msgs[0].speaker = "Dana";
    msgs[0].text = "hello";
    msgs[0].timestamp_ms = 1000;
    REQUIRE(store_->AppendMessages(ch_, &msgs).ok());
  }

  // Applies `records` as one Writer segment; returns the apply.
  storage::SegmentApply Write(std::vector<storage::Record> records) {
    storage::WriterState st = *store_->GetWriterState(ch_);
    storage::SegmentApply apply;
    apply.expected_cursor = st.cursor_seq;
    apply.new_cursor = 1;
    apply.next_record = st.next_record;
    for (const auto& r : records) {
      apply.next_record = std::max(apply.next_record, storage::RecordNumber(r.record_id) + 1);
      for (const auto& old : r.supersedes) apply.superseded.emplace_back(old, r.record_id);
    }
    apply.new_records = std::move(records);
    REQUIRE(store_->ApplySegment(ch_, apply).ok());
    return apply;
  }

  size_t Indexed(ChannelIndexes* indexes) {
    auto view = indexes->Current(ch_);
    REQUIRE(view.ok());
    return (*view)->records.size();
  }

  testing::TempDir dir_;
  std::unique_ptr<storage::Store> store_;
  storage::ChannelRef ch_{"default", "c"};
};

// A Writer apply at record counter 2 that the store never got.
storage::SegmentApply Unwritten() {
  storage::SegmentApply a;
  a.next_record = 3;
  a.new_records = {Rec(2, "omar", "Omar is vegetarian")};
  return a;
}

TEST_CASE("ChannelIndexes: the Writer's fold, readers catching up, rebuilds and Forget",
          "[recordindex]") {
  Channel c;
  ChannelIndexes indexes(c.store_.get());
  c.Write({Rec(1, "dana", "Dana plans the offsite in Lisbon")});
  REQUIRE(c.Indexed(&indexes) == 1);  // built from the store

  SECTION("a fold appends what the Writer applied, without reading the store") {
    // Folded but never written: only the fold can have put it there.
    storage::SegmentApply ghost = Unwritten();
    indexes.Fold(c.ch_, ghost, 2);
    CHECK(c.Indexed(&indexes) == 2);
    // A fold at a counter the index does not reflect is left to the store.
    ghost.new_records = {Rec(5, "omar", "Omar likes Porto")};
    indexes.Fold(c.ch_, ghost, 4);
    CHECK(c.Indexed(&indexes) == 2);
  }
  SECTION("what others wrote is appended, chain links included") {
    c.Write({Rec(2, "dana", "Dana moved the offsite to Porto", storage::RecordId(1))});
    auto view = indexes.Current(c.ch_);
    REQUIRE(view.ok());
    CHECK((*view)->records.size() == 2);
    CHECK((*view)->head_count == 1);
    CHECK(!(*view)->records[0].active());
  }
  SECTION("records rewritten under the index are read again") {
    storage::WriterState st = *c.store_->GetWriterState(c.ch_);
    st.next_record = 3;
    REQUIRE(c.store_
                ->ReplaceDerived(
                    c.ch_, {Rec(1, "dana", "Dana wants Porto"), Rec(2, "omar", "Omar cooks")}, st)
                .ok());
    auto view = indexes.Current(c.ch_);
    REQUIRE(view.ok());
    CHECK((*view)->records.size() == 2);
    CHECK((*view)->records[0].content == "Dana wants Porto");
  }
  SECTION("Forget drops the index; the next reader builds it from the store") {
    indexes.Fold(c.ch_, Unwritten(), 2);
    REQUIRE(c.Indexed(&indexes) == 2);
    indexes.Forget(c.ch_);
    CHECK(c.Indexed(&indexes) == 1);
  }
  SECTION("vectors are attached to the records that lack one, once") {
    size_t attached = 0;
    ChannelIndexes::AttachFn attach = [&](const std::vector<storage::Record>& records,
                                          std::vector<ChannelIndexes::Vector>* out) {
      attached += records.size();
      for (size_t i = 0; i < records.size(); ++i) {
        out->push_back(std::make_shared<const std::vector<float>>(1, 1.0f));
      }
      return absl::OkStatus();
    };
    REQUIRE(indexes.Current(c.ch_, attach).ok());
    CHECK(attached == 1);
    storage::SegmentApply a = c.Write({Rec(2, "omar", "Omar is vegetarian")});
    indexes.Fold(c.ch_, a, 2);
    auto view = indexes.Current(c.ch_, attach);
    REQUIRE(view.ok());
    CHECK(attached == 2);
    CHECK((*view)->vectors.size() == 2);
  }
}

}  // namespace
}  // namespace speakermem::recordindex
