#include "engine/embedder.h"

#include "common/log.h"
#include "common/thread_priority.h"
#include "retrieval/pipeline.h"
#include "prometheus/counter.h"
#include "prometheus/gauge.h"
#include "prometheus/registry.h"

namespace speakermem::engine {

Embedder::Embedder(storage::Store* store, retrieval::EmbedStage* embed,
                   retrieval::VectorIndex* index, prometheus::Registry* registry,
                   RecordSink record_sink, size_t batch, size_t max_pending)
    : store_(store),
      embed_(embed),
      index_(index),
      record_sink_(std::move(record_sink)),
      batch_(batch),
      max_pending_(max_pending) {
  if (registry == nullptr) return;
  pending_gauge_ = &prometheus::BuildGauge()
                        .Name("speakermem_embed_pending_messages")
                        .Help("Messages waiting for their embedding.")
                        .Register(*registry)
                        .Add({});
  auto& c = prometheus::BuildCounter()
                .Name("speakermem_embed_messages_total")
                .Help("Message embeddings by outcome: stored, dropped (queue full; found "
                      "again at start), failed (retried).")
                .Register(*registry);
  embedded_ = &c.Add({{"outcome", "stored"}});
  dropped_ = &c.Add({{"outcome", "dropped"}});
  failures_ = &c.Add({{"outcome", "failed"}});
}

Embedder::~Embedder() { Stop(); }

void Embedder::Start() {
  std::lock_guard<std::mutex> lock(mu_);
  if (thread_.joinable() || stopping_) return;
  thread_ = std::thread([this] {
    LowerThisThreadPriority();
    Loop();
  });
}

void Embedder::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void Embedder::Enqueue(std::vector<Item> items) {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& it : items) {
    if (queue_.size() >= max_pending_) {
      if (dropped_) dropped_->Increment();
      continue;
    }
    queue_.push_back(std::move(it));
  }
  if (pending_gauge_) pending_gauge_->Set(static_cast<double>(queue_.size()));
  cv_.notify_all();
}

size_t Embedder::pending() const {
  std::lock_guard<std::mutex> lock(mu_);
  return queue_.size() + (busy_ ? 1 : 0);
}

bool Embedder::WaitIdle(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  return cv_.wait_for(lock, timeout, [&] { return (queue_.empty() && !busy_) || stopping_; }) &&
         queue_.empty() && !busy_;
}

void Embedder::Loop() {
  int backoff_ms = 100;
  for (;;) {
    std::vector<Item> batch;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (stopping_) return;
      // One channel and one kind per batch.
      const storage::ChannelRef ch = queue_.front().channel;
      const bool records = !queue_.front().record_id.empty();
      while (!queue_.empty() && batch.size() < batch_ && queue_.front().channel == ch &&
             queue_.front().record_id.empty() != records) {
        batch.push_back(std::move(queue_.front()));
        queue_.pop_front();
      }
      busy_ = true;
    }
    std::vector<std::string> texts;
    std::vector<uint64_t> ids;
    const bool records = !batch.front().record_id.empty();
    for (const auto& it : batch) {
      texts.push_back(it.text);
      ids.push_back(records ? retrieval::RecordNumber(it.record_id) : it.seq);
    }
    retrieval::StageCall call;
    absl::StatusOr<std::vector<std::vector<float>>> v = embed_->Embed(texts, &call);
    absl::Status s = v.status();
    const auto kind =
        records ? storage::Store::VectorKind::kRecord : storage::Store::VectorKind::kMessage;
    if (s.ok()) s = store_->PutVectors(batch.front().channel, kind, ids, *v);
    if (s.ok() && !records) s = index_->Add(batch.front().channel, ids, *v);
    if (s.ok() && records && record_sink_) {
      std::vector<std::string> record_ids;
      for (const auto& it : batch) record_ids.push_back(it.record_id);
      record_sink_(batch.front().channel, record_ids, std::move(*v));
    }
    std::unique_lock<std::mutex> lock(mu_);
    busy_ = false;
    if (s.ok()) {
      backoff_ms = 100;
      if (embedded_) embedded_->Increment(static_cast<double>(batch.size()));
    } else {
      if (failures_) failures_->Increment(static_cast<double>(batch.size()));
      LOG_WARN("embedding failed; will retry").Str("error", s.message());
      for (auto it = batch.rbegin(); it != batch.rend(); ++it) queue_.push_front(std::move(*it));
      cv_.wait_for(lock, std::chrono::milliseconds(backoff_ms), [&] { return stopping_; });
      backoff_ms = std::min(backoff_ms * 2, 30000);
    }
    if (pending_gauge_) pending_gauge_->Set(static_cast<double>(queue_.size()));
    cv_.notify_all();
  }
}

}  // namespace speakermem::engine
