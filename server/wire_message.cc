#include "server/wire_message.h"

#include <utility>

namespace speakermem::server {

storage::Message FromWire(const wire::Message& m) { return FromWire(wire::Message(m)); }

storage::Message FromWire(wire::Message&& m) {
  storage::Message out;
  out.message_id = std::move(*m.mutable_message_id());
  out.speaker = std::move(*m.mutable_speaker());
  out.speaker_id = std::move(*m.mutable_speaker_id());
  out.text = std::move(*m.mutable_text());
  out.timestamp_ms = m.timestamp_ms();
  out.session = std::move(*m.mutable_session());
  out.turn = m.turn();
  out.reply_to = std::move(*m.mutable_reply_to());
  // Last entry wins for a repeated key, as for a protobuf map.
  for (auto& e : *m.mutable_metadata()) out.metadata[e.key()] = std::move(*e.mutable_value());
  return out;
}

}  // namespace speakermem::server
