// The one place every request the server receives is decoded: the bytes of
// each RPC's request (unary, streamed chunks and items alike) are parsed
// here and their enum fields checked, so a malformed request, one whose
// string fields are not UTF-8 or one with an enum number its enum does not
// define is refused with INVALID_ARGUMENT naming the request or the field,
// whichever RPC it was sent to. Only server .cc files and the fuzz target
// include this.
#ifndef SPEAKERMEM_SERVER_REQUEST_CODEC_H_
#define SPEAKERMEM_SERVER_REQUEST_CODEC_H_

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace grpc {
class ByteBuffer;
}  // namespace grpc
namespace google::protobuf {
class Message;
}  // namespace google::protobuf

namespace speakermem::server {

// Parses `bytes` as `out`'s type, then CheckEnumFields. INVALID_ARGUMENT
// "<what>: not a valid <Type> (...)" when they do not parse, naming the
// string field when one is not UTF-8; `what` names the request ("request",
// "chunk 3", "item 12").
absl::Status DecodeRequest(absl::string_view bytes, google::protobuf::Message* out,
                           absl::string_view what = "request");
absl::Status DecodeRequest(const grpc::ByteBuffer& buffer, google::protobuf::Message* out,
                           absl::string_view what = "request");

// INTERNAL when `msg` cannot be serialized.
absl::Status EncodeResponse(const google::protobuf::Message& msg, grpc::ByteBuffer* out);

// INVALID_ARGUMENT naming the field ("mode: 99 is not a QueryMode value")
// when any enum field of `m`, at any depth, holds a number its enum does not
// define (proto3 keeps unknown enum numbers instead of rejecting them).
absl::Status CheckEnumFields(const google::protobuf::Message& m);

// Routes libprotobuf's own log lines (such as the one it writes on finding
// invalid UTF-8 while parsing) through the JSON log, so that the log stays
// one JSON object per line. Idempotent.
void RouteProtobufLogs();

}  // namespace speakermem::server

#endif  // SPEAKERMEM_SERVER_REQUEST_CODEC_H_
