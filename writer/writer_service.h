// The Writer worker pool (DESIGN 2.4): derives System 2 from System 1 in the
// background. Pending work lives in the store (the messages between a
// channel's newest seq and its Writer cursor), so a busy Writer delays
// derivation but never loses it and never fails ingest; the in-memory queue
// is bounded. One segment in flight per channel, many channels in parallel.
#ifndef SPEAKERMEM_WRITER_WRITER_SERVICE_H_
#define SPEAKERMEM_WRITER_WRITER_SERVICE_H_

#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "common/clock.h"
#include "metrics/metrics.h"
#include "storage/store.h"
#include "storage/types.h"
#include "writer/writer_model.h"

namespace speakermem::storage {
class Store;
}
namespace speakermem::recordindex {
class ChannelIndexes;
}

namespace speakermem::writer {

struct WriterOptions {
  // Messages per segment (the paper's Window25). Default: 25.
  size_t window = 25;
  // Worker threads. Default: 2.
  int workers = 2;
  // Channels waiting for a worker; more are picked up by the sweeper when
  // room frees. Default: 1024.
  size_t queue_capacity = 1024;
  // A channel quiet this long gets its short tail written. 0 disables.
  // Default: 30000.
  int idle_flush_ms = 30000;
  // Model attempts per segment before it is parked. Default: 3.
  int max_attempts = 3;
  // Backoff between attempts (doubles each time). Default: 500.
  int retry_backoff_ms = 500;
  // A parked segment is retried after this long. Default: 300000.
  int parked_retry_ms = 300000;
  // Current heads shown to the Writer: at most this many, within this many
  // estimated tokens. Defaults: 40, 2000.
  size_t max_heads = 40;
  size_t head_token_budget = 2000;
  // Scratch space for Rederive (a temporary store per run). Default: the
  // system temporary directory.
  std::string scratch_dir;
  // Record every applied segment's transition (messages, the heads shown,
  // the raw model output, the validation report, the applied actions) for
  // export as SFT/RL data. Default: false.
  bool capture_trajectories = false;
  // The offline (rule-based) Writer's constants; ignored with a model.
  // Defaults: chosen leave-one-network-out (OfflineWriterParams).
  OfflineWriterParams offline;
};

// Thread-safe.
class WriterService {
 public:
  // `store` and `clock` must outlive the service; `registry` may be null.
  // `indexes`: the channels' record indexes, shared with the query path
  // (null: the service keeps its own). Must outlive the service.
  static std::unique_ptr<WriterService> Create(storage::Store* store,
                                               std::unique_ptr<WriterModel> model,
                                               const WriterOptions& options, Clock* clock,
                                               metrics::Registry* registry,
                                               recordindex::ChannelIndexes* indexes = nullptr);
  virtual ~WriterService() = default;

  // Called (on a Writer thread) with the records each applied segment or
  // correction wrote to the live store, e.g. to embed them right away.
  // Set before Start().
  using RecordListener =
      std::function<void(const storage::ChannelRef&, const std::vector<storage::Record>&)>;
  virtual void SetRecordListener(RecordListener listener) = 0;
  // Called with the model tokens (in + out) of each Writer call, by channel.
  // Set before Start().
  using UsageListener = std::function<void(const storage::ChannelRef&, uint64_t tokens)>;
  virtual void SetUsageListener(UsageListener listener) = 0;
  // Asked before each segment's model call: false defers the channel's
  // segments (they stay pending; tried again a minute later or on new
  // messages), e.g. while its tenant is over its daily token budget. Set
  // before Start().
  using Admission = std::function<bool(const storage::ChannelRef&)>;
  virtual void SetAdmission(Admission admission) = 0;

  // Starts the workers and queues every channel with pending work.
  virtual absl::Status Start() = 0;
  // Stops taking new segments, lets in-flight ones finish and joins the
  // workers. Pending work stays in the store. Idempotent.
  virtual void Stop() = 0;

  // New messages in `channel`, up to `newest_seq`. Never blocks on the
  // Writer, never fails.
  virtual void Notify(const storage::ChannelRef& channel, uint64_t newest_seq) = 0;

  // Makes every message stored so far eligible for a (possibly short)
  // segment. With `wait`, returns when they are derived (or parked):
  // DEADLINE_EXCEEDED after `timeout`, UNAVAILABLE when stopped.
  virtual absl::Status Flush(const storage::ChannelRef& channel, bool wait,
                             std::chrono::milliseconds timeout) = 0;

  // Messages stored but not yet derived, over all channels known to the
  // service.
  virtual uint64_t Backlog() const = 0;

  // Appends an operator correction to the chain of head `record_id`: a new
  // record with source "operator", the head's owner, layer and utype, marked
  // so the Writer may not UPDATE it. NOT_FOUND for an unknown record,
  // FAILED_PRECONDITION when it is not the current head.
  virtual absl::StatusOr<storage::Record> Correct(const storage::ChannelRef& channel,
                                                  const std::string& record_id,
                                                  const std::string& content) = 0;

  // Rebuilds the channel's System 2 from System 1 with the current Writer,
  // in a scratch store, then replaces the old derived state atomically.
  // Operator corrections survive as locked records. The channel's normal
  // Writer work waits meanwhile; messages that arrive are derived after.
  // UNAVAILABLE (old state kept) when a segment keeps failing;
  // DEADLINE_EXCEEDED after `timeout`.
  virtual absl::StatusOr<storage::WriterState> Rederive(const storage::ChannelRef& channel,
                                                        std::chrono::milliseconds timeout) = 0;

  // Runs `fn` while no Writer segment of the channel is in flight and none
  // starts (deletions and edits of derived data). Its cached heads are
  // dropped afterwards. With `forget` (the channel was deleted) its work
  // entry goes too; otherwise pending work resumes. UNAVAILABLE while a
  // re-derivation runs; DEADLINE_EXCEEDED when the in-flight segment does
  // not finish within `timeout`.
  virtual absl::Status Exclusive(const storage::ChannelRef& channel,
                                 std::chrono::milliseconds timeout,
                                 const std::function<absl::Status()>& fn, bool forget) = 0;
};

}  // namespace speakermem::writer

#endif  // SPEAKERMEM_WRITER_WRITER_SERVICE_H_
