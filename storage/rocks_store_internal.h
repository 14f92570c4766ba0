// The RocksDB store's class and its conversions, shared by the files that
// implement it (rocks_store.cc: opening, messages, channels; rocks_derived.cc:
// Writer state, records, vectors, deletion, maintenance; rocks_convert.cc:
// stored values and RocksDB statuses). Internal to storage/: it includes
// RocksDB and must not be included from outside the store's implementation.
#ifndef SPEAKERMEM_STORAGE_ROCKS_STORE_INTERNAL_H_
#define SPEAKERMEM_STORAGE_ROCKS_STORE_INTERNAL_H_

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "rocksdb/db.h"
#include "rocksdb/write_batch.h"
#include "storage/keys.h"
#include "storage/layers.h"
#include "storage/store.h"
#include "storage/values.pb.h"

namespace speakermem::storage::rocks_internal {

// The column family of each layer, in storage/layers.h's table order.
inline constexpr ColumnFamily kLayerFamilies[] = {ColumnFamily::kCore, ColumnFamily::kProfile,
                                                  ColumnFamily::kInteraction,
                                                  ColumnFamily::kInsight};
static_assert(sizeof(kLayerFamilies) / sizeof(kLayerFamilies[0]) == kLayerCount);

// The only conversion of RocksDB statuses to absl::Status.
absl::Status FromRocks(const rocksdb::Status& s, absl::string_view context);
Message FromStored(const StoredMessage& sm, uint64_t seq);
void ToStored(const Message& m, StoredMessage* sm);
bool InTimeRange(const Message& m, int64_t start_ms, int64_t end_ms);
// The column family of a layer's code name; INVALID_ARGUMENT for others.
absl::StatusOr<ColumnFamily> LayerFamily(const std::string& layer);
Record FromStoredRecord(const StoredRecord& sr, std::string id, std::string layer);
void ToStoredRecord(const Record& r, StoredRecord* sr);

// Cached per-channel state owned by the single writer process. Loaded from
// the store on first use; replaced only after a successful write.
struct ChannelState {
  std::mutex mu;
  bool loaded = false;                                   // guarded by mu
  bool exists = false;                                   // guarded by mu
  ChannelInfo info;                                      // guarded by mu
  absl::flat_hash_map<std::string, RosterEntry> roster;  // guarded by mu
};

class RocksStore final : public Store {
 public:
  RocksStore(const StoreOptions& options, std::unique_ptr<rocksdb::DB> db,
             std::vector<rocksdb::ColumnFamilyHandle*> handles)
      : options_(options), db_(std::move(db)), handles_(std::move(handles)) {}

  ~RocksStore() override {
    for (auto* h : handles_) db_->DestroyColumnFamilyHandle(h);
    handles_.clear();
    db_->Close();
  }

  absl::Status Init();

  absl::StatusOr<AppendResult> AppendMessages(const ChannelRef& channel,
                                              std::vector<Message>* messages) override;
  absl::StatusOr<MessagePage> ScanMessages(const ChannelRef& channel,
                                           const MessageQuery& query) override;
  absl::StatusOr<std::vector<Message>> GetMessagesBySeq(const ChannelRef& channel,
                                                        const std::vector<uint64_t>& seqs) override;
  absl::StatusOr<uint64_t> FindMessageId(const ChannelRef& channel,
                                         const std::string& message_id) override;
  absl::StatusOr<std::vector<RosterEntry>> GetRoster(const ChannelRef& channel) override;
  absl::StatusOr<std::string> ResolveSpeaker(const ChannelRef& channel,
                                             const std::string& name) override;
  absl::StatusOr<ChannelInfo> GetChannelInfo(const ChannelRef& channel) override;
  absl::StatusOr<std::vector<ChannelInfo>> ListChannels(const std::string& tenant,
                                                        const std::string& after,
                                                        uint32_t limit) override;
  absl::Status ForEachMessage(
      const std::function<absl::Status(const ChannelRef&, const Message&)>& fn) override;
  absl::Status ForEachChannel(
      const std::function<absl::Status(const ChannelRef&, const ChannelInfo&)>& fn) override;
  uint64_t ApproximateSizeBytes() override;
  absl::Status Flush() override;

  absl::StatusOr<WriterState> GetWriterState(const ChannelRef& channel) override;
  absl::Status SetFlushUntil(const ChannelRef& channel, uint64_t seq) override;
  absl::Status ApplySegment(const ChannelRef& channel, const SegmentApply& apply) override;
  absl::StatusOr<std::vector<Record>> ListRecords(const ChannelRef& channel,
                                                  const RecordQuery& query) override;
  absl::Status ReplaceDerived(const ChannelRef& channel, const std::vector<Record>& records,
                              const WriterState& state) override;
  absl::Status PutVectors(const ChannelRef& channel, VectorKind kind,
                          const std::vector<uint64_t>& ids,
                          const std::vector<std::vector<float>>& vectors) override;
  absl::Status ForEachVector(
      const std::function<absl::Status(const ChannelRef&, VectorKind, uint64_t,
                                       const std::vector<float>&)>& fn) override;
  absl::Status DropAllVectors() override;
  absl::StatusOr<std::string> GetSetting(const std::string& key) override;
  absl::Status PutSetting(const std::string& key, const std::string& value) override;
  absl::StatusOr<Record> GetRecord(const ChannelRef& channel,
                                   const std::string& record_id) override;
  absl::StatusOr<std::vector<std::pair<uint64_t, std::string>>> ListTransitions(
      const ChannelRef& ch, uint64_t after_seq, uint32_t limit) override;
  absl::Status ApplyDeletion(const ChannelRef& ch, const DeletionPlan& plan) override;
  absl::Status DeleteChannel(const ChannelRef& ch) override;
  absl::Status CompactChannel(const ChannelRef& ch) override;
  absl::Status Checkpoint(const std::string& dir) override;
  absl::StatusOr<std::vector<ParkedSegment>> ListParked(const ChannelRef& channel) override;
  absl::StatusOr<std::unique_ptr<ChannelSnapshot>> SnapshotChannel(
      const ChannelRef& channel) override;

 private:
  friend class RocksChannelSnapshot;
  // Reads as of `snap` (null: the latest).
  static rocksdb::ReadOptions ReadAt(const rocksdb::Snapshot* snap) {
    rocksdb::ReadOptions ro;
    ro.snapshot = snap;
    return ro;
  }
  absl::StatusOr<WriterState> ReadWriterState(const ChannelRef& ch,
                                              const rocksdb::Snapshot* snap = nullptr);
  absl::StatusOr<std::vector<Record>> ReadRecords(const ChannelRef& ch, const RecordQuery& q,
                                                  const rocksdb::Snapshot* snap);
  void PutRosterEntry(const ChannelRef& ch, const std::string& id, const RosterEntry& e,
                      rocksdb::WriteBatch* batch);
  void PutChannelInfo(const ChannelRef& ch, const ChannelInfo& info, rocksdb::WriteBatch* batch);
  absl::Status PutRecord(const ChannelRef& ch, const Record& r, rocksdb::WriteBatch* batch);
  // ApplyDeletion's parts, into one batch: messages deleted (their keys,
  // index entries and vectors; counts in `info` and `roster`), messages
  // rewritten (text and metadata; their vectors dropped), records deleted.
  void DeleteMessagesInto(const ChannelRef& ch, const std::vector<uint64_t>& seqs,
                          const std::map<uint64_t, Message>& by_seq, ChannelInfo* info,
                          absl::flat_hash_map<std::string, RosterEntry>* roster,
                          rocksdb::WriteBatch* batch);
  void RewriteMessagesInto(const ChannelRef& ch, const std::vector<Message>& rewrites,
                           const std::map<uint64_t, Message>& by_seq, rocksdb::WriteBatch* batch);
  absl::Status DeleteRecordsInto(const ChannelRef& ch, const std::vector<std::string>& ids,
                                 rocksdb::WriteBatch* batch);
  rocksdb::ColumnFamilyHandle* cf(ColumnFamily f) const { return handles_[static_cast<int>(f)]; }
  std::shared_ptr<ChannelState> StateFor(const ChannelRef& ch);
  // REQUIRES: state->mu held.
  absl::Status LoadState(const ChannelRef& ch, ChannelState* state);
  absl::StatusOr<ChannelInfo> ReadChannelInfo(const ChannelRef& ch, bool* exists,
                                              const rocksdb::Snapshot* snap = nullptr);
  absl::Status ScanBySpeaker(const ChannelRef& ch, const MessageQuery& q, MessagePage* page);
  absl::Status ScanAll(const ChannelRef& ch, const MessageQuery& q, MessagePage* page,
                       const rocksdb::Snapshot* snap = nullptr);

  // Constant after construction.
  const StoreOptions options_;
  const std::unique_ptr<rocksdb::DB> db_;
  std::vector<rocksdb::ColumnFamilyHandle*> handles_;

  absl::Mutex states_mu_;
  std::map<ChannelRef, std::shared_ptr<ChannelState>> states_ ABSL_GUARDED_BY(states_mu_);
};

}  // namespace speakermem::storage::rocks_internal

#endif  // SPEAKERMEM_STORAGE_ROCKS_STORE_INTERNAL_H_
