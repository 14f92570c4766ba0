// The store: RocksDB, the source of truth for both tracks (DESIGN 5).
#ifndef SPEAKERMEM_STORAGE_STORE_H_
#define SPEAKERMEM_STORAGE_STORE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "storage/types.h"

namespace speakermem::storage {

// Column families. The numeric order is the on-disk order of creation:
// never reorder, only append. kColumnFamilyNames holds their names.
enum class ColumnFamily : int {
  kDefault = 0,      // store-wide keys (format version)
  kEpisodic = 1,     // System 1 messages: <chan> seq
  kCore = 2,         // derived layer per_speaker_core
  kProfile = 3,      // derived layer per_speaker_profile
  kInteraction = 4,  // derived layer group_interaction
  kInsight = 5,      // derived layer group_insight
  kMeta = 6,         // channel info, roster, counters, Writer cursors
  kIndex = 7,        // secondary keys: by message id, speaker, session/turn
  kVectors = 8,      // embeddings of messages and records
};
inline constexpr int kNumColumnFamilies = 9;
extern const char* const kColumnFamilyNames[kNumColumnFamilies];

// The on-disk format this build writes. A store with a newer version is
// refused; an older one is upgraded when a later version defines how.
inline constexpr int kFormatVersion = 2;

struct StoreOptions {
  // Directory of the database; created when missing.
  std::string path;
  // fsync the WAL on every write batch before acknowledging it. With false an
  // acknowledged batch survives a process crash (the WAL is written before
  // the acknowledgement) but not a power loss or kernel crash.
  // Default: false.
  bool sync = false;
  // Shared block cache for reads (data, index and filter blocks).
  // Default: 256 MiB.
  size_t block_cache_bytes = 256u << 20;
  // Background compaction and flush threads. Default: 2.
  int background_threads = 2;
};

// Thread-safe: all methods may be called concurrently. Appends to one channel
// are serialized internally; different channels append in parallel.
// A read-only view of one channel at one instant (Store::SnapshotChannel).
// Not safe for concurrent use; holds the store's snapshot until destroyed.
class ChannelSnapshot {
 public:
  virtual ~ChannelSnapshot() = default;
  virtual const ChannelInfo& info() const = 0;
  virtual const WriterState& writer_state() const = 0;
  // Up to `limit` messages after `after_seq`, in seq order
  // (next_after_seq 0: no more).
  virtual absl::StatusOr<MessagePage> Messages(uint64_t after_seq, uint32_t limit) = 0;
  // Every record, superseded ones included, in creation order.
  virtual absl::StatusOr<std::vector<Record>> Records() = 0;
};

class Store {
 public:
  // Opens (creating if missing) the database at options.path.
  // FAILED_PRECONDITION when the store has a newer format version;
  // UNAVAILABLE when RocksDB cannot open it (for example, locked by another
  // process).
  static absl::StatusOr<std::unique_ptr<Store>> Open(const StoreOptions& options);

  virtual ~Store() = default;

  // Appends messages to a channel in one atomic, durable write: each
  // message, its secondary keys, the roster and channel counters. Messages
  // whose message_id is already stored (or repeated earlier in `messages`)
  // are reported as duplicates and not written. Fills seq, and message_id
  // when empty, in `messages` for the stored ones.
  // REQUIRES: messages were validated (ValidateMessages).
  virtual absl::StatusOr<AppendResult> AppendMessages(const ChannelRef& channel,
                                                      std::vector<Message>* messages) = 0;

  // A page of messages in seq order. NOT_FOUND when the channel does not
  // exist.
  virtual absl::StatusOr<MessagePage> ScanMessages(const ChannelRef& channel,
                                                   const MessageQuery& query) = 0;

  // Messages by sequence number, in the order asked; missing ones are
  // skipped.
  virtual absl::StatusOr<std::vector<Message>> GetMessagesBySeq(
      const ChannelRef& channel, const std::vector<uint64_t>& seqs) = 0;

  // Seq of the message with client id `message_id`; NOT_FOUND when absent.
  virtual absl::StatusOr<uint64_t> FindMessageId(const ChannelRef& channel,
                                                 const std::string& message_id) = 0;

  // The channel's roster ordered by speaker id. NOT_FOUND for an unknown
  // channel.
  virtual absl::StatusOr<std::vector<RosterEntry>> GetRoster(const ChannelRef& channel) = 0;

  // Resolves a speaker id or display-name alias to the roster's speaker id.
  // NOT_FOUND when neither matches.
  virtual absl::StatusOr<std::string> ResolveSpeaker(const ChannelRef& channel,
                                                     const std::string& name) = 0;

  virtual absl::StatusOr<ChannelInfo> GetChannelInfo(const ChannelRef& channel) = 0;

  // Channels of `tenant` in name order, strictly after `after`, at most
  // `limit`.
  virtual absl::StatusOr<std::vector<ChannelInfo>> ListChannels(const std::string& tenant,
                                                                const std::string& after,
                                                                uint32_t limit) = 0;

  // Calls `fn` for every channel of every tenant.
  virtual absl::Status ForEachChannel(
      const std::function<absl::Status(const ChannelRef&, const ChannelInfo&)>& fn) = 0;

  // Calls `fn` for every stored message of every channel of every tenant,
  // each channel's messages in seq order. Stops and returns the first non-OK
  // status `fn` returns. Used to rebuild in-memory indexes at start.
  virtual absl::Status ForEachMessage(
      const std::function<absl::Status(const ChannelRef&, const Message&)>& fn) = 0;

  // ---------------------------------------------------------------- System 2

  // The channel's Writer state (zeros when the Writer never ran on it).
  virtual absl::StatusOr<WriterState> GetWriterState(const ChannelRef& channel) = 0;

  // Raises flush_until to `seq` (never lowers it), durably.
  virtual absl::Status SetFlushUntil(const ChannelRef& channel, uint64_t seq) = 0;

  // Applies one Writer step atomically (see SegmentApply). ABORTED when the
  // cursor is not at expected_cursor (the step was applied already, or
  // another writer moved it); nothing is written then.
  virtual absl::Status ApplySegment(const ChannelRef& channel, const SegmentApply& apply) = 0;

  // Replaces the channel's whole derived state in one write batch: every
  // record, record index key and parked segment of the channel is deleted,
  // then `records` are written and the Writer state set to `state`.
  virtual absl::Status ReplaceDerived(const ChannelRef& channel, const std::vector<Record>& records,
                                      const WriterState& state) = 0;

  // Records in record-id (creation) order after query.after_id, filtered;
  // every layer read as of one instant (a segment's records all or none).
  virtual absl::StatusOr<std::vector<Record>> ListRecords(const ChannelRef& channel,
                                                          const RecordQuery& query) = 0;

  // NOT_FOUND for an unknown record id.
  virtual absl::StatusOr<Record> GetRecord(const ChannelRef& channel,
                                           const std::string& record_id) = 0;

  virtual absl::StatusOr<std::vector<ParkedSegment>> ListParked(const ChannelRef& channel) = 0;
  // One channel as of one instant (a store snapshot; writes after it are
  // not seen): what an export streams, so its header agrees with its body.
  // NOT_FOUND for an unknown channel.
  virtual absl::StatusOr<std::unique_ptr<ChannelSnapshot>> SnapshotChannel(
      const ChannelRef& channel) = 0;
  // Applies `plan` in one atomic, durable write. Message seqs not stored
  // are ignored.
  virtual absl::Status ApplyDeletion(const ChannelRef& channel, const DeletionPlan& plan) = 0;
  // Removes every key of the channel in every column family (messages,
  // records, vectors, roster, cursors, parked segments, transitions).
  // NOT_FOUND for an unknown channel.
  virtual absl::Status DeleteChannel(const ChannelRef& channel) = 0;
  // A consistent checkpoint of the whole store in `dir` (which must not
  // exist): hard links to the immutable files plus a copy of the rest.
  virtual absl::Status Checkpoint(const std::string& dir) = 0;
  // Pushes the channel's key ranges through compaction to the bottom level,
  // so deleted bytes leave the disk.
  virtual absl::Status CompactChannel(const ChannelRef& channel) = 0;
  // Captured Writer transitions (JSON) by segment first seq, in order, from
  // the first after `after_seq`, at most `limit`.
  virtual absl::StatusOr<std::vector<std::pair<uint64_t, std::string>>> ListTransitions(
      const ChannelRef& channel, uint64_t after_seq, uint32_t limit) = 0;

  // ---------------------------------------------------------------- vectors

  // Vector kinds in the vectors family.
  enum class VectorKind : char { kMessage = 'm', kRecord = 'r' };

  // Stores vectors under ids (message seqs, or record numbers) in one batch.
  virtual absl::Status PutVectors(const ChannelRef& channel, VectorKind kind,
                                  const std::vector<uint64_t>& ids,
                                  const std::vector<std::vector<float>>& vectors) = 0;
  // Every stored vector of every channel, channel by channel in id order.
  virtual absl::Status ForEachVector(
      const std::function<absl::Status(const ChannelRef&, VectorKind, uint64_t id,
                                       const std::vector<float>&)>& fn) = 0;
  // Removes every vector of every channel (after an embedding model change).
  virtual absl::Status DropAllVectors() = 0;
  // Store-wide string settings (default family), e.g. the embedding model's
  // fingerprint. Empty when unset.
  virtual absl::StatusOr<std::string> GetSetting(const std::string& key) = 0;
  virtual absl::Status PutSetting(const std::string& key, const std::string& value) = 0;

  // Approximate bytes on disk plus in memtables.
  virtual uint64_t ApproximateSizeBytes() = 0;

  // Flushes memtables; used by tests and before shutdown.
  virtual absl::Status Flush() = 0;
};

}  // namespace speakermem::storage

#endif  // SPEAKERMEM_STORAGE_STORE_H_
