// Background embedding of System 1 messages (ingest never waits on the
// model): a bounded queue of (channel, seq, text) drained in batches through
// the Embed stage into the vectors column family and the FAISS shards.
// Messages whose vectors are missing are found again at start (the store is
// the source of truth), so a crash or an overflow only delays them.
#ifndef SPEAKERMEM_ENGINE_EMBEDDER_H_
#define SPEAKERMEM_ENGINE_EMBEDDER_H_

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "retrieval/stages.h"
#include "retrieval/vector_index.h"
#include "storage/store.h"

namespace prometheus {
class Registry;
class Gauge;
class Counter;
}  // namespace prometheus

namespace speakermem::engine {

// Thread-safe.
class Embedder {
 public:
  // All pointers must outlive the embedder; `registry` may be null.
  Embedder(storage::Store* store, retrieval::EmbedStage* embed, retrieval::VectorIndex* index,
           prometheus::Registry* registry, size_t batch = 64, size_t max_pending = 1000000);
  ~Embedder();

  void Start();
  void Stop();

  struct Item {
    storage::ChannelRef channel;
    uint64_t seq;
    std::string text;
  };
  // Queues messages; beyond max_pending they are dropped (and counted) until
  // the next start finds them unembedded.
  void Enqueue(std::vector<Item> items);
  // True when nothing is pending or in progress within `timeout`.
  bool WaitIdle(std::chrono::milliseconds timeout);
  size_t pending() const;

 private:
  void Loop();

  storage::Store* const store_;
  retrieval::EmbedStage* const embed_;
  retrieval::VectorIndex* const index_;
  const size_t batch_;
  const size_t max_pending_;
  prometheus::Gauge* pending_gauge_ = nullptr;
  prometheus::Counter* embedded_ = nullptr;
  prometheus::Counter* dropped_ = nullptr;
  prometheus::Counter* failures_ = nullptr;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Item> queue_;  // guarded by mu_
  bool busy_ = false;       // guarded by mu_
  bool stopping_ = false;   // guarded by mu_
  std::thread thread_;
};

}  // namespace speakermem::engine

#endif  // SPEAKERMEM_ENGINE_EMBEDDER_H_
