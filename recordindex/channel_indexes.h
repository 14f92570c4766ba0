// Every channel's record index (record_index.h), shared by the Writer and
// the query path: built once from the store, then kept current in place,
// by the Writer folding in what it just applied and by readers appending
// what was written since they last looked (corrections, another process's
// Writer, a fold that found the index behind). Readers hold an IndexView (a
// shared lock); one updater at a time reads the store and embeds outside the
// lock, then appends under the exclusive lock.
#ifndef SPEAKERMEM_RECORDINDEX_CHANNEL_INDEXES_H_
#define SPEAKERMEM_RECORDINDEX_CHANNEL_INDEXES_H_

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <vector>

#include "absl/status/statusor.h"
#include "recordindex/record_index.h"
#include "storage/store.h"

namespace speakermem::recordindex {

// One channel's index and its locks.
struct ChannelIndex {
  std::mutex update_mu;  // one updater at a time; it alone writes `index`
  std::shared_mutex mu;  // shared: readers; exclusive: appending
  uint64_t ticket = 0;   // the build's order (ChannelIndexes::Forget)
  RecordIndex index;
};

// A hold on a channel's index: it stays alive and unchanged while the view
// lives. Do not keep one across a model call: appends wait for it.
class IndexView {
 public:
  explicit IndexView(std::shared_ptr<ChannelIndex> c) : c_(std::move(c)), lock_(c_->mu) {}
  const RecordIndex& operator*() const { return c_->index; }
  const RecordIndex* operator->() const { return &c_->index; }

 private:
  std::shared_ptr<ChannelIndex> c_;
  std::shared_lock<std::shared_mutex> lock_;
};

// Thread-safe. The store must outlive it.
class ChannelIndexes {
 public:
  using Vector = std::shared_ptr<const std::vector<float>>;
  // Gives each of `records` its vector (into `out`, one per record).
  using AttachFn = std::function<absl::Status(const std::vector<storage::Record>& records,
                                              std::vector<Vector>* out)>;

  explicit ChannelIndexes(storage::Store* store) : store_(store) {}

  // The channel's index as of the store's Writer state now: what was written
  // since appended in place; everything read again when it was rewritten
  // under the index (a re-derivation or a deletion). With `attach`, records
  // without a vector get one first (the query path's embeddings).
  absl::StatusOr<IndexView> Current(const storage::ChannelRef& ch, const AttachFn& attach = {});
  // Folds a segment the Writer applied at record counter `before` into the
  // channel's index when the index reflects that counter (otherwise the
  // next Current reads the store). No store read.
  void Fold(const storage::ChannelRef& ch, const storage::SegmentApply& apply, uint64_t before);
  // Drops the channel's index; a build begun before this is not kept.
  void Forget(const storage::ChannelRef& ch);

 private:
  // The records appended since `prev` when its newest record is still there
  // unchanged and every chain link of the new ones points at a known record;
  // nullopt otherwise (the caller reads everything).
  absl::StatusOr<std::optional<std::vector<storage::Record>>> NewerRecords(
      const storage::ChannelRef& ch, const RecordIndex& prev, uint64_t next_record);
  // Under c->update_mu: brings `c` up to `state`; false when it must be
  // rebuilt instead.
  absl::StatusOr<bool> CatchUp(const storage::ChannelRef& ch, ChannelIndex* c, uint64_t next_record,
                               const AttachFn& attach);
  absl::StatusOr<std::shared_ptr<ChannelIndex>> Build(const storage::ChannelRef& ch,
                                                      const AttachFn& attach);

  storage::Store* const store_;
  std::atomic<uint64_t> ticket_{0};
  std::mutex mu_;
  std::map<storage::ChannelRef, std::shared_ptr<ChannelIndex>> channels_;  // guarded by mu_
  std::map<storage::ChannelRef, uint64_t> min_ticket_;  // set by Forget; guarded by mu_
};

}  // namespace speakermem::recordindex

#endif  // SPEAKERMEM_RECORDINDEX_CHANNEL_INDEXES_H_
