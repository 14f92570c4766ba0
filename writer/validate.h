// Deterministic validation of Writer actions (DESIGN 2.5) and the system's
// filling-in of record coordinates (from_ids, valid_at, session, ids, chain
// links). Invalid actions are dropped with a reason; they never fail the
// segment.
#ifndef SPEAKERMEM_WRITER_VALIDATE_H_
#define SPEAKERMEM_WRITER_VALIDATE_H_

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "recordindex/record_index.h"
#include "storage/types.h"
#include "writer/writer_model.h"

namespace speakermem::writer {

// Rejection reasons (metric label values).
inline constexpr const char* kRejectReasons[] = {
    "invalid_json",       "unknown_action",   "bad_layer",        "unknown_owner",
    "unknown_source",     "scope_mismatch",   "missing_entry",    "entry_not_active",
    "operator_locked",    "empty_content",    "content_too_long", "duplicate_in_batch",
    "duplicate_of_state", "unchanged_update", "over_budget"};

// Longest content accepted, in bytes.
inline constexpr size_t kMaxContentBytes = 2000;

struct ValidationContext {
  std::vector<WriterRosterMember> roster;
  // The channel's current heads by id (superseded records may be present
  // too; they are treated as not active).
  std::map<std::string, storage::Record> records;
  // When set, used instead of `records`: the channel's record index (its
  // heads, and their duplicate keys kept with them), read under the caller's
  // IndexView.
  const recordindex::RecordIndex* index = nullptr;
  // The record with this id in `index` or `records`, or null.
  const storage::Record* Find(const std::string& id) const;
  // Optional: finds a record missing from `records` / `index` (to tell an UPDATE of a
  // superseded record from one of an unknown id).
  std::function<std::optional<storage::Record>(const std::string&)> lookup;
  size_t max_actions = 8;
};

struct Rejection {
  size_t index;  // position in the model's action list
  std::string reason;
};

struct ValidationReport {
  std::vector<WriterAction> accepted;  // owner/source as roster ids, layer as code name
  std::vector<Rejection> rejected;
  size_t noops = 0;
};

ValidationReport ValidateActions(const std::vector<WriterAction>& actions,
                                 const ValidationContext& ctx);

// Normalised form used for duplicate detection: lower case, letters and
// digits only, single spaces.
std::string NormalizeContent(const std::string& content);

// Turns accepted actions into the records and chain links of one segment:
// ids from state.next_record, from_ids chosen among the segment's messages
// (those by or naming the owner, most similar to the content first, at most
// 3), valid_at the newest of them, session of the segment, writer_pos
// "first-last". UPDATE records inherit owner, source, layer and utype of the
// head they supersede.
storage::SegmentApply BuildApply(const ValidationReport& report, const ValidationContext& ctx,
                                 const std::vector<storage::Message>& segment,
                                 const storage::WriterState& state, int64_t now_ms);

}  // namespace speakermem::writer

#endif  // SPEAKERMEM_WRITER_VALIDATE_H_
