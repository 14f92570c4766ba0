// The derivation of one segment, as a function of the store: the model's
// actions for the segment (bounded heads shown, attempts with backoff),
// validated, and the apply that records them or parks the segment. No
// queue, no threads and no metrics: WriterService (writer_service.cc)
// schedules segments, calls these and counts; tests call them directly.
// Internal to writer/.
#ifndef SPEAKERMEM_WRITER_DERIVE_H_
#define SPEAKERMEM_WRITER_DERIVE_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>

#include "absl/status/statusor.h"
#include "recordindex/channel_indexes.h"
#include "storage/store.h"
#include "storage/types.h"
#include "writer/bound_heads.h"
#include "writer/segmenter.h"
#include "writer/transition_json.h"
#include "writer/validate.h"
#include "writer/writer_model.h"
#include "writer/writer_service.h"

namespace speakermem::writer {

struct DeriveHooks {
  // Waits this long before the next attempt; returns false to give up (the
  // Writer is stopping), which ends the derivation CANCELLED. Null: no wait.
  std::function<bool(std::chrono::milliseconds)> backoff;
  // The model tokens (in + out) of each attempt. May be null.
  std::function<void(uint64_t tokens)> usage;
};

struct Derivation {
  // The validated actions; otherwise why the model kept failing (CANCELLED:
  // the backoff hook gave up).
  absl::StatusOr<ValidationReport> report = absl::UnknownError("not derived");
  // The roster and lookups the actions were validated against (without
  // the index: that was read under a view held only while validating).
  ValidationContext ctx;
  uint32_t attempts = 0;
  uint32_t invalid_json = 0;  // attempts whose output was not the actions' JSON
  DeriveTrace trace;          // the input and the last output, when asked for
};

// The model's validated actions for `seg` of `ch`: the roster read from
// `store`, the heads shown bounded from the channel's record index in
// `indexes` (over `store`), up to options.max_attempts attempts with
// options.retry_backoff_ms doubling between them. The index is held only to
// choose the heads and to validate, not during the model's calls.
Derivation DeriveSegment(storage::Store* store, recordindex::ChannelIndexes* indexes,
                         const storage::ChannelRef& ch, const Segment& seg, WriterModel* model,
                         const WriterOptions& options, const DeriveHooks& hooks, bool trace);

// What applying `d` to the channel at `state` writes: its records
// (BuildApply), or, when the model kept failing, the segment parked with the
// cursor moved past it. `outcome` (may be null) gets "applied",
// "all_rejected" (every action refused; the cursor still moves) or "parked".
storage::SegmentApply ApplyFor(const Derivation& d, const Segment& seg,
                               const storage::WriterState& state, int64_t now_ms,
                               std::string* outcome);

}  // namespace speakermem::writer

#endif  // SPEAKERMEM_WRITER_DERIVE_H_
