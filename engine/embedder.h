// Background embedding (ingest never waits on the model): a bounded queue of
// System 1 messages (channel, seq, text) and System 2 records (channel,
// record id, content) drained in batches through the Embed stage into the
// vectors column family, the FAISS shards (messages) and the record sink
// (records, for the System 2 row stage).
// Messages whose vectors are missing are found again at start (the store is
// the source of truth), so a crash or an overflow only delays them.
#ifndef SPEAKERMEM_ENGINE_EMBEDDER_H_
#define SPEAKERMEM_ENGINE_EMBEDDER_H_

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <shared_mutex>
#include <string>
#include <thread>
#include <vector>

#include "metrics/metrics.h"
#include "retrieval/stages.h"
#include "retrieval/vector_index.h"
#include "storage/store.h"

namespace speakermem::engine {

// Thread-safe.
class Embedder {
 public:
  // Receives each batch of embedded records (one channel) with their vectors.
  using RecordSink =
      std::function<void(const storage::ChannelRef&, const std::vector<std::string>& record_ids,
                         std::vector<std::vector<float>> vectors)>;
  // All pointers must outlive the embedder; `registry` may be null.
  // `gate` (may be null) is held shared while a batch's vectors are
  // written; deletions hold it exclusively, and a batch only stores vectors
  // of messages (same text) and records that still exist.
  Embedder(storage::Store* store, retrieval::EmbedStage* embed, retrieval::VectorIndex* index,
           metrics::Registry* registry, RecordSink record_sink = nullptr,
           std::shared_mutex* gate = nullptr, size_t batch = 64, size_t max_pending = 1000000);
  ~Embedder();

  // Records for which this returns true are skipped: their vector exists
  // already (a query embedded them first). Set before Start.
  void SetRecordKnown(std::function<bool(const storage::ChannelRef&, const std::string&)> known) {
    record_known_ = std::move(known);
  }

  void Start();
  void Stop();

  struct Item {
    storage::ChannelRef channel;
    uint64_t seq;  // messages
    std::string text;
    std::string record_id;  // non-empty for a record
  };
  // Queues messages; beyond max_pending they are dropped (and counted) until
  // the next start finds them unembedded.
  void Enqueue(std::vector<Item> items);
  // True when nothing is pending or in progress within `timeout`.
  bool WaitIdle(std::chrono::milliseconds timeout);
  // True once no message of `channel` with a seq up to `seq` is pending or
  // in progress (read-your-writes); false at `until` or when stopping.
  bool WaitIndexed(const storage::ChannelRef& channel, uint64_t seq,
                   std::chrono::steady_clock::time_point until);
  size_t pending() const;

 private:
  void Loop();
  // Waits for work and takes the next batch (one channel, one kind); false
  // when stopping.
  bool TakeBatch(std::vector<Item>* batch);
  // Embeds `batch` and stores what still exists as it was embedded: the
  // vectors, the message index, the record sink.
  absl::Status EmbedAndStore(const std::vector<Item>& batch);
  // Which items still exist as they were embedded (a deletion or an edit may
  // have come in meanwhile).
  std::vector<bool> StillAsEmbedded(const std::vector<Item>& batch,
                                    const std::vector<uint64_t>& ids) const;
  // The batch is done: on success its messages are no longer pending; on
  // failure it goes back to the queue's front after a backoff.
  void Settle(std::vector<Item> batch, const absl::Status& s, int* backoff_ms);

  storage::Store* const store_;
  retrieval::EmbedStage* const embed_;
  retrieval::VectorIndex* const index_;
  const RecordSink record_sink_;
  std::function<bool(const storage::ChannelRef&, const std::string&)> record_known_;
  std::shared_mutex* const gate_;
  const size_t batch_;
  const size_t max_pending_;
  metrics::Gauge* pending_gauge_ = nullptr;
  metrics::Counter* embedded_ = nullptr;
  metrics::Counter* dropped_ = nullptr;
  metrics::Counter* failures_ = nullptr;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Item> queue_;  // guarded by mu_
  // Seqs of the messages queued or in progress, per channel (guarded by mu_).
  std::map<storage::ChannelRef, std::multiset<uint64_t>> pending_seqs_;
  bool busy_ = false;      // guarded by mu_
  bool stopping_ = false;  // guarded by mu_
  std::thread thread_;
};

}  // namespace speakermem::engine

#endif  // SPEAKERMEM_ENGINE_EMBEDDER_H_
