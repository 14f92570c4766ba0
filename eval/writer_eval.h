// Writer evaluation against reference trajectories (the layout of
// ../shared/data/socialmem/trajectories): replay the trajectory's messages
// through a Writer with the real segmenter, validation and store, and score
// the final derived state with SpeakerLevenshtein.
#ifndef SPEAKERMEM_EVAL_WRITER_EVAL_H_
#define SPEAKERMEM_EVAL_WRITER_EVAL_H_

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "eval/metrics.h"
#include "storage/types.h"
#include "writer/speaker_levenshtein.h"
#include "writer/writer_model.h"

namespace speakermem::eval {

// The Writer's scoring (writer/speaker_levenshtein.h), as evaluation uses it.
using writer::ChainEdge;
using writer::ChainScore;
using writer::MemoryReward;
using writer::SpeakerLevenshtein;
using writer::SpeakerLevenshteinResult;
using writer::StateEntry;

// One Writer transition of a reference trajectory.
struct ReferenceTransition {
  std::vector<std::string> message_ids;  // "<transition>:<msg_id>", the segment
  std::string target_text;               // the reference Writer output
  std::vector<std::string> created_ids;  // the reference's ids of the records it made
};

struct Trajectory {
  std::string network_id;
  size_t window = 25;
  std::vector<storage::Message> messages;  // in order; ids "<transition>:<msg_id>"
  // Active entries of the final post-state as recorded in the file.
  std::vector<StateEntry> reference;
  size_t reference_updates = 0;  // UPDATE actions in the trajectory
  std::vector<ReferenceTransition> transitions;
  std::map<std::string, std::string> created_content;  // reference entry id -> content
};

// A derived state: active entries and the UPDATE edges of its chains.
struct DerivedState {
  std::vector<StateEntry> entries;
  std::vector<ChainEdge> edges;
  size_t applied = 0;   // actions our validation accepted
  size_t rejected = 0;  // actions it rejected (with reasons below)
  std::map<std::string, size_t> rejections;
};

// The reference state rebuilt by applying each transition's reference
// actions to a fresh store through the same parse, validation and apply
// code as the live Writer (entry ids of UPDATEs are mapped from the
// reference's ids to ours). Uses `work_dir` (created, then removed).
absl::StatusOr<DerivedState> ReplayReference(const Trajectory& t, const std::string& work_dir);

// INVALID_ARGUMENT when the file is not a trajectory; NOT_FOUND when absent.
absl::StatusOr<Trajectory> LoadTrajectory(const std::string& path);

struct WriterEvalResult {
  SpeakerLevenshteinResult sl;  // against the replayed reference
  double chain = 0;             // chain score of the UPDATE edges
  double memory_reward = 0;     // 0.80 x SL + 0.20 x chain
  DerivedState reference;       // the replayed reference
  DerivedState predicted;       // what the Writer under test derived
  // Entries of the replayed reference that the file's recorded final state
  // does not have, and the other way round (0/0 when replay agrees).
  size_t reference_only_replayed = 0;
  size_t reference_only_recorded = 0;
  size_t records = 0;       // active records at the end
  size_t update_links = 0;  // records that supersede another
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
