// Key layout of every column family (internal to storage/).
//
// Every key starts with the channel prefix <tenant>\0<channel>\0, so a
// channel's keys are contiguous in every column family and can be
// range-scanned and range-deleted. Tenant, channel, speaker ids and sessions
// never contain NUL (validation rejects control characters).
//
// No key carries a speaker's name: a speaker is a per-channel ordinal in
// keys (its roster entry, the value, holds the name), so forgetting a
// speaker leaves no trace of the name in any file once the values are
// compacted away, RocksDB's MANIFEST (which records keys) included. Format
// 1 keyed them by name (`s<speaker_id>\0<seq>`, `r<speaker_id>`); opening
// such a store migrates it (storage/migrate_ordinals.cc). The \x01 after
// `s` and `r` cannot begin a name.
//
//   episodic  <prefix><seq BE64>                      -> StoredMessage
//   index     <prefix>i<message_id>                   -> seq BE64
//   index     <prefix>s\x01<speaker ordinal BE32><seq BE64> -> ""
//   index     <prefix>t<session>\0<turn BE32^sign><seq BE64> -> "" (only in
//             stores written before 2026-12; nothing reads it; deleted with
//             its message)
//   index     <prefix>x<record_id>                    -> layer code name
//   core/profile/interaction/insight <prefix><record_id> -> StoredRecord
//   meta      <prefix>c                               -> StoredChannel
//   meta      <prefix>w                               -> StoredWriterState
//   meta      <prefix>p<first_seq BE64>               -> StoredParked
//   meta      <prefix>r\x01<speaker ordinal BE32>      -> StoredRosterEntry
//   meta      <prefix>j<first_seq BE64>               -> captured Writer transition (JSON)
//   vectors   <prefix><kind m|r><id BE64>             -> u32 dim + dim floats (LE)
//   default   format_version                          -> decimal int
//   default   setting/<name>                          -> string
#ifndef SPEAKERMEM_STORAGE_KEYS_H_
#define SPEAKERMEM_STORAGE_KEYS_H_

#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"
#include "storage/types.h"

namespace speakermem::storage::keys {

inline constexpr char kFormatVersionKey[] = "format_version";

void AppendBE64(uint64_t v, std::string* out);
void AppendBE32(uint32_t v, std::string* out);
uint64_t DecodeBE64(absl::string_view s);

std::string ChannelPrefix(const ChannelRef& ch);
// Smallest key greater than every key with the channel's prefix.
std::string ChannelPrefixEnd(const ChannelRef& ch);
std::string TenantPrefix(const std::string& tenant);

std::string MessageKey(const ChannelRef& ch, uint64_t seq);
std::string MessageIdKey(const ChannelRef& ch, absl::string_view message_id);
// Marks the ordinal keys of speakers (format 2 on).
inline constexpr char kOrdinalMark = '\x01';
std::string SpeakerKey(const ChannelRef& ch, uint32_t ordinal, uint64_t seq);
std::string SpeakerPrefix(const ChannelRef& ch, uint32_t ordinal);
std::string SessionTurnKey(const ChannelRef& ch, absl::string_view session, int32_t turn,
                           uint64_t seq);
std::string ChannelInfoKey(const ChannelRef& ch);
std::string RosterKey(const ChannelRef& ch, uint32_t ordinal);
std::string RosterPrefix(const ChannelRef& ch);
std::string RecordKey(const ChannelRef& ch, absl::string_view record_id);
std::string RecordLayerKey(const ChannelRef& ch, absl::string_view record_id);
std::string WriterStateKey(const ChannelRef& ch);
std::string ParkedPrefix(const ChannelRef& ch);
std::string ParkedKey(const ChannelRef& ch, uint64_t first_seq);
std::string TransitionPrefix(const ChannelRef& ch);
std::string TransitionKey(const ChannelRef& ch, uint64_t first_seq);
std::string VectorKey(const ChannelRef& ch, char kind, uint64_t id);

// Splits a key into tenant, channel and the remainder after the channel
// prefix. Returns false when the key has no channel prefix.
bool ParseChannelKey(absl::string_view key, ChannelRef* ch, absl::string_view* rest);

}  // namespace speakermem::storage::keys

#endif  // SPEAKERMEM_STORAGE_KEYS_H_
