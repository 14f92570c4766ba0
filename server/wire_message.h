// The bytes-typed ingest wire message (server/ingest_wire.proto) as a domain
// message. On its own, so the ingest fuzz target decodes exactly as the
// server does while linking only the wire mirror.
#ifndef SPEAKERMEM_SERVER_WIRE_MESSAGE_H_
#define SPEAKERMEM_SERVER_WIRE_MESSAGE_H_

#include "server/ingest_wire.pb.h"
#include "storage/types.h"

namespace speakermem::server {

// Takes the strings out of `m` (its channel stays); the const overload
// copies `m` first.
storage::Message FromWire(wire::Message&& m);
storage::Message FromWire(const wire::Message& m);

}  // namespace speakermem::server

#endif  // SPEAKERMEM_SERVER_WIRE_MESSAGE_H_
