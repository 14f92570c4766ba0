// The memory engine: the domain object behind the gRPC service. It owns the
// store and the indexes and implements every RPC's behaviour in terms of
// plain types, so the server layer only converts and maps statuses.
#ifndef SPEAKERMEM_ENGINE_MEMORY_H_
#define SPEAKERMEM_ENGINE_MEMORY_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include "absl/strings/string_view.h"
#include <vector>

#include "absl/status/statusor.h"
#include "common/clock.h"
#include "llm/config.h"
#include "retrieval/retriever.h"
#include "retrieval/stages.h"
#include "storage/store.h"
#include "storage/types.h"
#include "storage/validation.h"
#include "writer/writer_service.h"

namespace prometheus {
class Registry;
}

namespace speakermem::retrieval {
class LexicalIndex;
}

namespace speakermem::engine {

struct MemoryOptions {
  storage::StoreOptions store;
  storage::IngestLimits limits;
  // Page size when a request gives none. Default: 100.
  uint32_t default_page_size = 100;
  // Largest page a request may ask for; larger asks are clamped. Default: 1000.
  uint32_t max_page_size = 1000;
  // System 1 top-k when a query gives none (paper main config). Default: 10.
  uint32_t default_top_k = 10;
  // Largest top-k a query may ask for; larger asks are INVALID_ARGUMENT.
  // Default: 200.
  uint32_t max_top_k = 200;
  // Model endpoints of the query stages and the Writer (offline by default).
  llm::ModelsConfig models;
  writer::WriterOptions writer;
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

struct QueryParams {
  storage::ChannelRef channel;
  std::string question;
  std::string asker;
  int64_t start_ms = 0;
  int64_t end_ms = 0;
  uint32_t top_k = 0;  // 0 = default
};

struct QueryResult {
  std::string answer;
  bool abstained = false;
  std::vector<std::string> cited_ids;
  retrieval::RetrievalResult retrieval;  // evidence and the trace of every stage
};

// Safe for concurrent use.
class Memory {
 public:
  // Opens the store and builds the configured model stages (`metrics` may
  // be null). Indexes are empty until RebuildIndexes. FAILED_PRECONDITION
  // when a stage's API key variable is unset.
  static absl::StatusOr<std::unique_ptr<Memory>> Open(const MemoryOptions& options,
                                                      Clock* clock,
                                                      llm::LlmMetrics* metrics = nullptr,
                                                      prometheus::Registry* registry = nullptr);

  // Starts / stops the Writer's workers (Stop lets in-flight segments finish;
  // pending work stays in the store).
  absl::Status StartWriter();
  void StopWriter();
  ~Memory();

  // Reloads every in-memory index from the store; `progress` (may be empty)
  // is called with the count of messages loaded so far, every 10,000.
  absl::Status RebuildIndexes(const std::function<void(uint64_t)>& progress);

  // Validates the whole batch, then appends it atomically and durably.
  // INVALID_ARGUMENT "messages[i].field: reason" and nothing written when any
  // message is bad. `message_channels` as in storage::ValidateMessages.
  absl::StatusOr<storage::AppendResult> Ingest(
      const storage::ChannelRef& channel,
      const std::vector<absl::string_view>& message_channels,
      std::vector<storage::Message> messages);

  // A page of the channel's messages in seq order, with the token of the next
  // page (empty at the end). NOT_FOUND for an unknown channel,
  // INVALID_ARGUMENT for a malformed token or an inverted time range.
  absl::StatusOr<storage::MessagePage> GetMessages(const storage::ChannelRef& channel,
                                                   const GetMessagesParams& params,
                                                   std::string* next_page_token);

  absl::StatusOr<std::vector<storage::RosterEntry>> GetRoster(
      const storage::ChannelRef& channel);

  absl::StatusOr<std::vector<storage::ChannelInfo>> ListChannels(
      const std::string& tenant, uint32_t page_size, const std::string& page_token,
      std::string* next_page_token);

  // Answers from System 1: BM25 evidence, then the configured Answer stage
  // (offline: quotes the best supporting message with speaker and time, and
  // abstains when nothing supports an answer).
  absl::StatusOr<QueryResult> Query(const QueryParams& params);

  // See WriterService::Flush. NOT_FOUND for an unknown channel.
  absl::StatusOr<storage::WriterState> Flush(const storage::ChannelRef& channel, bool wait,
                                             std::chrono::milliseconds timeout,
                                             uint64_t* newest_seq);

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

  storage::Store* store() { return store_.get(); }
  const MemoryOptions& options() const { return options_; }

 private:
  Memory(const MemoryOptions& options, Clock* clock, std::unique_ptr<storage::Store> store,
         retrieval::QueryStages stages);
  absl::Status CheckChannel(const storage::ChannelRef& channel);

  const MemoryOptions options_;
  Clock* const clock_;
  const std::unique_ptr<storage::Store> store_;
  const std::unique_ptr<retrieval::LexicalIndex> lexical_;
  const std::unique_ptr<retrieval::Retriever> retriever_;
  const retrieval::QueryStages stages_;
  std::unique_ptr<writer::WriterService> writer_;  // set once by Open
};

}  // namespace speakermem::engine

#endif  // SPEAKERMEM_ENGINE_MEMORY_H_
