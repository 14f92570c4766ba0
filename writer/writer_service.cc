#include "writer/writer_service.h"

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <filesystem>
#include <functional>
#include <map>
#include <mutex>
#include <thread>

#include "absl/strings/str_cat.h"
#include "common/log.h"
#include "common/thread_priority.h"
#include "storage/store.h"
#include "writer/correction.h"
#include "writer/derive.h"
#include "writer/rederive.h"
#include "writer/segmenter.h"
#include "writer/transition_json.h"
#include "writer/validate.h"
#include "writer/writer_metrics.h"

namespace speakermem::writer {
namespace {

using storage::ChannelRef;

struct ChannelWork {
  bool queued = false;
  bool running = false;
  bool dirty = false;  // notified while queued/running or while the queue was full
  int64_t last_notify_ms = 0;
  uint64_t newest = 0;
  uint64_t cursor = 0;
  uint64_t flushed = 0;           // flush mark already written by the idle sweeper
  bool rederiving = false;        // Rederive owns the channel; workers leave it alone
  int held = 0;                   // Exclusive callers; workers leave it alone
  int64_t deferred_until_ms = 0;  // admission refused: try again then
};

class WriterServiceImpl final : public WriterService {
 public:
  WriterServiceImpl(storage::Store* store, std::unique_ptr<WriterModel> model,
                    const WriterOptions& options, Clock* clock, metrics::Registry* registry,
                    recordindex::ChannelIndexes* indexes)
      : store_(store),
        own_indexes_(indexes == nullptr ? std::make_unique<recordindex::ChannelIndexes>(store)
                                        : nullptr),
        indexes_(indexes == nullptr ? own_indexes_.get() : indexes),
        model_(std::move(model)),
        options_(options),
        clock_(clock),
        metrics_(registry) {}

  ~WriterServiceImpl() override { Stop(); }

  void SetRecordListener(RecordListener listener) override { listener_ = std::move(listener); }
  void SetUsageListener(UsageListener listener) override { usage_listener_ = std::move(listener); }
  void SetAdmission(Admission admission) override { admission_ = std::move(admission); }
  absl::Status Start() override;
  void Stop() override;
  void Notify(const ChannelRef& channel, uint64_t newest_seq) override;
  absl::Status Flush(const ChannelRef& channel, bool wait,
                     std::chrono::milliseconds timeout) override;
  uint64_t Backlog() const override;
  absl::StatusOr<storage::Record> Correct(const ChannelRef& channel, const std::string& record_id,
                                          const std::string& content) override;
  absl::StatusOr<storage::WriterState> Rederive(const ChannelRef& channel,
                                                std::chrono::milliseconds timeout) override;
  absl::Status Exclusive(const ChannelRef& channel, std::chrono::milliseconds timeout,
                         const std::function<absl::Status()>& fn, bool forget) override;

 private:
  void WorkerLoop();
  void SweeperLoop();
  // REQUIRES: mu_ held.
  void EnqueueLocked(const ChannelRef& ch, ChannelWork* w);
  void ProcessChannel(const ChannelRef& ch);
  // Derives one segment of `store` (the live store, or a re-derivation's
  // scratch store) with the record indexes over it, applies it and folds it
  // into the channel's index; returns false to stop processing the channel.
  bool RunSegment(storage::Store* store, recordindex::ChannelIndexes* indexes, const ChannelRef& ch,
                  const storage::WriterState& state, const Segment& seg);
  void RetryParked(const ChannelRef& ch);
  // DeriveSegment with this service's model, options, backoff (ended by
  // Stop) and usage listener; counts invalid output.
  Derivation Derive(storage::Store* store, recordindex::ChannelIndexes* indexes,
                    const ChannelRef& ch, const Segment& seg, bool trace);
  void Applied(const ChannelRef& ch, uint64_t cursor);
  bool stopping() const {
    std::lock_guard<std::mutex> lock(mu_);
    return stopping_;
  }

  storage::Store* const store_;
  // The channels' record indexes, shared with the query path, or its own.
  const std::unique_ptr<recordindex::ChannelIndexes> own_indexes_;
  recordindex::ChannelIndexes* const indexes_;
  const std::unique_ptr<WriterModel> model_;
  const WriterOptions options_;
  Clock* const clock_;
  WriterMetrics metrics_;
  RecordListener listener_;       // set before Start, read-only after
  UsageListener usage_listener_;  // set before Start, read-only after
  Admission admission_;           // set before Start, read-only after

  mutable std::mutex mu_;
  std::condition_variable work_cv_;             // queue_ non-empty or stopping_
  std::condition_variable done_cv_;             // a cursor moved
  std::condition_variable stop_cv_;             // stopping_ (the sweeper's and backoff sleeps)
  std::map<ChannelRef, ChannelWork> channels_;  // guarded by mu_
  std::deque<ChannelRef> queue_;                // guarded by mu_
  bool started_ = false;                        // guarded by mu_
  bool stopping_ = false;                       // guarded by mu_
  std::vector<std::thread> workers_;
  std::thread sweeper_;
};

absl::Status WriterServiceImpl::Start() {
  // Channels with pending work from before a restart.
  std::vector<std::pair<ChannelRef, uint64_t>> pending;
  absl::Status s = store_->ForEachChannel(
      [&](const ChannelRef& ch, const storage::ChannelInfo& info) -> absl::Status {
        absl::StatusOr<storage::WriterState> w = store_->GetWriterState(ch);
        if (!w.ok()) return w.status();
        std::lock_guard<std::mutex> lock(mu_);
        ChannelWork& work = channels_[ch];
        work.newest = info.last_seq;
        work.cursor = w->cursor_seq;
        work.flushed = w->flush_until;
        work.last_notify_ms = clock_->NowMs();
        if (info.last_seq > w->cursor_seq) work.dirty = true;
        return absl::OkStatus();
      });
  if (!s.ok()) return s;
  std::lock_guard<std::mutex> lock(mu_);
  if (started_) return absl::OkStatus();
  started_ = true;
  for (auto& [ch, w] : channels_) {
    if (w.dirty) EnqueueLocked(ch, &w);
  }
  for (int i = 0; i < std::max(1, options_.workers); ++i) {
    workers_.emplace_back([this] {
      MakeThisThreadBackground();
      WorkerLoop();
    });
  }
  sweeper_ = std::thread([this] {
    MakeThisThreadBackground();
    SweeperLoop();
  });
  return absl::OkStatus();
}

void WriterServiceImpl::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_ || !started_) {
      stopping_ = true;
      return;
    }
    stopping_ = true;
  }
  work_cv_.notify_all();
  done_cv_.notify_all();
  stop_cv_.notify_all();
  for (auto& t : workers_) t.join();
  if (sweeper_.joinable()) sweeper_.join();
}

void WriterServiceImpl::EnqueueLocked(const ChannelRef& ch, ChannelWork* w) {
  if (w->queued || w->running || w->rederiving || w->held > 0 || stopping_) {
    w->dirty = true;
    return;
  }
  if (queue_.size() >= options_.queue_capacity) {
    w->dirty = true;  // the sweeper retries when room frees
    return;
  }
  queue_.push_back(ch);
  w->queued = true;
  w->dirty = false;
  work_cv_.notify_one();
}

void WriterServiceImpl::Notify(const ChannelRef& ch, uint64_t newest_seq) {
  std::lock_guard<std::mutex> lock(mu_);
  ChannelWork& w = channels_[ch];
  w.newest = std::max(w.newest, newest_seq);
  w.last_notify_ms = clock_->NowMs();
  if (started_)
    EnqueueLocked(ch, &w);
  else
    w.dirty = true;
}

uint64_t WriterServiceImpl::Backlog() const {
  std::lock_guard<std::mutex> lock(mu_);
  uint64_t total = 0;
  for (const auto& [ch, w] : channels_) total += w.newest > w.cursor ? w.newest - w.cursor : 0;
  return total;
}

void WriterServiceImpl::Applied(const ChannelRef& ch, uint64_t cursor) {
  std::lock_guard<std::mutex> lock(mu_);
  ChannelWork& w = channels_[ch];
  w.cursor = std::max(w.cursor, cursor);
  done_cv_.notify_all();
}

absl::Status WriterServiceImpl::Flush(const ChannelRef& ch, bool wait,
                                      std::chrono::milliseconds timeout) {
  absl::StatusOr<storage::ChannelInfo> info = store_->GetChannelInfo(ch);
  if (!info.ok()) return info.status();
  absl::StatusOr<storage::WriterState> state = store_->GetWriterState(ch);
  if (!state.ok()) return state.status();
  absl::Status s = store_->SetFlushUntil(ch, info->last_seq);
  if (!s.ok()) return s;
  const uint64_t target = info->last_seq;
  {
    std::lock_guard<std::mutex> lock(mu_);
    ChannelWork& w = channels_[ch];
    w.cursor = std::max(w.cursor, state->cursor_seq);
    w.flushed = std::max(w.flushed, target);
  }
  Notify(ch, target);
  if (!wait) return absl::OkStatus();
  std::unique_lock<std::mutex> lock(mu_);
  bool done =
      done_cv_.wait_for(lock, timeout, [&] { return stopping_ || channels_[ch].cursor >= target; });
  if (channels_[ch].cursor >= target) return absl::OkStatus();
  if (stopping_) return absl::UnavailableError("the Writer is stopping");
  (void)done;
  return absl::DeadlineExceededError(
      absl::StrCat("flush of '", ch.channel, "' not finished within ", timeout.count(),
                   " ms (cursor ", channels_[ch].cursor, " of ", target, ")"));
}

void WriterServiceImpl::WorkerLoop() {
  for (;;) {
    ChannelRef ch;
    {
      std::unique_lock<std::mutex> lock(mu_);
      work_cv_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (stopping_) return;
      ch = queue_.front();
      queue_.pop_front();
      ChannelWork& w = channels_[ch];
      w.queued = false;
      if (w.rederiving || w.held > 0) {
        w.dirty = true;
        continue;
      }
      w.running = true;
      w.dirty = false;
    }
    ProcessChannel(ch);
    std::lock_guard<std::mutex> lock(mu_);
    ChannelWork& w = channels_[ch];
    w.running = false;
    if (w.dirty) {
      w.dirty = false;
      EnqueueLocked(ch, &w);
    }
    done_cv_.notify_all();
  }
}

void WriterServiceImpl::SweeperLoop() {
  int64_t last_parked_scan = clock_->NowMs();
  for (;;) {
    std::vector<std::pair<ChannelRef, uint64_t>> to_flush;
    {
      std::unique_lock<std::mutex> lock(mu_);
      stop_cv_.wait_for(lock, std::chrono::milliseconds(200), [&] { return stopping_; });
      if (stopping_) return;
      const int64_t now = clock_->NowMs();
      uint64_t backlog = 0;
      const bool parked_due = now - last_parked_scan >= options_.parked_retry_ms;
      for (auto& [ch, w] : channels_) {
        backlog += w.newest > w.cursor ? w.newest - w.cursor : 0;
        if (options_.idle_flush_ms > 0 && w.newest > w.cursor && w.newest > w.flushed &&
            now - w.last_notify_ms >= options_.idle_flush_ms) {
          to_flush.emplace_back(ch, w.newest);
        }
        if (parked_due) w.dirty = true;
        if (w.deferred_until_ms != 0 && now >= w.deferred_until_ms) {
          w.deferred_until_ms = 0;
          w.dirty = true;
        }
        if (w.dirty && !w.queued && !w.running) EnqueueLocked(ch, &w);
      }
      if (parked_due) last_parked_scan = now;
      metrics_.SetBacklog(static_cast<double>(backlog));
      metrics_.SetQueue(static_cast<double>(queue_.size()));
    }
    for (const auto& [ch, seq] : to_flush) {
      absl::Status s = store_->SetFlushUntil(ch, seq);
      if (!s.ok()) {
        LOG_WARN("idle flush failed").Str("channel", ch.channel).Str("error", s.message());
        continue;
      }
      std::lock_guard<std::mutex> lock(mu_);
      ChannelWork& w = channels_[ch];
      w.flushed = std::max(w.flushed, seq);
      EnqueueLocked(ch, &w);
    }
  }
}

void WriterServiceImpl::ProcessChannel(const ChannelRef& ch) {
  while (!stopping()) {
    absl::StatusOr<storage::WriterState> state = store_->GetWriterState(ch);
    if (!state.ok()) {
      LOG_ERROR("writer state unreadable")
          .Str("channel", ch.channel)
          .Str("error", state.status().message());
      return;
    }
    Applied(ch, state->cursor_seq);
    absl::StatusOr<std::optional<Segment>> seg = NextSegment(store_, ch, *state, options_.window);
    if (!seg.ok()) {
      LOG_ERROR("segmenting failed")
          .Str("channel", ch.channel)
          .Str("error", seg.status().message());
      return;
    }
    if (!seg->has_value()) break;
    if (admission_ && !admission_(ch)) {
      // Not now (e.g. the tenant's token budget is spent): the segment stays
      // pending and the sweeper brings the channel back in a minute.
      std::lock_guard<std::mutex> lock(mu_);
      channels_[ch].deferred_until_ms = clock_->NowMs() + 60000;
      metrics_.Segment("deferred");
      return;
    }
    if (!RunSegment(store_, indexes_, ch, *state, **seg)) return;
  }
  if (!stopping()) RetryParked(ch);
}

Derivation WriterServiceImpl::Derive(storage::Store* store, recordindex::ChannelIndexes* indexes,
                                     const ChannelRef& ch, const Segment& seg, bool trace) {
  DeriveHooks hooks;
  hooks.backoff = [this](std::chrono::milliseconds wait) {
    std::unique_lock<std::mutex> lock(mu_);
    return !stop_cv_.wait_for(lock, wait, [&] { return stopping_; });
  };
  if (usage_listener_ && store == store_) {
    hooks.usage = [this, &ch](uint64_t tokens) { usage_listener_(ch, tokens); };
  }
  Derivation d = DeriveSegment(store, indexes, ch, seg, model_.get(), options_, hooks, trace);
  for (uint32_t i = 0; i < d.invalid_json; ++i) metrics_.Rejected("invalid_json");
  return d;
}

bool WriterServiceImpl::RunSegment(storage::Store* store, recordindex::ChannelIndexes* indexes,
                                   const ChannelRef& ch, const storage::WriterState& state,
                                   const Segment& seg) {
  auto start = std::chrono::steady_clock::now();
  const bool capture = options_.capture_trajectories && store == store_;
  const Derivation d = Derive(store, indexes, ch, seg, capture);
  const absl::StatusOr<ValidationReport>& report = d.report;
  if (absl::IsCancelled(report.status())) return false;  // stopping: stays pending
  std::string outcome;
  storage::SegmentApply apply = ApplyFor(d, seg, state, clock_->NowMs(), &outcome);
  if (capture && report.ok()) {
    apply.transition = TransitionJson(seg, d.trace, *report, apply, clock_->NowMs());
    apply.transition_seq = seg.first_seq();
  }
  absl::Status s = store->ApplySegment(ch, apply);
  if (absl::IsAborted(s)) {
    // The cursor moved or records were written (an operator correction)
    // while the model worked: derived on stale heads, so derived again.
    metrics_.Segment("stale");
    return true;
  }
  if (s.ok() && store == store_ && listener_ && !apply.new_records.empty()) {
    listener_(ch, apply.new_records);
  }
  if (s.ok()) indexes->Fold(ch, apply, state.next_record);
  if (!s.ok()) {
    LOG_ERROR("writer apply failed").Str("channel", ch.channel).Str("error", s.message());
    return false;
  }
  metrics_.Segment(outcome);
  metrics_.ObserveSegment(
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  if (report.ok()) {
    size_t updates = 0;
    for (const auto& a : report->accepted) updates += a.type == WriterAction::Type::kUpdate;
    metrics_.Action("add", static_cast<double>(report->accepted.size() - updates));
    metrics_.Action("update", static_cast<double>(updates));
    metrics_.Action("noop", static_cast<double>(report->noops));
    for (const auto& r : report->rejected) metrics_.Rejected(r.reason);
    if (outcome == "all_rejected") {
      LOG_WARN("writer segment: every action rejected")
          .Str("channel", ch.channel)
          .Int("first_seq", static_cast<int64_t>(seg.first_seq()))
          .Str("first_reason", report->rejected.front().reason);
    }
  } else {
    metrics_.ParkedDelta(1);
    LOG_WARN("segment parked")
        .Str("channel", ch.channel)
        .Int("first_seq", static_cast<int64_t>(seg.first_seq()))
        .Int("last_seq", static_cast<int64_t>(seg.last_seq()))
        .Str("reason", report.status().message());
  }
  if (store == store_) Applied(ch, apply.new_cursor);
  return true;
}

void WriterServiceImpl::RetryParked(const ChannelRef& ch) {
  absl::StatusOr<std::vector<storage::ParkedSegment>> parked = store_->ListParked(ch);
  if (!parked.ok() || parked->empty()) return;
  const int64_t now = clock_->NowMs();
  for (const auto& p : *parked) {
    if (stopping() || now - p.parked_ms < options_.parked_retry_ms) continue;
    storage::MessageQuery q;
    q.after_seq = p.first_seq - 1;
    q.limit = static_cast<uint32_t>(p.last_seq - p.first_seq + 1);
    absl::StatusOr<storage::MessagePage> page = store_->ScanMessages(ch, q);
    if (!page.ok() || page->messages.empty()) continue;
    Segment seg{std::move(page->messages)};
    absl::StatusOr<storage::WriterState> state = store_->GetWriterState(ch);
    if (!state.ok()) return;
    const Derivation d = Derive(store_, indexes_, ch, seg, /*trace=*/false);
    if (absl::IsCancelled(d.report.status())) return;
    storage::SegmentApply apply = ApplyFor(d, seg, *state, clock_->NowMs(), nullptr);
    if (d.report.ok()) {
      apply.unpark_first_seq = p.first_seq;
    } else {
      apply.parked.attempts += p.attempts;
      apply.parked.first_seq = p.first_seq;
      apply.parked.last_seq = p.last_seq;
    }
    // A parked segment never moves the cursor.
    apply.expected_cursor = state->cursor_seq;
    apply.new_cursor = state->cursor_seq;
    if (store_->ApplySegment(ch, apply).ok() && d.report.ok()) {
      metrics_.Segment("recovered");
      metrics_.ParkedDelta(-1);
    }
  }
}

absl::StatusOr<storage::Record> WriterServiceImpl::Correct(const ChannelRef& ch,
                                                           const std::string& record_id,
                                                           const std::string& content) {
  absl::StatusOr<std::string> text = CorrectionText(content);
  if (!text.ok()) return text.status();
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = channels_.find(ch);
    if (it != channels_.end() && it->second.rederiving) {
      return absl::UnavailableError("a re-derivation of this channel is running; retry after it");
    }
  }
  for (int attempt = 0; attempt < 100; ++attempt) {
    absl::StatusOr<storage::WriterState> state = store_->GetWriterState(ch);
    if (!state.ok()) return state.status();
    absl::StatusOr<storage::Record> old = store_->GetRecord(ch, record_id);
    if (!old.ok()) return old.status();
    absl::StatusOr<storage::SegmentApply> apply =
        CorrectionApply(*old, *text, *state, clock_->NowMs());
    if (!apply.ok()) return apply.status();
    absl::Status s = store_->ApplySegment(ch, *apply);
    if (absl::IsAborted(s)) continue;  // the Writer wrote meanwhile: read again
    if (!s.ok()) return s;
    if (listener_) listener_(ch, apply->new_records);
    return apply->new_records.front();
  }
  return absl::UnavailableError("the channel is too busy to take a correction; retry");
}

absl::StatusOr<storage::WriterState> WriterServiceImpl::Rederive(
    const ChannelRef& ch, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  absl::StatusOr<storage::ChannelInfo> info = store_->GetChannelInfo(ch);
  if (!info.ok()) return info.status();
  {
    // Take the channel from the workers once its in-flight segment is done.
    std::unique_lock<std::mutex> lock(mu_);
    ChannelWork& w = channels_[ch];
    if (w.rederiving) return absl::AlreadyExistsError("a re-derivation of this channel is running");
    w.rederiving = true;
    if (!done_cv_.wait_until(lock, deadline, [&] { return !channels_[ch].running || stopping_; })) {
      channels_[ch].rederiving = false;
      return absl::DeadlineExceededError("the channel's Writer segment did not finish in time");
    }
  }
  auto release = [&] {
    std::lock_guard<std::mutex> lock(mu_);
    ChannelWork& w = channels_[ch];
    w.rederiving = false;
    EnqueueLocked(ch, &w);
  };
  std::string base = options_.scratch_dir.empty() ? std::filesystem::temp_directory_path().string()
                                                  : options_.scratch_dir;
  std::string dir =
      absl::StrCat(base, "/speakermem-rederive-",
                   std::hash<std::string>()(ch.tenant + '\0' + ch.channel), "-", clock_->NowMs());
  RederiveJob job{store_, ch, *info, dir, options_.window, deadline};
  absl::StatusOr<storage::WriterState> result = RederiveInScratch(
      job,
      [this, &ch](storage::Store* scratch, recordindex::ChannelIndexes* indexes,
                  const storage::WriterState& state,
                  const Segment& seg) { return RunSegment(scratch, indexes, ch, state, seg); },
      [this] { return stopping(); });
  if (result.ok()) {
    indexes_->Forget(ch);  // every record replaced
    Applied(ch, result->cursor_seq);
  }
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  release();
  return result;
}

}  // namespace

std::unique_ptr<WriterService> WriterService::Create(storage::Store* store,
                                                     std::unique_ptr<WriterModel> model,
                                                     const WriterOptions& options, Clock* clock,
                                                     metrics::Registry* registry,
                                                     recordindex::ChannelIndexes* indexes) {
  return std::make_unique<WriterServiceImpl>(store, std::move(model), options, clock, registry,
                                             indexes);
}

absl::Status WriterServiceImpl::Exclusive(const ChannelRef& ch, std::chrono::milliseconds timeout,
                                          const std::function<absl::Status()>& fn, bool forget) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  {
    std::unique_lock<std::mutex> lock(mu_);
    ChannelWork& w = channels_[ch];
    if (w.rederiving) {
      return absl::UnavailableError("a re-derivation of this channel is running; retry after it");
    }
    ++w.held;
    if (!done_cv_.wait_until(lock, deadline, [&] { return !channels_[ch].running || stopping_; })) {
      --channels_[ch].held;
      return absl::DeadlineExceededError("the channel's Writer segment did not finish in time");
    }
  }
  absl::Status s = fn();
  indexes_->Forget(ch);  // derived data edited under it: read it again
  std::lock_guard<std::mutex> lock(mu_);
  ChannelWork& w = channels_[ch];
  --w.held;
  if (w.held == 0) {
    if (forget && s.ok()) {
      channels_.erase(ch);
    } else if (w.dirty) {
      w.dirty = false;
      EnqueueLocked(ch, &w);
    }
  }
  return s;
}

}  // namespace speakermem::writer
