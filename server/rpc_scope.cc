#include "server/rpc_scope.h"

#include <cstdio>
#include <random>

#include "common/log.h"
#include "server/convert.h"

namespace speakermem::server {
namespace {

constexpr char kRequestIdHeader[] = "x-request-id";

std::string NewRequestId() {
  thread_local std::mt19937_64 rng(std::random_device{}());
  char buf[17];
  std::snprintf(buf, sizeof(buf), "%016llx", static_cast<unsigned long long>(rng()));
  return buf;
}

}  // namespace

// The request id is the client's x-request-id when it sent a sane one.
RpcScope::RpcScope(const char* method, grpc::CallbackServerContext* ctx, ServerMetrics* metrics)
    : method_(method), ctx_(ctx), metrics_(metrics), start_(std::chrono::steady_clock::now()) {
  auto it = ctx->client_metadata().find(kRequestIdHeader);
  if (it != ctx->client_metadata().end() && !it->second.empty() && it->second.size() <= 64) {
    request_id_.assign(it->second.data(), it->second.size());
    for (char& c : request_id_) {
      if (c < 0x21 || c > 0x7E) c = '_';
    }
  } else {
    request_id_ = NewRequestId();
  }
  ctx->AddInitialMetadata(kRequestIdHeader, request_id_);
}

grpc::Status RpcScope::Done(absl::Status status) {
  // A call the caller gave up on (its deadline passed, it cancelled, it
  // went away) is logged and counted as that, not as what the handler
  // returned to nobody.
  if (status.ok() && ctx_->IsCancelled()) {
    status = ctx_->deadline() <= std::chrono::system_clock::now()
                 ? absl::DeadlineExceededError("the caller's deadline passed")
                 : absl::CancelledError("the caller cancelled or went away");
  }
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  grpc::Status g = ToGrpc(status);
  std::string code = CodeName(g.error_code());
  metrics_->ObserveRpc(method_, code, secs);
  LogLevel level = status.ok() || absl::IsInvalidArgument(status) || absl::IsNotFound(status)
                       ? LogLevel::kInfo
                       : LogLevel::kWarn;
  LogLine line(level, "rpc");
  line.Str("method", method_)
      .Str("request_id", request_id_)
      .Str("code", code)
      .Num("ms", secs * 1000);
  if (!channel_.empty()) line.Str("channel", channel_);
  if (!status.ok()) line.Str("error", status.message());
  return g;
}

}  // namespace speakermem::server
