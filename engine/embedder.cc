#include "engine/embedder.h"

#include <algorithm>
#include <map>

#include "common/log.h"
#include "common/thread_priority.h"
#include "retrieval/pipeline.h"
#include "storage/record_id.h"

namespace speakermem::engine {

Embedder::Embedder(storage::Store* store, retrieval::EmbedStage* embed,
                   retrieval::VectorIndex* index, metrics::Registry* registry,
                   RecordSink record_sink, std::shared_mutex* gate, size_t batch,
                   size_t max_pending)
    : store_(store),
      embed_(embed),
      index_(index),
      record_sink_(std::move(record_sink)),
      gate_(gate),
      batch_(batch),
      max_pending_(max_pending) {
  if (registry == nullptr) return;
  pending_gauge_ =
      &registry
           ->Gauges("speakermem_embed_pending_messages", "Messages waiting for their embedding.")
           .With({});
  auto& c = registry->Counters("speakermem_embed_messages_total",
                               "Message embeddings by outcome: stored, dropped (queue full; "
                               "found again at start), failed (retried).");
  embedded_ = &c.With({{"outcome", "stored"}});
  dropped_ = &c.With({{"outcome", "dropped"}});
  failures_ = &c.With({{"outcome", "failed"}});
}

Embedder::~Embedder() { Stop(); }

void Embedder::Start() {
  std::lock_guard<std::mutex> lock(mu_);
  if (thread_.joinable() || stopping_) return;
  thread_ = std::thread([this] {
    MakeThisThreadBackground();
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
    if (it.record_id.empty()) pending_seqs_[it.channel].insert(it.seq);
    queue_.push_back(std::move(it));
  }
  if (pending_gauge_) pending_gauge_->Set(static_cast<double>(queue_.size()));
  cv_.notify_all();
}

size_t Embedder::pending() const {
  std::lock_guard<std::mutex> lock(mu_);
  return queue_.size() + (busy_ ? 1 : 0);
}

bool Embedder::WaitIndexed(const storage::ChannelRef& channel, uint64_t seq,
                           std::chrono::steady_clock::time_point until) {
  std::unique_lock<std::mutex> lock(mu_);
  auto indexed = [&] {
    auto it = pending_seqs_.find(channel);
    return it == pending_seqs_.end() || it->second.empty() || *it->second.begin() > seq;
  };
  return cv_.wait_until(lock, until, [&] { return indexed() || stopping_; }) && indexed();
}

bool Embedder::WaitIdle(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  return cv_.wait_for(lock, timeout, [&] { return (queue_.empty() && !busy_) || stopping_; }) &&
         queue_.empty() && !busy_;
}

bool Embedder::TakeBatch(std::vector<Item>* batch) {
  batch->clear();
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
  if (stopping_) return false;
  // One channel and one kind per batch.
  const storage::ChannelRef ch = queue_.front().channel;
  const bool records = !queue_.front().record_id.empty();
  while (!queue_.empty() && batch->size() < batch_ && queue_.front().channel == ch &&
         queue_.front().record_id.empty() != records) {
    batch->push_back(std::move(queue_.front()));
    queue_.pop_front();
  }
  busy_ = true;
  return true;
}

std::vector<bool> Embedder::StillAsEmbedded(const std::vector<Item>& batch,
                                            const std::vector<uint64_t>& ids) const {
  std::vector<bool> keep(batch.size(), true);
  if (!batch.front().record_id.empty()) {
    for (size_t i = 0; i < batch.size(); ++i) {
      keep[i] = store_->GetRecord(batch.front().channel, batch[i].record_id).ok();
    }
    return keep;
  }
  absl::StatusOr<std::vector<storage::Message>> now =
      store_->GetMessagesBySeq(batch.front().channel, ids);
  if (!now.ok()) return keep;
  std::map<uint64_t, const storage::Message*> by_seq;
  for (const auto& m : *now) by_seq[m.seq] = &m;
  for (size_t i = 0; i < batch.size(); ++i) {
    auto it = by_seq.find(ids[i]);
    keep[i] = it != by_seq.end() && it->second->text == batch[i].text;
  }
  return keep;
}

absl::Status Embedder::EmbedAndStore(const std::vector<Item>& batch) {
  std::vector<std::string> texts;
  std::vector<uint64_t> ids;
  const bool records = !batch.front().record_id.empty();
  for (const auto& it : batch) {
    texts.push_back(it.text);
    ids.push_back(records ? storage::RecordNumber(it.record_id) : it.seq);
  }
  retrieval::StageCall call;
  absl::StatusOr<std::vector<std::vector<float>>> v = embed_->Embed(texts, &call);
  if (!v.ok()) return v.status();
  const auto kind =
      records ? storage::Store::VectorKind::kRecord : storage::Store::VectorKind::kMessage;
  std::shared_lock<std::shared_mutex> gate;
  if (gate_ != nullptr) gate = std::shared_lock<std::shared_mutex>(*gate_);
  const std::vector<bool> keep = StillAsEmbedded(batch, ids);
  std::vector<uint64_t> kept_ids;
  std::vector<std::vector<float>> kept;
  std::vector<std::string> record_ids;
  for (size_t i = 0; i < batch.size(); ++i) {
    if (!keep[i]) continue;
    kept_ids.push_back(ids[i]);
    kept.push_back(std::move((*v)[i]));
    record_ids.push_back(batch[i].record_id);
  }
  if (kept.empty()) return absl::OkStatus();
  const storage::ChannelRef& ch = batch.front().channel;
  absl::Status s = store_->PutVectors(ch, kind, kept_ids, kept);
  if (s.ok() && !records) s = index_->Add(ch, kept_ids, kept);
  if (s.ok() && records && record_sink_) record_sink_(ch, record_ids, std::move(kept));
  return s;
}

void Embedder::Settle(std::vector<Item> batch, const absl::Status& s, int* backoff_ms) {
  std::unique_lock<std::mutex> lock(mu_);
  busy_ = false;
  if (s.ok()) {
    if (!batch.empty() && batch.front().record_id.empty()) {
      auto pending = pending_seqs_.find(batch.front().channel);
      for (size_t i = 0; pending != pending_seqs_.end() && i < batch.size(); ++i) {
        auto at = pending->second.find(batch[i].seq);
        if (at != pending->second.end()) pending->second.erase(at);
      }
      if (pending != pending_seqs_.end() && pending->second.empty()) pending_seqs_.erase(pending);
    }
    *backoff_ms = 100;
    if (embedded_) embedded_->Increment(static_cast<double>(batch.size()));
  } else {
    if (failures_) failures_->Increment(static_cast<double>(batch.size()));
    LOG_WARN("embedding failed; will retry").Str("error", s.message());
    for (auto it = batch.rbegin(); it != batch.rend(); ++it) queue_.push_front(std::move(*it));
    cv_.wait_for(lock, std::chrono::milliseconds(*backoff_ms), [&] { return stopping_; });
    *backoff_ms = std::min(*backoff_ms * 2, 30000);
  }
  if (pending_gauge_) pending_gauge_->Set(static_cast<double>(queue_.size()));
  cv_.notify_all();
}

void Embedder::Loop() {
  int backoff_ms = 100;
  std::vector<Item> batch;
  while (TakeBatch(&batch)) {
    if (record_known_ && !batch.front().record_id.empty()) {
      // Records whose vector exists already (a query embedded them first).
      const storage::ChannelRef ch = batch.front().channel;
      batch.erase(std::remove_if(batch.begin(), batch.end(),
                                 [&](const Item& it) { return record_known_(ch, it.record_id); }),
                  batch.end());
      if (batch.empty()) {
        std::lock_guard<std::mutex> lock(mu_);
        busy_ = false;
        if (pending_gauge_) pending_gauge_->Set(static_cast<double>(queue_.size()));
        cv_.notify_all();
        continue;
      }
    }
    absl::Status s = EmbedAndStore(batch);
    Settle(std::move(batch), s, &backoff_ms);
  }
}

}  // namespace speakermem::engine
