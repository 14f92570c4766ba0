#include "server/query_stream.h"

#include <atomic>
#include <deque>
#include <mutex>
#include <thread>

#include "server/request_codec.h"
#include "server/rpc_scope.h"
#include "speakermem/v1/speakermem.pb.h"

namespace speakermem::server {
namespace {

class QueryStreamReactor final : public grpc::ServerWriteReactor<grpc::ByteBuffer>,
                                 public QueryEventSink {
 public:
  QueryStreamReactor(grpc::CallbackServerContext* ctx, const grpc::ByteBuffer& raw,
                     ServerMetrics* metrics, QueryStreamRun run)
      : ctx_(ctx), scope_("QueryStream", ctx, metrics) {
    absl::Status decoded = DecodeRequest(raw, &req_);
    scope_.set_channel(req_.channel());
    if (!decoded.ok()) {
      Finish(scope_.Done(decoded));
      return;
    }
    worker_ = std::thread([this, run = std::move(run)] {
      absl::Status s = run(ctx_, req_, this);
      if (s.ok() && !final_sent_) s = absl::InternalError("the query ended without an answer");
      Complete(s);
    });
  }

  bool Evidence(const v1::QueryResponse& evidence) override {
    v1::QueryEvent e;
    *e.mutable_evidence() = evidence;
    return Push(std::move(e));
  }

  bool Delta(absl::string_view text) override {
    if (gone_.load()) return false;
    std::lock_guard<std::mutex> lock(mu_);
    // While a write is in flight, deltas queue behind it as one.
    if (!queue_.empty() && queue_.back().has_delta() && (queue_.size() > 1 || !writing_)) {
      queue_.back().mutable_delta()->append(text.data(), text.size());
      return true;
    }
    v1::QueryEvent e;
    e.set_delta(std::string(text));
    queue_.push_back(std::move(e));
    WriteNextLocked(nullptr);
    return true;
  }

  void Final(const v1::QueryResponse& response) override {
    v1::QueryEvent e;
    *e.mutable_final() = response;
    final_sent_ = Push(std::move(e));
  }

  void OnWriteDone(bool ok) override {
    grpc::Status done;
    {
      std::lock_guard<std::mutex> lock(mu_);
      writing_ = false;
      queue_.pop_front();
      if (!ok) {
        gone_ = true;
        queue_.clear();
      }
      if (!WriteNextLocked(&done)) return;
    }
    Finish(done);  // may run OnDone, which deletes this, before it returns
  }

  void OnCancel() override { gone_ = true; }

  void OnDone() override {
    if (worker_.joinable()) {
      if (worker_.get_id() == std::this_thread::get_id()) {
        worker_.detach();
      } else {
        worker_.join();
      }
    }
    delete this;
  }

 private:
  bool Push(v1::QueryEvent e) {
    if (gone_.load()) return false;
    std::lock_guard<std::mutex> lock(mu_);
    queue_.push_back(std::move(e));
    WriteNextLocked(nullptr);  // not complete yet: never finishes here
    return true;
  }

  // The query thread's last call: the call ends once every event is out
  // (here, or in OnWriteDone after the last write).
  void Complete(absl::Status s) {
    grpc::Status done;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!s.ok() && gone_.load() && !ctx_->IsCancelled()) {
        s = absl::CancelledError("the client stopped reading");
      }
      status_ = std::move(s);
      complete_ = true;
      if (!WriteNextLocked(&done)) return;
    }
    Finish(done);  // the last use of this: OnDone may run inline and delete it
  }

  // Under mu_: starts the next write; or, once the query is complete and
  // nothing is left to write, records the call's end in `done` and returns
  // true: the caller then calls Finish after unlocking, as its last use of
  // this (gRPC may run OnDone, which deletes this, inside Finish).
  bool WriteNextLocked(grpc::Status* done) {
    if (writing_ || finished_) return false;
    if (queue_.empty() || gone_.load()) {
      if (!complete_ || done == nullptr) return false;
      finished_ = true;
      *done = scope_.Done(status_);
      return true;
    }
    if (absl::Status s = EncodeResponse(queue_.front(), &out_); !s.ok()) {
      gone_ = true;
      queue_.clear();
      return WriteNextLocked(done);
    }
    writing_ = true;
    StartWrite(&out_);
    return false;
  }

  grpc::CallbackServerContext* const ctx_;
  RpcScope scope_;
  v1::QueryRequest req_;
  std::thread worker_;
  std::atomic<bool> gone_{false};  // cancelled, or a write failed
  bool final_sent_ = false;        // the query thread's own

  std::mutex mu_;
  std::deque<v1::QueryEvent> queue_;  // the front is being written when writing_
  grpc::ByteBuffer out_;
  bool writing_ = false;
  bool complete_ = false;
  bool finished_ = false;
  absl::Status status_;
};

}  // namespace

grpc::ServerWriteReactor<grpc::ByteBuffer>* NewQueryStreamReactor(grpc::CallbackServerContext* ctx,
                                                                  const grpc::ByteBuffer& request,
                                                                  ServerMetrics* metrics,
                                                                  QueryStreamRun run) {
  return new QueryStreamReactor(ctx, request, metrics, std::move(run));
}

}  // namespace speakermem::server
