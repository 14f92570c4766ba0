#include "server/ingest_stream.h"

#include <atomic>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>

#include "absl/strings/str_cat.h"
#include "common/log.h"
#include "common/status_macros.h"
#include "server/ingest_wire.pb.h"
#include "server/metrics.h"
#include "server/request_codec.h"
#include "server/rpc_scope.h"
#include "speakermem/v1/speakermem.pb.h"

namespace speakermem::server {
namespace {

// Chunks of one stream stored at once: the next chunk is decoded, validated
// and appended while the previous one is being indexed. Appends keep the
// stream's order (a chunk waits for its turn, holding a gRPC callback
// thread); acknowledgements too. With several streams open the callback
// threads have other streams' chunks to store instead of waiting, so each
// stream then keeps one chunk in progress.
constexpr size_t kMaxChunksInProgress = 2;
std::atomic<int> open_streams{0};
// Acknowledgements waiting for the transport before reading pauses: a
// client that does not read its acks stops being read.
constexpr size_t kMaxQueuedAcks = 32;

class IngestStreamReactor final
    : public grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer> {
 public:
  IngestStreamReactor(grpc::CallbackServerContext* ctx, ServerMetrics* metrics,
                      absl::Status admitted, IngestChunkFn ingest)
      : metrics_(metrics), ingest_(std::move(ingest)), scope_("IngestStream", ctx, metrics) {
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
  // stream's channel, chunk numbers) runs on one thread at a time; the
  // chunk itself is stored after the next read has started, so a second
  // chunk can be in progress on another callback thread.
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
    const std::string channel = channel_;
    bool read_more = false;
    {
      std::lock_guard<std::mutex> lock(mu_);
      ++in_progress_;
      read_more = CanReadLocked();
      reading_ = read_more;
    }
    if (read_more) StartRead(&in_);
    grpc::ByteBuffer ack = Store(ticket, channel, *chunk);
    Advance([&] {
      --in_progress_;
      if (!write_failed_) ready_.emplace(ticket, std::move(ack));
    });
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

  // Stores chunk number `ticket` in its turn; its acknowledgement, encoded
  // (a chunk the service refused is acknowledged with its error).
  grpc::ByteBuffer Store(uint64_t ticket, const std::string& channel,
                         const wire::IngestChunk& chunk) {
    bool took_turn = false;
    const std::function<void()> before = [&] {
      took_turn = true;
      std::unique_lock<std::mutex> lock(turn_mu_);
      turn_cv_.wait(lock, [&] { return turn_ == ticket; });
    };
    const std::function<void()> after = [&] {
      std::lock_guard<std::mutex> lock(turn_mu_);
      turn_ = ticket + 1;
      turn_cv_.notify_all();
    };
    absl::StatusOr<storage::AppendResult> r = ingest_(channel, chunk, before, after);
    if (!took_turn) {  // refused before its append: pass the turn on in order
      before();
      after();
    }
    v1::IngestAck ack;
    ack.set_chunk_id(chunk.chunk_id() != 0 ? chunk.chunk_id() : ticket);
    if (r.ok()) {
      ack.set_stored(r->stored);
      ack.set_duplicates(r->duplicates);
      ack.set_first_seq(r->first_seq);
      ack.set_last_seq(r->last_seq);
    } else {
      ack.mutable_error()->set_code(static_cast<int>(r.status().code()));
      ack.mutable_error()->set_message(absl::StrCat("chunk ", ticket, ": ", r.status().message()));
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

  // REQUIRES: mu_ held.
  bool CanReadLocked() const {
    const size_t limit =
        open_streams.load(std::memory_order_relaxed) > 1 ? 1 : kMaxChunksInProgress;
    return !reads_ended_ && !write_failed_ && in_progress_ < limit &&
           ready_.size() + in_progress_ < kMaxQueuedAcks;
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

  // Finishes once reading has ended, no chunk is in progress and every
  // acknowledgement is written.
  void MaybeFinish() {
    absl::Status status;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (finished_ || reading_ || in_progress_ > 0 || writing_) return;
      if (!reads_ended_ && !write_failed_) return;
      if (!write_failed_ && !ready_.empty()) return;
      finished_ = true;
      status = end_status_;
    }
    Finish(scope_.Done(status));
  }

  ServerMetrics* const metrics_;
  const IngestChunkFn ingest_;
  RpcScope scope_;
  bool counted_ = false;  // in open_streams
  // The read side's (one read in flight at a time).
  std::string channel_;
  uint64_t chunk_index_ = 0;
  grpc::ByteBuffer in_;

  // Appends in chunk order: the chunk whose turn it is.
  std::mutex turn_mu_;
  std::condition_variable turn_cv_;
  uint64_t turn_ = 0;

  std::mutex mu_;
  std::map<uint64_t, grpc::ByteBuffer> ready_;  // acks by chunk; the first is written next
  uint64_t next_write_ = 0;                     // chunk whose ack is written next
  size_t in_progress_ = 0;                      // chunks being stored
  bool reading_ = false;                        // a read is in flight
  bool reads_ended_ = false;                    // no read will be started again
  bool writing_ = false;
  bool write_failed_ = false;
  bool finished_ = false;
  absl::Status end_status_;
};

}  // namespace

grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer>* NewIngestStreamReactor(
    grpc::CallbackServerContext* ctx, ServerMetrics* metrics, absl::Status admitted,
    IngestChunkFn ingest) {
  return new IngestStreamReactor(ctx, metrics, std::move(admitted), std::move(ingest));
}

}  // namespace speakermem::server
