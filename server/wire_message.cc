#include "server/wire_message.h"

namespace speakermem::server {

storage::Message FromWire(const wire::Message& m) {
  storage::Message out;
  out.message_id = m.message_id();
  out.speaker = m.speaker();
  out.speaker_id = m.speaker_id();
  out.text = m.text();
  out.timestamp_ms = m.timestamp_ms();
  out.session = m.session();
  out.turn = m.turn();
  out.reply_to = m.reply_to();
  // Last entry wins for a repeated key, as for a protobuf map.
  for (const auto& e : m.metadata()) out.metadata[e.key()] = e.value();
  return out;
}

}  // namespace speakermem::server
