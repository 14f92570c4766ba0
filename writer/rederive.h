// Re-derivation of a channel's System 2 (WriterService::Rederive): System 1
// copied into a scratch store, every segment derived anew there, operator
// corrections carried over as locked records of their own, and the result
// replacing the channel's derived records and Writer state in one write.
// The live channel is untouched until that write; a failure keeps the old
// state. WriterService takes the channel from its workers around this.
// Internal to writer/.
#ifndef SPEAKERMEM_WRITER_REDERIVE_H_
#define SPEAKERMEM_WRITER_REDERIVE_H_

#include <chrono>
#include <functional>
#include <string>

#include "absl/status/statusor.h"
#include "recordindex/channel_indexes.h"
#include "storage/store.h"
#include "storage/types.h"
#include "writer/segmenter.h"

namespace speakermem::writer {

struct RederiveJob {
  storage::Store* live = nullptr;
  storage::ChannelRef channel;
  storage::ChannelInfo info;  // the live channel's, read before the run
  std::string scratch_dir;    // created and filled here; the caller removes it
  size_t window = 25;         // messages per segment
  std::chrono::steady_clock::time_point deadline;
};

// Derives and applies one segment of the scratch store with the scratch
// store's record indexes (WriterService::RunSegment); false to stop.
using SegmentRunner =
    std::function<bool(storage::Store* scratch, recordindex::ChannelIndexes* indexes,
                       const storage::WriterState& state, const Segment& seg)>;

// Runs the re-derivation; the channel's new Writer state. `stopping` is
// polled between segments (UNAVAILABLE when it says so); past the deadline,
// DEADLINE_EXCEEDED; a segment the model would not derive fails the run.
absl::StatusOr<storage::WriterState> RederiveInScratch(const RederiveJob& job,
                                                       const SegmentRunner& run_segment,
                                                       const std::function<bool()>& stopping);

}  // namespace speakermem::writer

#endif  // SPEAKERMEM_WRITER_REDERIVE_H_
