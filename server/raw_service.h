// The service's base: every method of speakermem.v1.SpeakerMem as a raw
// (byte buffer) callback method, so that its request bytes are decoded at
// one place (server/request_codec.h): whatever a caller sends to whichever
// RPC, a request that does not decode is answered INVALID_ARGUMENT naming it
// (not gRPC's UNIMPLEMENTED). Ingest's request is parsed with the
// bytes-typed mirror in ingest_wire.proto so invalid UTF-8 reaches
// validation. Included by server/service.cc only.
#ifndef SPEAKERMEM_SERVER_RAW_SERVICE_H_
#define SPEAKERMEM_SERVER_RAW_SERVICE_H_

#include "speakermem/v1/speakermem.grpc.pb.h"

namespace speakermem::server {

using S = v1::SpeakerMem;
// clang-format off
using RawServiceBase =
    S::WithRawCallbackMethod_Ingest<
    S::WithRawCallbackMethod_IngestStream<
    S::WithRawCallbackMethod_GetMessages<
    S::WithRawCallbackMethod_GetRoster<
    S::WithRawCallbackMethod_ListChannels<
    S::WithRawCallbackMethod_Query<
    S::WithRawCallbackMethod_Flush<
    S::WithRawCallbackMethod_ListRecords<
    S::WithRawCallbackMethod_GetRecord<
    S::WithRawCallbackMethod_ListParked<
    S::WithRawCallbackMethod_CorrectRecord<
    S::WithRawCallbackMethod_Rederive<
    S::WithRawCallbackMethod_Retrieve<
    S::WithRawCallbackMethod_QueryStream<
    S::WithRawCallbackMethod_ScoreWriterActions<
    S::WithRawCallbackMethod_ListTransitions<
    S::WithRawCallbackMethod_DeleteMessages<
    S::WithRawCallbackMethod_EditMessage<
    S::WithRawCallbackMethod_ForgetSpeaker<
    S::WithRawCallbackMethod_DeleteChannel<
    S::WithRawCallbackMethod_ExportChannel<
    S::WithRawCallbackMethod_ImportChannel<
    S::WithRawCallbackMethod_Backup<
    S::Service>>>>>>>>>>>>>>>>>>>>>>>;
// clang-format on

// Inside the service class: the raw unary method `Method` decodes its
// request as `Req`, runs the typed handler of the same name and encodes its
// `Resp` (Decoded, a member of the service).
#define SM_DECODED_UNARY(Method, Req, Resp)                                                       \
  grpc::ServerUnaryReactor* Method(grpc::CallbackServerContext* ctx, const grpc::ByteBuffer* raw, \
                                   grpc::ByteBuffer* raw_resp) override {                         \
    return Decoded<Req, Resp>(#Method, ctx, *raw, raw_resp,                                       \
                              [this](grpc::CallbackServerContext* c, const Req* q, Resp* r) {     \
                                return Method(c, q, r);                                           \
                              });                                                                 \
  }

}  // namespace speakermem::server

#endif  // SPEAKERMEM_SERVER_RAW_SERVICE_H_
