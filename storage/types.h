// Plain data types of System 1 (the verbatim track), shared by the store, the
// indexes and the engine. No heavy headers here.
#ifndef SPEAKERMEM_STORAGE_TYPES_H_
#define SPEAKERMEM_STORAGE_TYPES_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace speakermem::storage {

// Identifies a channel within a tenant. Every key space is prefixed by both.
struct ChannelRef {
  std::string tenant;
  std::string channel;

  bool operator==(const ChannelRef& o) const {
    return tenant == o.tenant && channel == o.channel;
  }
  bool operator<(const ChannelRef& o) const {
    return tenant != o.tenant ? tenant < o.tenant : channel < o.channel;
  }
};

// The tenant used until authentication maps API keys to tenants.
inline constexpr char kDefaultTenant[] = "default";

// One verbatim message (System 1, layer `episodic`).
struct Message {
  std::string message_id;  // client id, or "~<seq>" when the client gave none
  uint64_t seq = 0;        // per-channel, from 1, assigned by the store
  std::string speaker;     // display name
  std::string speaker_id;  // stable id; defaults to speaker
  std::string text;
  int64_t timestamp_ms = 0;
  std::string session;
  int32_t turn = 0;
  std::string reply_to;
  std::map<std::string, std::string> metadata;
};

// A speaker of a channel, keyed by speaker id.
struct RosterEntry {
  std::string speaker_id;
  std::vector<std::string> aliases;  // display names, first seen first
  int64_t first_seen_ms = 0;
  int64_t last_seen_ms = 0;
  uint64_t message_count = 0;
};

struct ChannelInfo {
  std::string channel;
  uint64_t message_count = 0;
  uint64_t last_seq = 0;
  uint32_t speaker_count = 0;
  int64_t first_message_ms = 0;
  int64_t last_message_ms = 0;
};

// Outcome of one appended message, in input order.
struct AppendedMessage {
  std::string message_id;
  uint64_t seq = 0;
  bool duplicate = false;
};

struct AppendResult {
  uint32_t stored = 0;
  uint32_t duplicates = 0;
  uint64_t first_seq = 0;  // 0 when nothing was stored
  uint64_t last_seq = 0;
  std::vector<AppendedMessage> messages;
};

// Filter and cursor for paging through a channel's messages in seq order.
struct MessageQuery {
  std::string speaker_id;  // empty: all speakers
  int64_t start_ms = 0;    // inclusive; 0 = unbounded
  int64_t end_ms = 0;      // exclusive; 0 = unbounded
  uint64_t after_seq = 0;  // resume after this seq
  uint32_t limit = 100;
  // Stop after examining this many candidates even when fewer than `limit`
  // matched, so a selective time filter cannot make one page scan a whole
  // channel; the caller gets a cursor to continue.
  uint32_t max_scan = 50000;
};

struct MessagePage {
  std::vector<Message> messages;
  uint64_t next_after_seq = 0;  // 0 when there are no more messages
};

}  // namespace speakermem::storage

#endif  // SPEAKERMEM_STORAGE_TYPES_H_
