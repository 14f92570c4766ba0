// Store::SnapshotChannel: one channel read as of one RocksDB snapshot.
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "storage/rocks_store_internal.h"

namespace speakermem::storage::rocks_internal {

class RocksChannelSnapshot final : public ChannelSnapshot {
 public:
  RocksChannelSnapshot(RocksStore* store, ChannelRef ch)
      : store_(store), ch_(std::move(ch)), snap_(store->db_->GetSnapshot()) {}
  ~RocksChannelSnapshot() override { store_->db_->ReleaseSnapshot(snap_); }

  absl::Status Load() {
    bool exists = false;
    SM_ASSIGN_OR_RETURN(info_, store_->ReadChannelInfo(ch_, &exists, snap_));
    if (!exists) return absl::NotFoundError(absl::StrCat("channel '", ch_.channel, "' not found"));
    SM_ASSIGN_OR_RETURN(state_, store_->ReadWriterState(ch_, snap_));
    return absl::OkStatus();
  }

  const ChannelInfo& info() const override { return info_; }
  const WriterState& writer_state() const override { return state_; }

  absl::StatusOr<MessagePage> Messages(uint64_t after_seq, uint32_t limit) override {
    MessageQuery q;
    q.after_seq = after_seq;
    q.limit = limit;
    MessagePage page;
    SM_RETURN_IF_ERROR(store_->ScanAll(ch_, q, &page, snap_));
    return page;
  }

  absl::StatusOr<std::vector<Record>> Records() override {
    RecordQuery all;
    all.include_superseded = true;
    all.limit = UINT32_MAX;
    return store_->ReadRecords(ch_, all, snap_);
  }

 private:
  RocksStore* const store_;
  const ChannelRef ch_;
  const rocksdb::Snapshot* const snap_;
  ChannelInfo info_;
  WriterState state_;
};

absl::StatusOr<std::unique_ptr<ChannelSnapshot>> RocksStore::SnapshotChannel(
    const ChannelRef& channel) {
  auto snap = std::make_unique<RocksChannelSnapshot>(this, channel);
  SM_RETURN_IF_ERROR(snap->Load());
  return std::unique_ptr<ChannelSnapshot>(std::move(snap));
}

}  // namespace speakermem::storage::rocks_internal
