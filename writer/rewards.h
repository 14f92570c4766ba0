// Writer rewards for training (paper, Appendix: Eqs. for R^valid, the
// structural penalty and R^mem), computed with the live Writer's own parse,
// validation and apply code so an external trainer (e.g. GRPO) scores
// rollouts exactly as the service would treat them.
#ifndef SPEAKERMEM_WRITER_REWARDS_H_
#define SPEAKERMEM_WRITER_REWARDS_H_

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "storage/types.h"
#include "writer/speaker_levenshtein.h"
#include "writer/validate.h"

namespace speakermem::writer {

struct WriterRewardInput {
  // The pre-state: the channel's records before the segment (heads, and
  // superseded ones when their chain links matter), with record ids.
  std::vector<storage::Record> pre_state;
  // The segment X_t (its speakers form the roster, with the pre-state's
  // owners and sources).
  std::vector<storage::Message> segment;
  // The candidate model output, verbatim (a JSON action list).
  std::string output;
  // The output was cut at the model's length limit.
  bool length_limit_reached = false;
  // When given: the reference post-state (records with chain links), for
  // the memory reward.
  std::optional<std::vector<storage::Record>> reference_post_state;
};

struct WriterRewardOutput {
  // Validity components (weights 0.25 / 0.35 / 0.25 / 0.15).
  bool json_valid = false;
  size_t attempted = 0;     // n
  size_t schema_valid = 0;  // actions passing the schema checks
  size_t unique_keys = 0;   // distinct action keys
  double r_json = 0, r_schema = 0, r_dup = 0, r_stop = 0;
  double validity = 0;
  // Structural penalty: 0.25 z_json + 0.15 z_act + 0.10 z_count + 0.10 z_len
  // (a positive number, to be subtracted).
  size_t action_budget = 0;  // max(8, 2 |X_t|), the live Writer's budget
  bool z_json = false, z_act = false, z_count = false, z_len = false;
  double penalty = 0;
  // What the live Writer would do with the output.
  std::vector<writer::Rejection> rejections;
  std::vector<storage::Record> post_state;  // pre-state plus the applied actions
  // Memory reward, with a reference post-state.
  bool has_memory = false;
  SpeakerLevenshteinResult sl;
  double chain = 0;
  double memory_reward = 0;  // 0.80 SL + 0.20 chain
};

// INVALID_ARGUMENT for an empty segment.
absl::StatusOr<WriterRewardOutput> ScoreWriterActions(const WriterRewardInput& in);

}  // namespace speakermem::writer

#endif  // SPEAKERMEM_WRITER_REWARDS_H_
