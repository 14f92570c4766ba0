#include "recordindex/channel_indexes.h"

#include <algorithm>

#include "common/status_macros.h"
#include "storage/record_id.h"

namespace speakermem::recordindex {

namespace {

// The counter an index holding `records` reflects, read as `counter` before
// they were listed: a segment applied in between is in the list already.
uint64_t CounterOf(const RecordIndex& idx, uint64_t counter) {
  if (idx.records.empty()) return counter;
  return std::max(counter, storage::RecordNumber(idx.records.back().record_id) + 1);
}

}  // namespace

absl::StatusOr<IndexView> ChannelIndexes::Current(const storage::ChannelRef& ch,
                                                  const AttachFn& attach) {
  // Taken before reading the state: a later ticket saw a later state.
  const uint64_t ticket = ++ticket_;
  SM_ASSIGN_OR_RETURN(storage::WriterState state, store_->GetWriterState(ch));
  std::shared_ptr<ChannelIndex> c;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = channels_.find(ch);
    if (it != channels_.end()) c = it->second;
  }
  if (c != nullptr) {
    std::unique_lock<std::mutex> update(c->update_mu);
    SM_ASSIGN_OR_RETURN(bool current, CatchUp(ch, c.get(), state.next_record, attach));
    // The view is taken before the update lock is let go: nothing is
    // appended in between.
    if (current) return IndexView(std::move(c));
  }
  auto built = std::make_shared<ChannelIndex>();
  built->ticket = ticket;
  RecordIndex& idx = built->index;
  storage::RecordQuery q;
  q.include_superseded = true;
  q.limit = UINT32_MAX;
  SM_ASSIGN_OR_RETURN(std::vector<storage::Record> records, store_->ListRecords(ch, q));
  idx.Append(std::move(records));
  idx.next_record = CounterOf(idx, state.next_record);
  if (attach) SM_RETURN_IF_ERROR(attach(idx.records, &idx.vectors));
  {
    std::lock_guard<std::mutex> lock(mu_);
    // Kept unless Forget came after the ticket, or a later build is there.
    auto floor = min_ticket_.find(ch);
    if (floor == min_ticket_.end() || ticket > floor->second) {
      auto& slot = channels_[ch];
      if (slot == nullptr || slot->ticket < ticket) slot = built;
    }
  }
  return IndexView(std::move(built));
}

absl::StatusOr<bool> ChannelIndexes::CatchUp(const storage::ChannelRef& ch, ChannelIndex* c,
                                             uint64_t next_record, const AttachFn& attach) {
  // Only updaters write the index, and this is the one: it may be read here
  // without `mu`.
  RecordIndex& idx = c->index;
  if (idx.next_record < next_record) {
    SM_ASSIGN_OR_RETURN(std::optional<std::vector<storage::Record>> fresh,
                        NewerRecords(ch, idx, next_record));
    if (!fresh.has_value()) return false;  // rewritten under it: read everything again
    std::unique_lock<std::shared_mutex> write(c->mu);
    idx.Append(std::move(*fresh));
    idx.next_record = CounterOf(idx, next_record);
  }
  if (attach && idx.vectors.size() < idx.records.size()) {
    std::vector<storage::Record> missing(idx.records.begin() + idx.vectors.size(),
                                         idx.records.end());
    std::vector<ChannelIndexes::Vector> vecs;
    SM_RETURN_IF_ERROR(attach(missing, &vecs));
    std::unique_lock<std::shared_mutex> write(c->mu);
    for (auto& v : vecs) idx.vectors.push_back(std::move(v));
  }
  return true;
}

absl::StatusOr<std::optional<std::vector<storage::Record>>> ChannelIndexes::NewerRecords(
    const storage::ChannelRef& ch, const RecordIndex& prev, uint64_t next_record) {
  if (prev.next_record >= next_record || prev.records.empty()) return std::nullopt;
  const storage::Record& last = prev.records.back();
  absl::StatusOr<storage::Record> now = store_->GetRecord(ch, last.record_id);
  if (!now.ok() || now->content != last.content || now->writer_pos != last.writer_pos) {
    return std::nullopt;
  }
  storage::RecordQuery q;
  q.include_superseded = true;
  q.limit = UINT32_MAX;
  q.after_id = last.record_id;
  SM_ASSIGN_OR_RETURN(std::vector<storage::Record> fresh, store_->ListRecords(ch, q));
  for (const auto& r : fresh) {
    for (const auto& old : r.supersedes) {
      bool known = prev.by_id.count(old) > 0 ||
                   std::any_of(fresh.begin(), fresh.end(),
                               [&](const storage::Record& f) { return f.record_id == old; });
      if (!known) return std::nullopt;
    }
  }
  return fresh;
}

void ChannelIndexes::Fold(const storage::ChannelRef& ch, const storage::SegmentApply& apply,
                          uint64_t before) {
  std::shared_ptr<ChannelIndex> c;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = channels_.find(ch);
    if (it == channels_.end()) return;  // built from the store on first use
    c = it->second;
  }
  std::unique_lock<std::mutex> update(c->update_mu);
  RecordIndex& idx = c->index;
  if (idx.next_record != before) return;
  std::vector<storage::Record> fresh = apply.new_records;
  if (!fresh.empty() && !idx.records.empty() &&
      fresh.front().record_id <= idx.records.back().record_id) {
    return;
  }
  for (const auto& [old_id, new_id] : apply.superseded) {
    for (auto& r : fresh) {
      if (r.record_id == new_id &&
          std::find(r.supersedes.begin(), r.supersedes.end(), old_id) == r.supersedes.end()) {
        r.supersedes.push_back(old_id);
      }
    }
  }
  std::unique_lock<std::shared_mutex> write(c->mu);
  idx.Append(std::move(fresh));
  idx.next_record = std::max(apply.next_record, before);
}

void ChannelIndexes::Forget(const storage::ChannelRef& ch) {
  std::lock_guard<std::mutex> lock(mu_);
  channels_.erase(ch);
  min_ticket_[ch] = ++ticket_;
}

}  // namespace speakermem::recordindex
