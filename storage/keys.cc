#include "storage/keys.h"

namespace speakermem::storage::keys {

void AppendBE64(uint64_t v, std::string* out) {
  for (int shift = 56; shift >= 0; shift -= 8) {
    out->push_back(static_cast<char>((v >> shift) & 0xFF));
  }
}

void AppendBE32(uint32_t v, std::string* out) {
  for (int shift = 24; shift >= 0; shift -= 8) {
    out->push_back(static_cast<char>((v >> shift) & 0xFF));
  }
}

uint64_t DecodeBE64(absl::string_view s) {
  uint64_t v = 0;
  for (size_t i = 0; i < 8 && i < s.size(); ++i) {
    v = (v << 8) | static_cast<unsigned char>(s[i]);
  }
  return v;
}

std::string TenantPrefix(const std::string& tenant) {
  std::string k = tenant;
  k.push_back('\0');
  return k;
}

std::string ChannelPrefix(const ChannelRef& ch) {
  std::string k;
  k.reserve(ch.tenant.size() + ch.channel.size() + 12);
  k += ch.tenant;
  k.push_back('\0');
  k += ch.channel;
  k.push_back('\0');
  return k;
}

std::string ChannelPrefixEnd(const ChannelRef& ch) {
  std::string k = ChannelPrefix(ch);
  k.back() = '\x01';
  return k;
}

std::string MessageKey(const ChannelRef& ch, uint64_t seq) {
  std::string k = ChannelPrefix(ch);
  AppendBE64(seq, &k);
  return k;
}

std::string MessageIdKey(const ChannelRef& ch, absl::string_view message_id) {
  std::string k = ChannelPrefix(ch);
  k.push_back('i');
  k.append(message_id.data(), message_id.size());
  return k;
}

std::string SpeakerPrefix(const ChannelRef& ch, uint32_t ordinal) {
  std::string k = ChannelPrefix(ch);
  k.push_back('s');
  k.push_back(kOrdinalMark);
  AppendBE32(ordinal, &k);
  return k;
}

std::string SpeakerKey(const ChannelRef& ch, uint32_t ordinal, uint64_t seq) {
  std::string k = SpeakerPrefix(ch, ordinal);
  AppendBE64(seq, &k);
  return k;
}

std::string SessionTurnKey(const ChannelRef& ch, absl::string_view session, int32_t turn,
                           uint64_t seq) {
  std::string k = ChannelPrefix(ch);
  k.push_back('t');
  k.append(session.data(), session.size());
  k.push_back('\0');
  // Flip the sign bit so negative turns sort before positive ones.
  AppendBE32(static_cast<uint32_t>(turn) ^ 0x80000000u, &k);
  AppendBE64(seq, &k);
  return k;
}

std::string ChannelInfoKey(const ChannelRef& ch) {
  std::string k = ChannelPrefix(ch);
  k.push_back('c');
  return k;
}

std::string RosterPrefix(const ChannelRef& ch) {
  std::string k = ChannelPrefix(ch);
  k.push_back('r');
  return k;
}

std::string RosterKey(const ChannelRef& ch, uint32_t ordinal) {
  std::string k = RosterPrefix(ch);
  k.push_back(kOrdinalMark);
  AppendBE32(ordinal, &k);
  return k;
}

std::string RecordKey(const ChannelRef& ch, absl::string_view record_id) {
  std::string k = ChannelPrefix(ch);
  k.append(record_id.data(), record_id.size());
  return k;
}

std::string RecordLayerKey(const ChannelRef& ch, absl::string_view record_id) {
  std::string k = ChannelPrefix(ch);
  k.push_back('x');
  k.append(record_id.data(), record_id.size());
  return k;
}

std::string WriterStateKey(const ChannelRef& ch) {
  std::string k = ChannelPrefix(ch);
  k.push_back('w');
  return k;
}

std::string ParkedPrefix(const ChannelRef& ch) {
  std::string k = ChannelPrefix(ch);
  k.push_back('p');
  return k;
}

std::string ParkedKey(const ChannelRef& ch, uint64_t first_seq) {
  std::string k = ParkedPrefix(ch);
  AppendBE64(first_seq, &k);
  return k;
}

std::string TransitionPrefix(const ChannelRef& ch) {
  std::string k = ChannelPrefix(ch);
  k.push_back('j');
  return k;
}

std::string TransitionKey(const ChannelRef& ch, uint64_t first_seq) {
  std::string k = TransitionPrefix(ch);
  AppendBE64(first_seq, &k);
  return k;
}

std::string VectorKey(const ChannelRef& ch, char kind, uint64_t id) {
  std::string k = ChannelPrefix(ch);
  k.push_back(kind);
  AppendBE64(id, &k);
  return k;
}

bool ParseChannelKey(absl::string_view key, ChannelRef* ch, absl::string_view* rest) {
  size_t a = key.find('\0');
  if (a == absl::string_view::npos) return false;
  size_t b = key.find('\0', a + 1);
  if (b == absl::string_view::npos) return false;
  {
    absl::string_view part = key.substr(0, a);
    ch->tenant.assign(part.data(), part.size());
  }
  {
    absl::string_view part = key.substr(a + 1, b - a - 1);
    ch->channel.assign(part.data(), part.size());
  }
  *rest = key.substr(b + 1);
  return true;
}

}  // namespace speakermem::storage::keys
