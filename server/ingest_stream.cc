#include "server/ingest_stream.h"

#include <algorithm>
#include <atomic>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/log.h"
#include "common/status_macros.h"
#include "server/ingest_wire.pb.h"
#include "server/metrics.h"
#include "server/request_codec.h"
#include "server/rpc_scope.h"
#include "server/store_workers.h"
#include "speakermem/v1/speakermem.pb.h"

namespace speakermem::server {
namespace {

// Groups of one stream stored at once: the next group is appended while the
// previous one is being indexed. A group starts only once the one before it
// is appended, so appends keep the stream's order without waiting. With
// several streams open the store threads have other streams' chunks to
// store, so each stream then keeps one chunk in progress and reads no
// further.
constexpr size_t kMaxGroupsInProgress = 2;
std::atomic<int> open_streams{0};
// Acknowledgements waiting for the transport, plus chunks read and not yet
// acknowledged, before reading pauses: a client that does not read its
// acks stops being read.
constexpr size_t kMaxQueuedAcks = 32;

// A chunk read and not yet stored: its number in the stream, the channel
// it is for, what its acknowledgement echoes, and the chunk prepared.
struct ReadChunkEntry {
  uint64_t ticket = 0;
  std::string channel;
  uint64_t chunk_id = 0;
  size_t messages = 0;
  std::shared_ptr<PreparedChunk> prepared;
};
using Group = std::vector<ReadChunkEntry>;

class IngestStreamReactor final
    : public grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer> {
 public:
  IngestStreamReactor(grpc::CallbackServerContext* ctx, ServerMetrics* metrics,
                      StoreWorkers* workers, absl::Status admitted, size_t max_group_messages,
                      PrepareChunkFn prepare, IngestChunksFn ingest)
      : metrics_(metrics),
        workers_(workers),
        max_group_messages_(std::max<size_t>(max_group_messages, 1)),
        prepare_(std::move(prepare)),
        ingest_(std::move(ingest)),
        scope_("IngestStream", ctx, metrics) {
    if (!admitted.ok()) {
      Finish(scope_.Done(admitted));
      return;
    }
    counted_ = true;
    ++open_streams;
    reading_ = true;
    StartRead(&in_);
  }

  // One read is in flight at a time, so the read side (decoding, the
  // stream's channel, chunk numbers) runs on one thread at a time. The chunk
  // joins the queue of chunks read, which a store thread takes as a group.
  void OnReadDone(bool ok) override {
    if (!ok) {  // the client half-closed (or the call broke)
      EndReads(absl::OkStatus());
      return;
    }
    auto chunk = std::make_unique<wire::IngestChunk>();
    if (absl::Status s = ReadChunk(chunk.get()); !s.ok()) {
      metrics_->CountIngestRejected(1);
      EndReads(s);
      return;
    }
    const uint64_t ticket = chunk_index_++;
    ReadChunkEntry e{ticket, channel_, chunk->chunk_id() != 0 ? chunk->chunk_id() : ticket,
                     static_cast<size_t>(chunk->messages_size()), nullptr};
    e.prepared = prepare_(channel_, std::move(chunk));
    bool read_more = false;
    {
      std::lock_guard<std::mutex> lock(mu_);
      queued_messages_ += e.messages;
      queued_.push_back(std::move(e));
      ++in_progress_;
      MaybeStartGroupLocked();
      read_more = CanReadLocked();
      reading_ = read_more;
    }
    if (read_more) StartRead(&in_);
  }

  void OnWriteDone(bool ok) override {
    Advance([&] {
      ready_.erase(ready_.begin());
      writing_ = false;
      ++next_write_;
      if (!ok) {
        write_failed_ = true;
        if (end_status_.ok()) end_status_ = absl::CancelledError("client went away before the ack");
        ready_.clear();
      }
    });
  }

  void OnDone() override {
    if (counted_) --open_streams;
    delete this;
  }

 private:
  // Decodes the chunk just read and checks its channel against the stream's.
  absl::Status ReadChunk(wire::IngestChunk* chunk) {
    SM_RETURN_IF_ERROR(DecodeRequest(in_, chunk, absl::StrCat("chunk ", chunk_index_)));
    if (chunk->channel().empty()) return absl::OkStatus();
    if (channel_.empty()) {
      channel_ = chunk->channel();
      scope_.set_channel(channel_);
    } else if (chunk->channel() != channel_) {
      return absl::InvalidArgumentError(
          absl::StrCat("chunk ", chunk_index_, ": channel '", chunk->channel(),
                       "' differs from the stream's channel '", channel_, "'"));
    }
    return absl::OkStatus();
  }

  static bool SeveralStreams() { return open_streams.load(std::memory_order_relaxed) > 1; }

  // Starts storing the queued chunks as a group on a store thread when no
  // group is being appended and fewer than the limit are in progress (one
  // with several streams open). REQUIRES: mu_ held.
  void MaybeStartGroupLocked() {
    const size_t limit = SeveralStreams() ? 1 : kMaxGroupsInProgress;
    if (queued_.empty() || appending_ || storing_ >= limit) return;
    ++storing_;
    appending_ = true;
    // std::function copies its target: the group travels shared.
    auto group = std::make_shared<Group>(TakeGroupLocked());
    workers_->Run([this, group] { StoreGroup(std::move(*group)); });
  }

  // The queued chunks a group takes: from the front, at least one, those of
  // the first one's channel, up to max_group_messages_. REQUIRES: mu_ held.
  Group TakeGroupLocked() {
    Group g;
    size_t messages = 0;
    while (!queued_.empty()) {
      ReadChunkEntry& e = queued_.front();
      const size_t n = e.messages;
      if (!g.empty() && (messages + n > max_group_messages_ || e.channel != g.front().channel)) {
        break;
      }
      messages += n;
      queued_messages_ -= n;
      g.push_back(std::move(e));
      queued_.pop_front();
    }
    return g;
  }

  // On a store thread: stores `group` and makes its chunks'
  // acknowledgements ready. Once its append is done, the next group may
  // start on another store thread while this one is indexed.
  void StoreGroup(Group group) {
    bool appended = false;
    const std::function<void()> after = [&] {
      appended = true;
      std::lock_guard<std::mutex> lock(mu_);
      appending_ = false;
      MaybeStartGroupLocked();
    };
    std::vector<PreparedChunk*> chunks;
    chunks.reserve(group.size());
    for (const ReadChunkEntry& e : group) chunks.push_back(e.prepared.get());
    std::vector<absl::StatusOr<storage::AppendResult>> results =
        ingest_(group.front().channel, chunks, after);
    if (!appended) after();  // every chunk refused before the append
    std::vector<grpc::ByteBuffer> acks(group.size());
    for (size_t i = 0; i < group.size(); ++i) {
      acks[i] = EncodeAck(group[i], i < results.size()
                                        ? results[i]
                                        : absl::InternalError("chunk left without a result"));
    }
    Advance([&] {
      in_progress_ -= group.size();
      for (size_t i = 0; i < group.size() && !write_failed_; ++i) {
        ready_.emplace(group[i].ticket, std::move(acks[i]));
      }
    });
    // This thread is not one of the call's reactions, so gRPC does not hold
    // the call open for it: until storing_ drops, the call cannot finish
    // (and the reactor be deleted) under it. Its last touch of the reactor
    // is that decrement, or the Finish it decides on with it.
    std::optional<grpc::Status> finish;
    {
      std::lock_guard<std::mutex> lock(mu_);
      --storing_;
      MaybeStartGroupLocked();
      finish = FinishLocked();
    }
    if (finish) Finish(*std::move(finish));
  }

  // A chunk's acknowledgement, encoded (a chunk the service refused is
  // acknowledged with its error).
  static grpc::ByteBuffer EncodeAck(const ReadChunkEntry& e,
                                    const absl::StatusOr<storage::AppendResult>& r) {
    v1::IngestAck ack;
    ack.set_chunk_id(e.chunk_id);
    if (r.ok()) {
      ack.set_stored(r->stored);
      ack.set_duplicates(r->duplicates);
      ack.set_first_seq(r->first_seq);
      ack.set_last_seq(r->last_seq);
    } else {
      ack.mutable_error()->set_code(static_cast<int>(r.status().code()));
      ack.mutable_error()->set_message(
          absl::StrCat("chunk ", e.ticket, ": ", r.status().message()));
    }
    grpc::ByteBuffer out;
    if (absl::Status s = EncodeResponse(ack, &out); !s.ok()) {
      LOG_WARN("ingest stream: acknowledgement not encoded").Str("error", s.message());
    }
    return out;
  }

  // Applies `update` to the shared state, then starts what it allows: the
  // next acknowledgement's write, the next read, or the end of the call.
  template <typename Update>
  void Advance(Update update) {
    const grpc::ByteBuffer* write = nullptr;
    bool read_more = false;
    {
      std::lock_guard<std::mutex> lock(mu_);
      update();
      write = NextWriteLocked();
      read_more = !reading_ && CanReadLocked();
      if (read_more) reading_ = true;
    }
    if (write != nullptr) StartWrite(write);
    if (read_more) StartRead(&in_);
    MaybeFinish();
  }

  // Reads ahead while fewer messages are queued than two groups take (one
  // chunk in progress at most with several streams open). REQUIRES: mu_
  // held.
  bool CanReadLocked() const {
    if (reads_ended_ || write_failed_ || ready_.size() + in_progress_ >= kMaxQueuedAcks) {
      return false;
    }
    return SeveralStreams() ? in_progress_ < 1 : queued_messages_ < 2 * max_group_messages_;
  }
  // The acknowledgement to write next, in chunk order; null when it is not
  // ready or a write is in flight. REQUIRES: mu_ held.
  const grpc::ByteBuffer* NextWriteLocked() {
    if (writing_ || write_failed_ || ready_.empty() || ready_.begin()->first != next_write_) {
      return nullptr;
    }
    writing_ = true;
    return &ready_.begin()->second;
  }

  void EndReads(absl::Status s) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      reading_ = false;
      reads_ended_ = true;
      if (end_status_.ok()) end_status_ = std::move(s);
    }
    MaybeFinish();
  }

  // Finishes once reading has ended, no chunk is in progress, no store
  // thread holds the reactor and every acknowledgement is written.
  void MaybeFinish() {
    std::optional<grpc::Status> finish;
    {
      std::lock_guard<std::mutex> lock(mu_);
      finish = FinishLocked();
    }
    if (finish) Finish(*std::move(finish));
  }
  // The call's final status when it is to finish now (then once only).
  // REQUIRES: mu_ held.
  std::optional<grpc::Status> FinishLocked() {
    if (finished_ || reading_ || in_progress_ > 0 || storing_ > 0 || writing_) return std::nullopt;
    if (!reads_ended_ && !write_failed_) return std::nullopt;
    if (!write_failed_ && !ready_.empty()) return std::nullopt;
    finished_ = true;
    return scope_.Done(end_status_);
  }

  ServerMetrics* const metrics_;
  StoreWorkers* const workers_;
  const size_t max_group_messages_;
  const PrepareChunkFn prepare_;
  const IngestChunksFn ingest_;
  RpcScope scope_;
  bool counted_ = false;  // in open_streams
  // The read side's (one read in flight at a time).
  std::string channel_;
  uint64_t chunk_index_ = 0;
  grpc::ByteBuffer in_;

  std::mutex mu_;
  std::deque<ReadChunkEntry> queued_;           // chunks read, not yet in a group
  size_t queued_messages_ = 0;                  // their messages
  size_t in_progress_ = 0;                      // chunks read, their acks not ready
  size_t storing_ = 0;                          // groups being stored
  bool appending_ = false;                      // one of them is not appended yet
  std::map<uint64_t, grpc::ByteBuffer> ready_;  // acks by chunk; the first is written next
  uint64_t next_write_ = 0;                     // chunk whose ack is written next
  bool reading_ = false;                        // a read is in flight
  bool reads_ended_ = false;                    // no read will be started again
  bool writing_ = false;
  bool write_failed_ = false;
  bool finished_ = false;
  absl::Status end_status_;
};

}  // namespace

grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer>* NewIngestStreamReactor(
    grpc::CallbackServerContext* ctx, ServerMetrics* metrics, StoreWorkers* workers,
    absl::Status admitted, size_t max_group_messages, PrepareChunkFn prepare,
    IngestChunksFn ingest) {
  return new IngestStreamReactor(ctx, metrics, workers, std::move(admitted), max_group_messages,
                                 std::move(prepare), std::move(ingest));
}

}  // namespace speakermem::server
