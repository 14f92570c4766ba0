// The gRPC service speakermem.v1.SpeakerMem: thin handlers that unpack the
// request, call the engine, and finish with the mapped status.
#ifndef SPEAKERMEM_SERVER_SERVICE_H_
#define SPEAKERMEM_SERVER_SERVICE_H_

#include <atomic>
#include <memory>

namespace grpc {
class Service;
}

namespace speakermem::engine {
class Memory;
}

namespace speakermem::server {

class ServerMetrics;
class KeyStore;
class Limiter;

// Every RPC answers UNAVAILABLE while *ready is false (indexes rebuilding).
// With `keys` (auth on) every RPC needs an API key (metadata x-api-key):
// UNAUTHENTICATED without a valid one; the key's tenant scopes every
// channel; admin RPCs (Rederive, CorrectRecord, Backup) need an admin key
// (PERMISSION_DENIED). Without `keys` everything is tenant "default".
// All pointers must outlive the service.
std::unique_ptr<grpc::Service> NewSpeakerMemService(engine::Memory* memory, ServerMetrics* metrics,
                                                    const std::atomic<bool>* ready,
                                                    KeyStore* keys = nullptr,
                                                    Limiter* limiter = nullptr);

}  // namespace speakermem::server

#endif  // SPEAKERMEM_SERVER_SERVICE_H_
