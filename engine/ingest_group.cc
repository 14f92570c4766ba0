// Memory::IngestGroup: group commit of consecutive batches of one channel
// (a stream's chunks that arrived while the previous append ran).
#include <utility>

#include "common/status_macros.h"
#include "engine/memory.h"
#include "storage/validation.h"

namespace speakermem::engine {
namespace {

// One batch's share of the group's append: its messages' results and its
// own counts, as if it had been appended alone.
storage::AppendResult BatchShare(const storage::AppendResult& group, size_t begin, size_t size) {
  storage::AppendResult r;
  r.messages.assign(group.messages.begin() + static_cast<std::ptrdiff_t>(begin),
                    group.messages.begin() + static_cast<std::ptrdiff_t>(begin + size));
  for (const storage::AppendedMessage& m : r.messages) {
    if (m.duplicate) {
      ++r.duplicates;
      continue;
    }
    ++r.stored;
    if (r.first_seq == 0) r.first_seq = m.seq;
    r.last_seq = m.seq;
  }
  return r;
}

}  // namespace

absl::Status Memory::CheckBatch(const storage::ChannelRef& channel, Batch* batch) const {
  SM_RETURN_IF_ERROR(storage::ValidateMessages(channel.channel, batch->message_channels,
                                               batch->messages, options_.limits));
  batch->checked = true;
  return absl::OkStatus();
}

std::vector<absl::StatusOr<storage::AppendResult>> Memory::IngestGroup(
    const storage::ChannelRef& channel, std::vector<Batch> batches,
    const std::function<void()>& appended) {
  std::vector<absl::StatusOr<storage::AppendResult>> results(
      batches.size(), absl::InternalError("batch not stored"));
  std::vector<storage::Message> all;
  std::vector<std::pair<size_t, size_t>> valid;  // batch, its message count
  for (size_t k = 0; k < batches.size(); ++k) {
    Batch& b = batches[k];
    if (absl::Status s = b.checked ? absl::OkStatus() : CheckBatch(channel, &b); !s.ok()) {
      results[k] = std::move(s);
      continue;
    }
    valid.emplace_back(k, b.messages.size());
    for (auto& m : b.messages) {
      m.seq = 0;
      all.push_back(std::move(m));
    }
  }
  if (valid.empty()) return results;
  absl::StatusOr<storage::AppendResult> group = store_->AppendMessages(channel, &all);
  if (appended) appended();
  if (!group.ok()) {
    for (const auto& [k, size] : valid) results[k] = group.status();
    return results;
  }
  IndexAppended(channel, &all, *group);
  if (valid.size() == 1) {  // a batch alone (Ingest): the whole result is its
    results[valid.front().first] = std::move(group);
    return results;
  }
  size_t begin = 0;
  for (const auto& [k, size] : valid) {
    results[k] = BatchShare(*group, begin, size);
    begin += size;
  }
  return results;
}

}  // namespace speakermem::engine
