// Writer evaluation against reference trajectories (the layout of
// ../shared/data/socialmem/trajectories): replay the trajectory's messages
// through a Writer with the real segmenter, validation and store, and score
// the final derived state with SpeakerLevenshtein.
#ifndef SPEAKERMEM_EVAL_WRITER_EVAL_H_
#define SPEAKERMEM_EVAL_WRITER_EVAL_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "eval/speaker_levenshtein.h"
#include "storage/types.h"
#include "writer/writer_model.h"

namespace speakermem::eval {

struct Trajectory {
  std::string network_id;
  size_t window = 25;
  std::vector<storage::Message> messages;  // in order; ids "<transition>:<msg_id>"
  std::vector<StateEntry> reference;       // active entries of the final post-state
  size_t reference_updates = 0;            // UPDATE actions in the trajectory
};

// INVALID_ARGUMENT when the file is not a trajectory; NOT_FOUND when absent.
absl::StatusOr<Trajectory> LoadTrajectory(const std::string& path);

struct WriterEvalResult {
  SpeakerLevenshteinResult sl;
  size_t records = 0;        // active records at the end
  size_t update_links = 0;   // records that supersede another
  size_t writer_calls = 0;
};

// Replays `t` through `model` in a fresh store under `work_dir` (created,
// then removed).
absl::StatusOr<WriterEvalResult> EvaluateWriter(const Trajectory& t,
                                                std::unique_ptr<writer::WriterModel> model,
                                                const std::string& work_dir);

// The trivial baseline: one record per message, the text verbatim in the
// speaker's core.
std::vector<StateEntry> OnePerMessageBaseline(const Trajectory& t);

}  // namespace speakermem::eval

#endif  // SPEAKERMEM_EVAL_WRITER_EVAL_H_
