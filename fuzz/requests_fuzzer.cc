// libFuzzer target: every request the server decodes, through the one
// place it decodes them (server/request_codec.h). The first byte picks the
// request type: each method's input type of speakermem.v1.SpeakerMem (in
// method order) and the bytes-typed ingest mirrors the raw Ingest methods
// read; the rest is the request's bytes, decoded exactly as a handler
// receives them. Checked: decoding never crashes; a refusal is
// INVALID_ARGUMENT; an accepted request has no undefined enum number, and
// re-encoded it decodes again to an equal message.
#include <google/protobuf/descriptor.h>
#include <google/protobuf/message.h>
#include <google/protobuf/util/message_differencer.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "server/ingest_wire.pb.h"
#include "server/request_codec.h"
#include "speakermem/v1/speakermem.pb.h"

namespace {

namespace pb = google::protobuf;

const std::vector<const pb::Message*>& RequestTypes() {
  static const auto* types = [] {
    auto* out = new std::vector<const pb::Message*>;
    std::set<const pb::Descriptor*> seen;
    // Linking the generated code registers the service in the pool.
    speakermem::v1::QueryRequest link_v1;
    speakermem::server::wire::IngestRequest link_wire;
    const pb::ServiceDescriptor* svc =
        pb::DescriptorPool::generated_pool()->FindServiceByName("speakermem.v1.SpeakerMem");
    if (svc == nullptr) __builtin_trap();
    std::vector<const pb::Descriptor*> ds;
    for (int i = 0; i < svc->method_count(); ++i) ds.push_back(svc->method(i)->input_type());
    ds.push_back(speakermem::server::wire::IngestRequest::descriptor());
    ds.push_back(speakermem::server::wire::IngestChunk::descriptor());
    for (const auto* d : ds) {
      if (seen.insert(d).second) {
        out->push_back(pb::MessageFactory::generated_factory()->GetPrototype(d));
      }
    }
    return out;
  }();
  return *types;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const auto& types = RequestTypes();
  const pb::Message* prototype = types[data[0] % types.size()];
  const absl::string_view bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  std::unique_ptr<pb::Message> req(prototype->New());
  absl::Status s = speakermem::server::DecodeRequest(bytes, req.get());
  if (!s.ok()) {
    if (s.code() != absl::StatusCode::kInvalidArgument) __builtin_trap();
    return 0;
  }
  if (!speakermem::server::CheckEnumFields(*req).ok()) __builtin_trap();
  std::string again;
  if (!req->SerializeToString(&again)) __builtin_trap();
  std::unique_ptr<pb::Message> back(prototype->New());
  if (!speakermem::server::DecodeRequest(again, back.get()).ok()) __builtin_trap();
  if (!pb::util::MessageDifferencer::Equals(*req, *back)) __builtin_trap();
  return 0;
}
