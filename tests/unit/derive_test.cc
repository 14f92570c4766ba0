// The derivation of one segment (writer/derive.h) on a real store, without
// the Writer's threads: the offline Writer's records applied and folded into
// the channel's record index, an UPDATE against a head of an earlier segment, and a model
// that keeps failing (parked, attempts and backoff) or is stopped.
#include "writer/derive.h"

#include <catch2/catch.hpp>

#include "storage/record_id.h"
#include "tests/test_util.h"
#include "tests/unit/test_store.h"
#include "writer/correction.h"
#include "writer/rederive.h"

namespace speakermem::writer {
namespace {

using storage::ChannelRef;

class Channel {
 public:
  Channel() : store_(testing::OpenTestStore(dir_.path())) {
    indexes_ = std::make_unique<recordindex::ChannelIndexes>(store_.get());
  }

  // Appends messages (speaker, text) and returns them as one segment.
  Segment Say(const std::vector<std::pair<std::string, std::string>>& lines) {
    std::vector<storage::Message> msgs;
    for (const auto& [speaker, text] : lines) {
      storage::Message m;
      m.message_id = "m" + std::to_string(++said_);
      m.speaker = speaker;
      m.text = text;
      m.timestamp_ms = 1000 * said_;
      m.session = "s1";
      msgs.push_back(m);
    }
    REQUIRE(store_->AppendMessages(ch_, &msgs).ok());
    return Segment{msgs};
  }

  storage::WriterState State() {
    auto st = store_->GetWriterState(ch_);
    REQUIRE(st.ok());
    return *st;
  }

  Derivation Derive(const Segment& seg, WriterModel* model, const DeriveHooks& hooks) {
    return DeriveSegment(store_.get(), indexes_.get(), ch_, seg, model, options_, hooks, false);
  }

  // Derives `seg` with `model` and applies it, as a Writer worker would.
  Derivation DeriveAndApply(const Segment& seg, WriterModel* model, std::string* outcome,
                            const DeriveHooks& hooks = {}) {
    const storage::WriterState st = State();
    Derivation d =
        DeriveSegment(store_.get(), indexes_.get(), ch_, seg, model, options_, hooks, true);
    storage::SegmentApply apply = ApplyFor(d, seg, st, 5000, outcome);
    REQUIRE(store_->ApplySegment(ch_, apply).ok());
    indexes_->Fold(ch_, apply, st.next_record);
    return d;
  }

  std::vector<storage::Record> Records(bool with_superseded) {
    storage::RecordQuery q;
    q.include_superseded = with_superseded;
    q.limit = UINT32_MAX;
    auto r = store_->ListRecords(ch_, q);
    REQUIRE(r.ok());
    return *r;
  }

  storage::Store* store() { return store_.get(); }
  const ChannelRef& channel() const { return ch_; }

  // The channel's index as the Writer holds it: heads, and how many
  // records it has (current and superseded), without a store read.
  std::pair<size_t, size_t> Indexed() {
    auto view = indexes_->Current(ch_);
    REQUIRE(view.ok());
    return {(*view)->head_count, (*view)->records.size()};
  }

  WriterOptions options_;
  std::unique_ptr<recordindex::ChannelIndexes> indexes_;

 private:
  testing::TempDir dir_;
  std::unique_ptr<storage::Store> store_;
  ChannelRef ch_{"default", "c"};
  int said_ = 0;
};

class FailingModel final : public WriterModel {
 public:
  explicit FailingModel(bool invalid_json) : invalid_json_(invalid_json) {}
  absl::StatusOr<WriterOutput> Write(const WriterInput&, llm::StageCall*) override {
    ++calls;
    if (!invalid_json_) return absl::UnavailableError("model endpoint down");
    WriterOutput out;
    out.raw_text = "Sure! Here are the actions you asked for";
    out.parse_error = "no JSON array";
    return out;
  }
  int calls = 0;

 private:
  bool invalid_json_;
};

TEST_CASE("a segment derived without threads: records applied, then an UPDATE of a head",
          "[writer][derive]") {
  Channel c;
  auto offline = NewOfflineWriter();
  std::string outcome;
  Derivation first = c.DeriveAndApply(
      c.Say({{"Dana", "We will hold the offsite in Lisbon in the week of May 18."},
             {"Omar", "I'm vegetarian, so I need a venue with real vegetarian food."},
             {"Dana", "Thanks!"}}),
      offline.get(), &outcome);
  REQUIRE(first.report.ok());
  CHECK(outcome == "applied");
  CHECK(first.attempts == 1);
  CHECK(first.trace.json_valid);
  const std::vector<storage::Record> after_first = c.Records(false);
  REQUIRE(after_first.size() == 2);
  CHECK(c.Indexed() == std::pair<size_t, size_t>{2, 2});

  Derivation second = c.DeriveAndApply(
      c.Say({{"Dana", "Change of plan: the offsite moves to Porto instead, same week."}}),
      offline.get(), &outcome);
  REQUIRE(second.report.ok());
  REQUIRE(second.report->accepted.size() == 1);
  CHECK(second.report->accepted[0].type == WriterAction::Type::kUpdate);
  const std::vector<storage::Record> all = c.Records(true);
  CHECK(all.size() == 3);
  CHECK(c.Records(false).size() == 2);  // the Lisbon plan superseded, history kept
  CHECK(c.Indexed() == std::pair<size_t, size_t>{2, 3});
}

TEST_CASE("a model that keeps failing parks the segment after its attempts, with backoff",
          "[writer][derive]") {
  Channel c;
  c.options_.max_attempts = 3;
  c.options_.retry_backoff_ms = 10;
  std::vector<int64_t> waits;
  DeriveHooks hooks;
  hooks.backoff = [&](std::chrono::milliseconds ms) {
    waits.push_back(ms.count());
    return true;
  };
  SECTION("an endpoint error") {
    FailingModel model(/*invalid_json=*/false);
    std::string outcome;
    Segment seg = c.Say({{"Dana", "I booked the venue in Porto."}});
    Derivation d = c.DeriveAndApply(seg, &model, &outcome, hooks);
    CHECK(absl::IsUnavailable(d.report.status()));
    CHECK(outcome == "parked");
    CHECK(model.calls == 3);
    CHECK(d.attempts == 3);
    CHECK(d.invalid_json == 0);
    CHECK(waits == std::vector<int64_t>{10, 20});
    CHECK(c.State().cursor_seq == seg.last_seq());  // later messages are not held up
    CHECK(c.Records(true).empty());
  }
  SECTION("output that is not the actions' JSON is counted") {
    FailingModel model(/*invalid_json=*/true);
    std::string outcome;
    Derivation d = c.DeriveAndApply(c.Say({{"Dana", "I booked it."}}), &model, &outcome, hooks);
    CHECK(absl::IsInvalidArgument(d.report.status()));
    CHECK(d.invalid_json == 3);
    CHECK_FALSE(d.trace.json_valid);
    CHECK(outcome == "parked");
  }
}

TEST_CASE("a derivation whose backoff gives up ends CANCELLED after one attempt",
          "[writer][derive]") {
  Channel c;
  FailingModel model(/*invalid_json=*/false);
  DeriveHooks hooks;
  hooks.backoff = [](std::chrono::milliseconds) { return false; };
  Derivation d = c.Derive(c.Say({{"Dana", "I booked the venue."}}), &model, hooks);
  CHECK(absl::IsCancelled(d.report.status()));
  CHECK(model.calls == 1);
}

TEST_CASE("a correction supersedes a current head with a locked operator record",
          "[writer][derive]") {
  CHECK(absl::IsInvalidArgument(CorrectionText("  \n ").status()));
  CHECK(absl::IsInvalidArgument(CorrectionText(std::string(kMaxContentBytes + 1, 'x')).status()));
  REQUIRE(CorrectionText("  Omar eats fish. ").ok());
  CHECK(*CorrectionText("  Omar eats fish. ") == "Omar eats fish.");

  storage::Record old;
  old.record_id = storage::RecordId(3);
  old.owner = "Omar";
  old.layer = "core";
  old.from_ids = {"m1"};
  storage::WriterState state;
  state.cursor_seq = 9;
  state.next_record = 7;
  absl::StatusOr<storage::SegmentApply> apply = CorrectionApply(old, "Omar eats fish.", state, 42);
  REQUIRE(apply.ok());
  REQUIRE(apply->new_records.size() == 1);
  const storage::Record& r = apply->new_records[0];
  CHECK(r.record_id == storage::RecordId(7));
  CHECK(r.operator_locked);
  CHECK(r.source == "operator");
  CHECK(r.owner == "Omar");
  CHECK(r.from_ids == std::vector<std::string>{"m1"});
  CHECK(r.supersedes == std::vector<std::string>{old.record_id});
  CHECK(apply->expected_next_record == 7);
  CHECK(apply->next_record == 8);
  CHECK(apply->new_cursor == 9);  // a correction never moves the Writer's cursor
  old.superseded_by = storage::RecordId(5);
  CHECK(absl::IsFailedPrecondition(CorrectionApply(old, "x", state, 42).status()));
}

TEST_CASE("re-derivation in a scratch store replaces the channel's records in one write",
          "[writer][derive]") {
  Channel c;
  auto offline = NewOfflineWriter();
  std::string outcome;
  c.DeriveAndApply(c.Say({{"Dana", "We will hold the offsite in Lisbon in May."},
                          {"Omar", "I'm vegetarian, so I need real vegetarian food."}}),
                   offline.get(), &outcome);
  REQUIRE(c.Records(true).size() == 2);
  testing::TempDir scratch;
  RederiveJob job{
      c.store(),          c.channel(), *c.store()->GetChannelInfo(c.channel()),
      scratch.Sub("run"), 25,          std::chrono::steady_clock::now() + std::chrono::minutes(1)};
  int segments = 0;
  SegmentRunner run = [&](storage::Store* store, recordindex::ChannelIndexes* indexes,
                          const storage::WriterState& state, const Segment& seg) {
    ++segments;
    Derivation d =
        DeriveSegment(store, indexes, c.channel(), seg, offline.get(), c.options_, {}, false);
    storage::SegmentApply apply = ApplyFor(d, seg, state, 5000, nullptr);
    return store->ApplySegment(c.channel(), apply).ok();
  };
  SECTION("the same records again, the cursor at the channel's end") {
    absl::StatusOr<storage::WriterState> out = RederiveInScratch(job, run, [] { return false; });
    REQUIRE(out.ok());
    CHECK(segments == 1);
    CHECK(out->cursor_seq == 2);
    CHECK(c.Records(true).size() == 2);
  }
  SECTION("stopping keeps the old state") {
    absl::StatusOr<storage::WriterState> out = RederiveInScratch(job, run, [] { return true; });
    CHECK(absl::IsUnavailable(out.status()));
    CHECK(segments == 0);
    CHECK(c.Records(true).size() == 2);
  }
}

}  // namespace
}  // namespace speakermem::writer
