// The IngestStream RPC's reactor: chunks in, one acknowledgement per chunk
// out, both in the stream's order. While it is the only stream open, two of
// its chunks are in progress at once: one is decoded, validated and appended
// while the other is indexed (BM25, embedding queue). Acknowledgements are
// written while the next chunks are read, so a client's window of chunks
// keeps the store busy instead of waiting for each acknowledgement's round
// trip.
#ifndef SPEAKERMEM_SERVER_INGEST_STREAM_H_
#define SPEAKERMEM_SERVER_INGEST_STREAM_H_

#include <grpcpp/server_context.h>
#include <grpcpp/support/byte_buffer.h>
#include <grpcpp/support/server_callback.h>

#include <functional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "storage/types.h"

namespace speakermem::server {

class ServerMetrics;
namespace wire {
class IngestChunk;
}

// Stores one decoded chunk of the stream's channel, calling `before` once
// the chunk is valid and about to be appended and `after` once the append
// is done (engine::Memory::IngestOrder): the stream orders its chunks'
// appends with them.
using IngestChunkFn = std::function<absl::StatusOr<storage::AppendResult>(
    const std::string& channel, const wire::IngestChunk& chunk, const std::function<void()>& before,
    const std::function<void()>& after)>;

// `admitted`: the caller's authentication and the server's readiness,
// checked when the call starts (an error finishes the call at once).
grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer>* NewIngestStreamReactor(
    grpc::CallbackServerContext* ctx, ServerMetrics* metrics, absl::Status admitted,
    IngestChunkFn ingest);

}  // namespace speakermem::server

#endif  // SPEAKERMEM_SERVER_INGEST_STREAM_H_
