// A running speakermemd: the engine, the gRPC server (with health checking and
// reflection) and the metrics endpoint. Used by main() and by integration
// tests, which start it on port 0 with a temporary data dir.
#ifndef SPEAKERMEM_SERVER_SERVER_H_
#define SPEAKERMEM_SERVER_SERVER_H_

#include <chrono>
#include <memory>

#include "absl/status/statusor.h"
#include "server/config.h"

namespace speakermem::server {

// Thread-safe: Shutdown may be called from any thread, once.
class Server {
 public:
  // Opens the store, binds the ports and starts serving. Health reports
  // NOT_SERVING (and RPCs UNAVAILABLE) until the index rebuild, which runs in
  // the background, completes. Errors: the store's (FAILED_PRECONDITION for a
  // newer format, UNAVAILABLE when locked), UNAVAILABLE when a port cannot be
  // bound.
  static absl::StatusOr<std::unique_ptr<Server>> Start(const ServerConfig& config);

  virtual ~Server() = default;

  virtual int port() const = 0;
  // 0 when the metrics endpoint is disabled.
  virtual int metrics_port() const = 0;
  // The engine behind the RPCs, for benchmarks that compare an RPC with the
  // same call in process. Owned by the server.
  virtual engine::Memory* memory() = 0;
  virtual bool ready() const = 0;
  // Blocks until ready or `timeout`; returns ready().
  virtual bool WaitUntilReady(std::chrono::milliseconds timeout) = 0;
  // Stops accepting calls, lets in-flight ones finish until `grace` has
  // passed (then cancels them), flushes the store. Idempotent.
  virtual void Shutdown(std::chrono::milliseconds grace) = 0;
};

}  // namespace speakermem::server

#endif  // SPEAKERMEM_SERVER_SERVER_H_
