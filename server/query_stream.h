// The QueryStream RPC's reactor: the query runs on a thread of its own (the
// gRPC callback threads never wait on a model), its events are written one
// at a time in order: evidence, answer deltas (coalesced while a write is in
// flight), final. A cancelled call makes the query's callbacks return false,
// which stops the pipeline and abandons the Answer stage's model call.
#ifndef SPEAKERMEM_SERVER_QUERY_STREAM_H_
#define SPEAKERMEM_SERVER_QUERY_STREAM_H_

#include <grpcpp/server_context.h>
#include <grpcpp/support/byte_buffer.h>
#include <grpcpp/support/server_callback.h>

#include <functional>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace speakermem::v1 {
class QueryRequest;
class QueryResponse;
}  // namespace speakermem::v1

namespace speakermem::server {

class ServerMetrics;

// What the query thread sends. Evidence and Delta return false once the
// caller has gone.
class QueryEventSink {
 public:
  virtual ~QueryEventSink() = default;
  virtual bool Evidence(const v1::QueryResponse& evidence) = 0;
  virtual bool Delta(absl::string_view text) = 0;
  virtual void Final(const v1::QueryResponse& response) = 0;
};

// Runs one streamed query (on the reactor's thread): authentication,
// admission and the query itself; its status ends the call (OK after
// Final).
using QueryStreamRun = std::function<absl::Status(
    grpc::CallbackServerContext* ctx, const v1::QueryRequest& request, QueryEventSink* sink)>;

grpc::ServerWriteReactor<grpc::ByteBuffer>* NewQueryStreamReactor(grpc::CallbackServerContext* ctx,
                                                                  const grpc::ByteBuffer& request,
                                                                  ServerMetrics* metrics,
                                                                  QueryStreamRun run);

}  // namespace speakermem::server

#endif  // SPEAKERMEM_SERVER_QUERY_STREAM_H_
