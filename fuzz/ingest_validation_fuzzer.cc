// libFuzzer target: the ingest path's request decoding and validation: bytes
// parsed as the bytes-typed wire mirror of IngestRequest (what the raw
// Ingest handler receives), turned into messages as the server does, and
// validated (ValidateMessages) under the default limits.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "server/ingest_wire.pb.h"
#include "server/wire_message.h"
#include "storage/validation.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  speakermem::server::wire::IngestRequest req;
  if (!req.ParseFromArray(data, static_cast<int>(size))) return 0;
  std::vector<speakermem::storage::Message> msgs;
  std::vector<absl::string_view> chans;
  for (const auto& m : req.messages()) {
    msgs.push_back(speakermem::server::FromWire(m));
    chans.push_back(m.channel());
  }
  speakermem::storage::IngestLimits limits;
  absl::Status s = speakermem::storage::ValidateMessages(req.channel(), chans, msgs, limits);
  // Accepted batches obey the limits.
  if (s.ok()) {
    if (msgs.size() > limits.max_batch_messages) __builtin_trap();
    for (const auto& m : msgs) {
      if (m.text.empty() || m.text.size() > limits.max_text_bytes) __builtin_trap();
    }
  }
  return 0;
}
