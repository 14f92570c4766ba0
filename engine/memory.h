// The memory engine: the domain object behind the gRPC service. It owns the
// store and the indexes and implements every RPC's behaviour in terms of
// plain types, so the server layer only converts and maps statuses.
#ifndef SPEAKERMEM_ENGINE_MEMORY_H_
#define SPEAKERMEM_ENGINE_MEMORY_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <shared_mutex>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/clock.h"
#include "engine/embedder.h"
#include "llm/config.h"
#include "metrics/metrics.h"
#include "retrieval/budget_policy.h"
#include "retrieval/pipeline.h"
#include "retrieval/retriever.h"
#include "retrieval/stages.h"
#include "storage/store.h"
#include "storage/types.h"
#include "storage/validation.h"
#include "writer/writer_service.h"

namespace speakermem::retrieval {
class LexicalIndex;
}
namespace speakermem::recordindex {
class ChannelIndexes;
}

namespace speakermem::engine {

struct MemoryOptions {
  storage::StoreOptions store;
  storage::IngestLimits limits;
  // Page size when a request gives none. Default: 100.
  uint32_t default_page_size = 100;
  // Largest page a request may ask for; larger asks are clamped. Default: 1000.
  uint32_t max_page_size = 1000;
  // A query's budget defaults and caps (retrieval/budget_policy.h).
  retrieval::BudgetPolicy budgets;
  // Model endpoints of the query stages and the Writer (offline by default).
  llm::ModelsConfig models;
  writer::WriterOptions writer;
  // Dense index shards: exact vs IVF, probes.
  retrieval::VectorIndexOptions vectors;
  // System 1 recall constants (stemming, speaker field, context, feedback,
  // dense weight). Defaults: chosen by leave-one-conversation-out.
  retrieval::RecallParams recall;
  // System 2 row floors. Defaults: chosen by leave-one-conversation-out.
  retrieval::RowParams rows;
  // Where shards are saved between runs (a cache of the vectors column
  // family). Default: "<store path>.shards".
  std::string shard_dir;
  // Where Backup writes checkpoints. Default: "<store path>.backups".
  std::string backup_dir;
};

struct RecordWithChain {
  storage::Record record;
  std::vector<storage::Record> chain;  // oldest first, includes record
  std::vector<storage::Message> supporting;
};

struct GetMessagesParams {
  std::string speaker;  // id or display name; empty = all
  int64_t start_ms = 0;
  int64_t end_ms = 0;
  uint32_t page_size = 0;  // 0 = default
  std::string page_token;
};

// A query: the pipeline's request (retrieval::PipelineRequest: channel,
// question, budgets already defaulted and checked by the caller, tense,
// mode, stages, System 2 on or off, options, overrides, deadline, streaming
// callbacks; its `answer` is set by Memory::Query) and what the engine does
// before running it.
struct QueryParams : retrieval::PipelineRequest {
  // Strict freshness: wait up to fresh_timeout for the Writer to derive
  // every message stored so far before retrieving.
  bool fresh = false;
  std::chrono::milliseconds fresh_timeout{30000};
  // Read-your-writes: wait (fresh_timeout at most) until every message up
  // to this seq is indexed, dense index included. 0: no wait.
  uint64_t min_seq = 0;
};

struct QueryResult {
  std::string answer;
  bool abstained = false;
  std::vector<std::string> cited_ids;
  retrieval::PipelineResult pipeline;  // evidence of both tracks, projection, trace
};

// Safe for concurrent use.
class Memory {
 public:
  // Opens the store and builds the configured model stages (`metrics` may
  // be null). Indexes are empty until RebuildIndexes. FAILED_PRECONDITION
  // when a stage's API key variable is unset.
  static absl::StatusOr<std::unique_ptr<Memory>> Open(const MemoryOptions& options, Clock* clock,
                                                      llm::LlmMetrics* metrics = nullptr,
                                                      metrics::Registry* registry = nullptr);

  // Starts / stops the background work: the Writer's workers and the
  // embedder (Stop lets in-flight work finish; pending work stays in the
  // store).
  // Model tokens the Writer spends, by channel (set before StartWriter).
  void SetWriterUsageListener(writer::WriterService::UsageListener listener) {
    writer_->SetUsageListener(std::move(listener));
  }
  // Whether a channel's Writer segments may run now (set before StartWriter).
  void SetWriterAdmission(writer::WriterService::Admission admission) {
    writer_->SetAdmission(std::move(admission));
  }
  absl::Status StartWriter();
  void StopWriter();
  // True when every queued message embedding is done within `timeout`.
  bool WaitForEmbeddings(std::chrono::milliseconds timeout);

  // How far derivation is behind ingest: messages stored but not yet
  // derived by the Writer (a channel's partial window waits for more
  // messages or the idle flush), and messages and records not yet embedded.
  struct Lag {
    uint64_t writer_messages = 0;
    size_t embed_pending = 0;
  };
  Lag DerivationLag() const;
  ~Memory();

  // Reloads every in-memory index from the store; `progress` (may be empty)
  // is called with the count of messages loaded so far, every 10,000.
  absl::Status RebuildIndexes(const std::function<void(uint64_t)>& progress);
  // Writes the changed vector shards to disk (also done on destruction), so
  // the next start loads them instead of rebuilding.
  absl::Status SaveShards();

  // Captured Writer transitions (JSON each), paged by segment first seq.
  struct TransitionPage {
    std::vector<std::string> transitions;
    uint64_t next_after_seq = 0;  // 0: no more
  };
  absl::StatusOr<TransitionPage> ListTransitions(const storage::ChannelRef& channel,
                                                 uint64_t after_seq, uint32_t page_size);
  // "provider/model" of the Writer.
  std::string WriterName() const;

  // Deletion and edits (durable, idempotent; see docs in the proto).
  struct DeletionResult {
    uint64_t messages_deleted = 0;
    uint64_t messages_edited = 0;
    uint64_t records_deleted = 0;
    uint64_t records_updated = 0;  // support or chain links changed
    uint64_t transitions_deleted = 0;
  };
  // Deletes messages by id (unknown ids are ignored), the records left
  // without support, and captured transitions that contain them; records
  // with remaining support keep the rest of their from_ids and are marked
  // support_changed.
  absl::StatusOr<DeletionResult> DeleteMessages(const storage::ChannelRef& channel,
                                                const std::vector<std::string>& message_ids);
  // Replaces a message's text (NOT_FOUND for an unknown id); records citing
  // it are marked support_changed; transitions containing it are deleted.
  absl::StatusOr<DeletionResult> EditMessage(const storage::ChannelRef& channel,
                                             const std::string& message_id,
                                             const std::string& text);
  // Deletes a speaker (id or display name) from a channel: their messages
  // and vectors, the records they own or sourced, records left without
  // support, their roster entry and the transitions with their messages.
  // Other people's messages that mention them stay.
  absl::StatusOr<DeletionResult> ForgetSpeaker(const storage::ChannelRef& channel,
                                               const std::string& speaker);
  // Loads an exported channel into `channel`, which must not exist
  // (FAILED_PRECONDITION). Messages keep their ids (new seqs); records keep
  // ids and chains; the Writer continues after `writer_cursor_seq` (a seq
  // of the exported messages). Returns (messages, records) loaded.
  absl::StatusOr<std::pair<uint64_t, uint64_t>> ImportChannel(
      const storage::ChannelRef& channel, std::vector<storage::Message> messages,
      std::vector<storage::Record> records, uint64_t writer_cursor_seq);
  // A consistent checkpoint of the store under options().backup_dir/name;
  // returns its path and size in bytes.
  absl::StatusOr<std::pair<std::string, uint64_t>> Backup(const std::string& name);

  // Deletes the channel and everything derived from it. False when there
  // was no such channel (deleting twice is not an error).
  absl::StatusOr<bool> DeleteChannel(const storage::ChannelRef& channel);

  // Validates the whole batch, then appends it atomically and durably.
  // INVALID_ARGUMENT "messages[i].field: reason" and nothing written when any
  // message is bad. `message_channels` as in storage::ValidateMessages.
  absl::StatusOr<storage::AppendResult> Ingest(
      const storage::ChannelRef& channel, const std::vector<absl::string_view>& message_channels,
      std::vector<storage::Message> messages);

  // One batch of a group commit: its messages and each message's own
  // channel field, as in Ingest.
  struct Batch {
    std::vector<absl::string_view> message_channels;
    std::vector<storage::Message> messages;
    bool checked = false;  // CheckBatch passed: IngestGroup does not validate it again
  };
  // Validates `batch` for `channel` as IngestGroup would and marks it
  // checked. A stream checks each chunk as it reads it, so that the group's
  // append, which runs one at a time per channel, does not.
  absl::Status CheckBatch(const storage::ChannelRef& channel, Batch* batch) const;
  // Group commit (engine/ingest_group.cc): several consecutive batches of one
  // channel stored with one append and one WAL write. Each batch is
  // validated on its own unless checked already (an invalid one gets its
  // INVALID_ARGUMENT and nothing of it is written); the valid ones are
  // appended atomically, in order, and each gets the result it would have
  // had alone, a message repeated from an earlier batch of the group
  // counting as its duplicate.
  // A failed append fails every valid batch (nothing of them is written).
  // `appended` is called once the append is done (or failed), before the
  // indexing, and not when no batch is valid: a stream starts its next group
  // then, so that group's append overlaps this one's indexing.
  std::vector<absl::StatusOr<storage::AppendResult>> IngestGroup(
      const storage::ChannelRef& channel, std::vector<Batch> batches,
      const std::function<void()>& appended = nullptr);

  // A page of the channel's messages in seq order, with the token of the next
  // page (empty at the end). NOT_FOUND for an unknown channel,
  // INVALID_ARGUMENT for a malformed token or an inverted time range.
  absl::StatusOr<storage::MessagePage> GetMessages(const storage::ChannelRef& channel,
                                                   const GetMessagesParams& params,
                                                   std::string* next_page_token);

  absl::StatusOr<std::vector<storage::RosterEntry>> GetRoster(const storage::ChannelRef& channel);

  absl::StatusOr<std::vector<storage::ChannelInfo>> ListChannels(const std::string& tenant,
                                                                 uint32_t page_size,
                                                                 const std::string& page_token,
                                                                 std::string* next_page_token);

  // Runs the query pipeline (DESIGN 3) and, with `answer`, the Answer stage
  // on the composed evidence. NOT_FOUND for an unknown channel,
  // INVALID_ARGUMENT for an empty question or an inverted time range.
  // INVALID_ARGUMENT for a bad range or question, NOT_FOUND for an unknown
  // channel; with `fresh`, DEADLINE_EXCEEDED when the Writer has not caught
  // up within fresh_timeout (UNAVAILABLE while it stops).
  absl::StatusOr<QueryResult> Query(const QueryParams& params, bool answer = true);

  // See WriterService::Flush. NOT_FOUND for an unknown channel. With wait
  // and `embeddings`, also waits (within the same timeout) until the
  // embedder is idle; DEADLINE_EXCEEDED when it is not.
  absl::StatusOr<storage::WriterState> Flush(const storage::ChannelRef& channel, bool wait,
                                             std::chrono::milliseconds timeout,
                                             uint64_t* newest_seq, bool embeddings = false);

  // System 2 records in creation order, paged. INVALID_ARGUMENT for a bad
  // layer or token, NOT_FOUND for an unknown channel.
  absl::StatusOr<std::vector<storage::Record>> ListRecords(const storage::ChannelRef& channel,
                                                           storage::RecordQuery query,
                                                           const std::string& page_token,
                                                           std::string* next_page_token);
  absl::StatusOr<RecordWithChain> GetRecord(const storage::ChannelRef& channel,
                                            const std::string& record_id);
  absl::StatusOr<std::vector<storage::ParkedSegment>> ListParked(
      const storage::ChannelRef& channel);
  // See WriterService::Correct and ::Rederive.
  absl::StatusOr<storage::Record> CorrectRecord(const storage::ChannelRef& channel,
                                                const std::string& record_id,
                                                const std::string& content);
  absl::StatusOr<storage::WriterState> Rederive(const storage::ChannelRef& channel,
                                                std::chrono::milliseconds timeout);

  // The channel as of one instant, for an export: its header (info, Writer
  // cursor) agrees with the messages and records it pages. NOT_FOUND for
  // an unknown channel.
  absl::StatusOr<std::unique_ptr<storage::ChannelSnapshot>> ExportChannel(
      const storage::ChannelRef& channel);

  // Messages stored by a tenant changed by `delta`: called after each
  // Ingest, DeleteMessages, ForgetSpeaker, DeleteChannel and ImportChannel
  // that changed them (set before serving; the server's quota accounting).
  using StoredListener = std::function<void(const std::string& tenant, int64_t delta)>;
  void SetStoredListener(StoredListener listener) { stored_listener_ = std::move(listener); }
  // Messages stored per tenant, counted from the store (the listener's
  // starting point).
  absl::StatusOr<std::map<std::string, uint64_t>> StoredMessagesByTenant();
  // The store's approximate size: SST files, memtables and WAL.
  uint64_t ApproximateSizeBytes();
  // Writes the store's memtables to disk (shutdown).
  absl::Status FlushStore();

  const MemoryOptions& options() const { return options_; }

 private:
  Memory(const MemoryOptions& options, Clock* clock, std::unique_ptr<storage::Store> store,
         retrieval::QueryStages stages);
  absl::Status CheckChannel(const storage::ChannelRef& channel);

  const MemoryOptions options_;
  Clock* const clock_;
  const std::unique_ptr<storage::Store> store_;
  const std::unique_ptr<retrieval::LexicalIndex> lexical_;
  const std::unique_ptr<retrieval::VectorIndex> vectors_;
  const retrieval::QueryStages stages_;
  // One record index per channel, shared by the Writer and the query path.
  const std::unique_ptr<recordindex::ChannelIndexes> indexes_;
  const std::unique_ptr<retrieval::QueryPipeline> pipeline_;
  std::unique_ptr<writer::WriterService> writer_;  // set once by Open
  std::unique_ptr<Embedder> embedder_;             // set once by Open
  std::string embed_fingerprint_;                  // set once by Open
  std::atomic<bool> rebuilt_{false};               // RebuildIndexes ran
  // Held shared by the embedder while it writes vectors, exclusively by
  // deletions.
  std::shared_mutex write_gate_;

  struct DeletionTarget;
  absl::StatusOr<DeletionResult> RemoveData(const storage::ChannelRef& channel,
                                            const DeletionTarget& target);
  absl::Status RebuildLexical(const storage::ChannelRef& channel);
  // Indexes the messages just appended (BM25 now; embedding and the Writer
  // in the background): those of `messages` that `appended` did not find
  // duplicate, moved from.
  void IndexAppended(const storage::ChannelRef& channel, std::vector<storage::Message>* messages,
                     const storage::AppendResult& appended);

  std::string ShardDir() const;
  void ReportStored(const std::string& tenant, int64_t delta) const {
    if (stored_listener_ && delta != 0) stored_listener_(tenant, delta);
  }

  StoredListener stored_listener_;  // set before serving
};

// Identifies the embedding model: stored vectors made by another are stale.
std::string EmbedFingerprint(const llm::ModelsConfig& models);

}  // namespace speakermem::engine

#endif  // SPEAKERMEM_ENGINE_MEMORY_H_
