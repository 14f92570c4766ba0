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

  bool operator==(const ChannelRef& o) const { return tenant == o.tenant && channel == o.channel; }
  bool operator<(const ChannelRef& o) const {
    return tenant != o.tenant ? tenant < o.tenant : channel < o.channel;
  }
};

// The tenant used until authentication maps API keys to tenants.
inline constexpr char kDefaultTenant[] = "default";

// The owner of group-scope records (the GROUP row of a query), and the row
// name meaning every member. Reserved: no speaker may be named either.
inline constexpr char kGroupOwner[] = "GROUP";
inline constexpr char kAllMembers[] = "ALL";

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

// A member as the query stages and the Writer see one: the id and the
// display names it was seen with.
struct RosterMember {
  std::string speaker_id;
  std::vector<std::string> aliases;  // display names
};

// A speaker of a channel, keyed by speaker id.
struct RosterEntry {
  std::string speaker_id;
  std::vector<std::string> aliases;  // display names, first seen first
  int64_t first_seen_ms = 0;
  int64_t last_seen_ms = 0;
  uint64_t message_count = 0;
  // The speaker's number in this channel's storage keys (never the name).
  uint32_t ordinal = 0;
};

struct ChannelInfo {
  std::string channel;
  uint64_t message_count = 0;
  uint64_t last_seq = 0;
  uint32_t speaker_count = 0;
  int64_t first_message_ms = 0;
  int64_t last_message_ms = 0;
  // The ordinal the channel's next new speaker gets (storage keys).
  uint32_t next_speaker_ordinal = 1;
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

// ------------------------------------------------------------------ System 2

// A derived record (DESIGN 1). Layers by code name: core, profile,
// interaction, insight.
struct Record {
  std::string record_id;  // "r" + 12 digits, per channel, in creation order
  std::string content;
  std::string source;  // speaker id, or "operator" for corrections
  std::string owner;   // speaker id, or "GROUP" for group layers
  std::string layer;
  std::string utype;  // fact, stance, observation, decision, relation
  std::string event;
  int64_t valid_at_ms = 0;
  std::vector<std::string> from_ids;    // supporting System 1 message ids
  std::vector<std::string> supersedes;  // the record(s) this one revises
  std::string superseded_by;            // empty while it is a head
  std::string writer_pos;               // segment "first_seq-last_seq"
  std::string session;
  int64_t created_ms = 0;
  // Set on operator corrections: the Writer may not UPDATE this record.
  bool operator_locked = false;
  // Some supporting message was deleted or edited after the record was
  // written: its content may no longer be backed; Rederive refreshes it.
  bool support_changed = false;

  bool active() const { return superseded_by.empty(); }
};

// The Writer's progress on a channel, in the meta family.
struct WriterState {
  uint64_t cursor_seq = 0;   // every message up to here has been derived (or parked)
  uint64_t next_record = 1;  // next record number
  uint64_t flush_until = 0;  // messages up to here may form a short segment
  uint64_t segments = 0;     // segments applied
};

// A segment that kept failing, set aside to retry later.
struct ParkedSegment {
  uint64_t first_seq = 0;
  uint64_t last_seq = 0;
  std::string reason;
  uint32_t attempts = 0;
  int64_t parked_ms = 0;
};

// One atomic Writer step. The store checks the channel's cursor equals
// expected_cursor (so a replayed segment is applied exactly once), then in
// one write batch: adds new_records, marks each superseded pair (old id ->
// new id), sets the cursor to new_cursor and next_record, and adds or
// removes a parked segment.
struct SegmentApply {
  uint64_t expected_cursor = 0;
  // When non-zero, next_record must also still be this (guards against a
  // record written meanwhile without moving the cursor, e.g. a correction).
  uint64_t expected_next_record = 0;
  uint64_t new_cursor = 0;
  uint64_t next_record = 0;
  std::vector<Record> new_records;
  std::vector<std::pair<std::string, std::string>> superseded;
  bool park = false;
  ParkedSegment parked;           // with park
  uint64_t unpark_first_seq = 0;  // non-zero: remove this parked segment
  // Non-empty: a captured Writer transition (JSON), stored with the apply
  // under the segment's first seq.
  std::string transition;
  uint64_t transition_seq = 0;
};

// One atomic change that removes or rewrites data (deletions and edits).
struct DeletionPlan {
  // Messages removed, with their secondary keys and vectors; the roster and
  // channel counts follow.
  std::vector<uint64_t> delete_seqs;
  // Messages rewritten in place (an edit: same seq, id and speaker).
  std::vector<Message> rewrite_messages;
  // Records rewritten (support or chain links changed) and removed (with
  // their vectors).
  std::vector<Record> upsert_records;
  std::vector<std::string> delete_records;
  // Captured Writer transitions removed, by segment first seq.
  std::vector<uint64_t> delete_transitions;
  // Roster entries removed (a forgotten speaker).
  std::vector<std::string> delete_roster;
};

struct RecordQuery {
  std::string owner;  // empty: all owners
  std::string layer;  // empty: all layers
  bool include_superseded = false;
  std::string after_id;  // page cursor
  uint32_t limit = 100;
};

}  // namespace speakermem::storage

#endif  // SPEAKERMEM_STORAGE_TYPES_H_
