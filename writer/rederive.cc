#include "writer/rederive.h"

#include <algorithm>
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/log.h"
#include "storage/record_id.h"

namespace speakermem::writer {
namespace {

using storage::ChannelRef;

// Copies the channel's messages into `scratch`, which numbers them from 1;
// the live seq of each scratch seq (index 0 unused: they differ once
// messages have been deleted).
absl::StatusOr<std::vector<uint64_t>> CopySystemOne(storage::Store* live, storage::Store* scratch,
                                                    const ChannelRef& ch) {
  std::vector<uint64_t> live_seq = {0};
  storage::MessageQuery q;
  q.limit = 1000;
  for (;;) {
    absl::StatusOr<storage::MessagePage> page = live->ScanMessages(ch, q);
    if (!page.ok()) return page.status();
    if (!page->messages.empty()) {
      for (const auto& m : page->messages) live_seq.push_back(m.seq);
      std::vector<storage::Message> msgs = std::move(page->messages);
      absl::StatusOr<storage::AppendResult> r = scratch->AppendMessages(ch, &msgs);
      if (!r.ok()) return r.status();
    }
    if (page->next_after_seq == 0) break;
    q.after_seq = page->next_after_seq;
  }
  absl::Status s = scratch->SetFlushUntil(ch, live_seq.size() - 1);
  if (!s.ok()) return s;
  return live_seq;
}

// Derives every segment of the scratch channel; its final Writer state.
absl::StatusOr<storage::WriterState> DeriveAll(storage::Store* scratch, const RederiveJob& job,
                                               const SegmentRunner& run_segment,
                                               const std::function<bool()>& stopping) {
  const ChannelRef& ch = job.channel;
  recordindex::ChannelIndexes indexes(scratch);
  for (;;) {
    if (stopping()) return absl::UnavailableError("the Writer is stopping");
    if (std::chrono::steady_clock::now() >= job.deadline) {
      return absl::DeadlineExceededError("re-derivation did not finish in time");
    }
    absl::StatusOr<storage::WriterState> state = scratch->GetWriterState(ch);
    if (!state.ok()) return state.status();
    absl::StatusOr<std::optional<Segment>> seg = NextSegment(scratch, ch, *state, job.window);
    if (!seg.ok()) return seg.status();
    if (!seg->has_value()) return state;
    if (!run_segment(scratch, &indexes, *state, **seg)) {
      return absl::UnavailableError("re-derivation stopped");
    }
    absl::StatusOr<std::vector<storage::ParkedSegment>> parked = scratch->ListParked(ch);
    if (!parked.ok()) return parked.status();
    if (!parked->empty()) {
      return absl::UnavailableError(absl::StrCat(
          "re-derivation failed on messages ", parked->front().first_seq, "-",
          parked->front().last_seq, ": ", parked->front().reason, "; the old state is kept"));
    }
  }
}

}  // namespace

absl::StatusOr<storage::WriterState> RederiveInScratch(const RederiveJob& job,
                                                       const SegmentRunner& run_segment,
                                                       const std::function<bool()>& stopping) {
  const ChannelRef& ch = job.channel;
  storage::StoreOptions so;
  so.path = job.scratch_dir;
  so.block_cache_bytes = 8u << 20;
  absl::StatusOr<std::unique_ptr<storage::Store>> scratch = storage::Store::Open(so);
  if (!scratch.ok()) return scratch.status();
  absl::StatusOr<std::vector<uint64_t>> live_seq = CopySystemOne(job.live, scratch->get(), ch);
  if (!live_seq.ok()) return live_seq.status();
  absl::StatusOr<storage::WriterState> derived =
      DeriveAll(scratch->get(), job, run_segment, stopping);
  if (!derived.ok()) return derived.status();

  storage::RecordQuery all;
  all.include_superseded = true;
  all.limit = UINT32_MAX;
  absl::StatusOr<std::vector<storage::Record>> records = (*scratch)->ListRecords(ch, all);
  if (!records.ok()) return records.status();
  // Operator corrections survive, as locked records of their own.
  absl::StatusOr<std::vector<storage::Record>> old = job.live->ListRecords(ch, all);
  if (!old.ok()) return old.status();
  uint64_t next = derived->next_record;
  for (storage::Record r : *old) {
    if (!r.operator_locked || !r.active()) continue;
    r.record_id = storage::RecordId(next++);
    r.supersedes.clear();
    records->push_back(std::move(r));
  }
  absl::StatusOr<storage::WriterState> current = job.live->GetWriterState(ch);
  if (!current.ok()) return current.status();
  storage::WriterState out;
  out.cursor_seq = (*live_seq)[std::min<size_t>(derived->cursor_seq, live_seq->size() - 1)];
  out.next_record = next;
  out.flush_until = std::max(current->flush_until, job.info.last_seq);
  out.segments = derived->segments;
  absl::Status s = job.live->ReplaceDerived(ch, *records, out);
  if (!s.ok()) return s;
  LOG_INFO("re-derived channel")
      .Str("channel", ch.channel)
      .Int("records", static_cast<int64_t>(records->size()))
      .Int("segments", static_cast<int64_t>(out.segments));
  return out;
}

}  // namespace speakermem::writer
