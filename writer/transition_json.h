// Trajectory capture (writer.capture_trajectories): what the Writer saw and
// said for one segment, and the applied transition as JSON in the layout of
// the reference trajectories (messages, pre- and post-state, actions, the
// validation report). Internal to writer/.
#ifndef SPEAKERMEM_WRITER_TRANSITION_JSON_H_
#define SPEAKERMEM_WRITER_TRANSITION_JSON_H_

#include <cstdint>
#include <string>
#include <vector>

#include "storage/store.h"
#include "writer/segmenter.h"
#include "writer/validate.h"
#include "writer/writer_model.h"

namespace speakermem::writer {

struct DeriveTrace {
  std::vector<WriterHead> heads;
  std::vector<WriterRosterMember> roster;
  std::string raw_text;  // last attempt's output
  std::vector<WriterAction> actions;
  bool json_valid = false;
};

std::string TransitionJson(const Segment& seg, const DeriveTrace& trace,
                           const ValidationReport& report, const storage::SegmentApply& apply,
                           int64_t captured_ms);

}  // namespace speakermem::writer

#endif  // SPEAKERMEM_WRITER_TRANSITION_JSON_H_
