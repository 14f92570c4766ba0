// The IngestStream RPC's reactor: chunks in, one acknowledgement per chunk
// out, both in the stream's order. gRPC's callback threads read, decode and
// prepare chunks (admission, conversion, validation) into a queue; store
// threads (StoreWorkers) take what queued up as one group and store it with
// one append and one WAL write (group commit,
// engine::Memory::IngestGroup), each chunk still acknowledged on its own
// with its own counts or error. While it is the only stream open, two
// groups are in progress at once: one is appended while the other is
// indexed (BM25, embedding queue). Acknowledgements are written while the
// next chunks are read, so a client's window of chunks keeps the store busy
// instead of waiting for each acknowledgement's round trip.
#ifndef SPEAKERMEM_SERVER_INGEST_STREAM_H_
#define SPEAKERMEM_SERVER_INGEST_STREAM_H_

#include <grpcpp/server_context.h>
#include <grpcpp/support/byte_buffer.h>
#include <grpcpp/support/server_callback.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "storage/types.h"

namespace speakermem::server {

class ServerMetrics;
class StoreWorkers;
namespace wire {
class IngestChunk;
}

// A chunk made ready to store on the stream's read side, or why it was
// refused; the service defines it (admitted, converted, validated), so that
// a group's append, which runs one at a time per channel, only appends.
struct PreparedChunk;
using PrepareChunkFn = std::function<std::shared_ptr<PreparedChunk>(
    const std::string& channel, std::unique_ptr<wire::IngestChunk> chunk)>;

// Stores consecutive prepared chunks of the stream's channel as one group
// (engine::Memory::IngestGroup), one result per chunk in order (a refused
// chunk's is its error), calling `appended` once the group's append is done
// (not when every chunk was refused before it): the stream starts its next
// group then.
using IngestChunksFn = std::function<std::vector<absl::StatusOr<storage::AppendResult>>(
    const std::string& channel, const std::vector<PreparedChunk*>& chunks,
    const std::function<void()>& appended)>;

// `admitted`: the caller's authentication and the server's readiness,
// checked when the call starts (an error finishes the call at once).
// `prepare` runs on the read side, chunk by chunk; `workers` store the
// groups and outlive the call. `max_group_messages`: the most messages one
// group may hold (the largest batch the store accepts); a larger chunk is
// stored alone.
grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer>* NewIngestStreamReactor(
    grpc::CallbackServerContext* ctx, ServerMetrics* metrics, StoreWorkers* workers,
    absl::Status admitted, size_t max_group_messages, PrepareChunkFn prepare,
    IngestChunksFn ingest);

}  // namespace speakermem::server

#endif  // SPEAKERMEM_SERVER_INGEST_STREAM_H_
