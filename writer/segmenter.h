// Cutting a channel's unwritten messages into Writer segments (DESIGN 2.3).
// Boundaries depend only on stored state (the messages after the Writer
// cursor and the channel's flush mark), so a replay after a crash cuts the
// same segments.
#ifndef SPEAKERMEM_WRITER_SEGMENTER_H_
#define SPEAKERMEM_WRITER_SEGMENTER_H_

#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "storage/store.h"
#include "storage/types.h"
#include "writer/writer_model.h"

namespace speakermem::writer {

struct Segment {
  std::vector<storage::Message> messages;  // seq order, non-empty
  uint64_t first_seq() const { return messages.front().seq; }
  uint64_t last_seq() const { return messages.back().seq; }
};

// The next segment after state.cursor_seq, or nullopt when none is ready:
//  * `window` messages of one session are ready;
//  * a session change closes the previous session's messages;
//  * fewer messages are ready only up to state.flush_until (set by Flush
//    and by the idle timeout).
// REQUIRES: window > 0.
absl::StatusOr<std::optional<Segment>> NextSegment(storage::Store* store,
                                                   const storage::ChannelRef& channel,
                                                   const storage::WriterState& state,
                                                   size_t window);

// The segment's messages as the Writer stage sees them, each with the
// speaker id of its reply target (empty where it replies to none, or to one
// the channel does not hold), looked up in the segment first and in the
// store otherwise.
std::vector<WriterMessage> ToWriterMessages(storage::Store* store,
                                            const storage::ChannelRef& channel,
                                            const std::vector<storage::Message>& messages);

}  // namespace speakermem::writer

#endif  // SPEAKERMEM_WRITER_SEGMENTER_H_
