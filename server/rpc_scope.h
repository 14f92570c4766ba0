// Per-RPC bookkeeping shared by every handler of the service: the request
// id, the latency metric by method and code, and one access-log line whose
// code says what happened to the caller (a call given up on is logged as
// CANCELLED or DEADLINE_EXCEEDED, not as the handler's OK).
#ifndef SPEAKERMEM_SERVER_RPC_SCOPE_H_
#define SPEAKERMEM_SERVER_RPC_SCOPE_H_

#include <grpcpp/server_context.h>
#include <grpcpp/support/status.h>

#include <chrono>
#include <string>

#include "absl/status/status.h"
#include "server/metrics.h"

namespace speakermem::server {

// Constructed when a call starts (it sets the x-request-id response
// header); Done once, with the handler's status, when it ends.
class RpcScope {
 public:
  RpcScope(const char* method, grpc::CallbackServerContext* ctx, ServerMetrics* metrics);

  void set_channel(const std::string& channel) { channel_ = channel; }

  // Records the call and returns its status for gRPC.
  grpc::Status Done(absl::Status status);

 private:
  const std::string method_;
  grpc::CallbackServerContext* const ctx_;
  ServerMetrics* const metrics_;
  const std::chrono::steady_clock::time_point start_;
  std::string request_id_;
  std::string channel_;
};

}  // namespace speakermem::server

#endif  // SPEAKERMEM_SERVER_RPC_SCOPE_H_
