// The ExportChannel and ImportChannel RPCs' reactors. Export streams a
// header, then the messages page by page, then every record, all read from
// one store snapshot (engine::Memory::ExportChannel), one write in flight.
// Import reads the whole export (bounded), then loads it in one engine call.
#ifndef SPEAKERMEM_SERVER_CHANNEL_TRANSFER_H_
#define SPEAKERMEM_SERVER_CHANNEL_TRANSFER_H_

#include <grpcpp/server_context.h>
#include <grpcpp/support/byte_buffer.h>
#include <grpcpp/support/server_callback.h>

#include <functional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "server/auth.h"

namespace speakermem::engine {
class Memory;
}

namespace speakermem::server {

class Limiter;
class ServerMetrics;

// What the reactors need of the service.
struct TransferContext {
  // The caller (tenant access), or why the call is refused (authentication,
  // readiness).
  std::function<absl::StatusOr<Principal>(grpc::CallbackServerContext*)> admit;
  // INVALID_ARGUMENT for a channel name the service does not accept.
  std::function<absl::Status(const std::string&)> check_channel;
  engine::Memory* memory = nullptr;
  Limiter* limiter = nullptr;  // admits the import's messages
  ServerMetrics* metrics = nullptr;
};

grpc::ServerWriteReactor<grpc::ByteBuffer>* NewExportReactor(TransferContext t,
                                                             grpc::CallbackServerContext* ctx,
                                                             const grpc::ByteBuffer& request);
grpc::ServerReadReactor<grpc::ByteBuffer>* NewImportReactor(TransferContext t,
                                                            grpc::CallbackServerContext* ctx,
                                                            grpc::ByteBuffer* response);

}  // namespace speakermem::server

#endif  // SPEAKERMEM_SERVER_CHANNEL_TRANSFER_H_
