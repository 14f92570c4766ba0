// Choosing retrieval constants so that they transfer: every constant is
// picked by coordinate ascent over a small grid on some conversations and
// scored on others (leave-one-conversation-out), never on the conversation
// it is scored on.
#ifndef SPEAKERMEM_EVAL_RECALL_TUNING_H_
#define SPEAKERMEM_EVAL_RECALL_TUNING_H_

#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "datasets/datasets.h"

namespace speakermem::eval {

// Constant name -> value. What the names mean is the caller's business.
using Setting = std::map<std::string, double>;

struct TunableConstant {
  std::string name;
  // Candidate values; on a tie the earlier one wins, so list the simpler
  // (off, smaller) values first.
  std::vector<double> grid;
};

// The k's every question is scored at.
inline constexpr size_t kTuningKs[] = {5, 10, 20};

struct QuestionScore {
  size_t conversation = 0;  // index into the conversations
  std::string category;
  double recall[3] = {0, 0, 0};  // at kTuningKs
  // Other per-question figures a study defines (e.g. System 2 row counts).
  std::map<std::string, double> extra;
};

// The top-20 message ids for a question under a setting.
using RankFn = std::function<absl::StatusOr<std::vector<std::string>>(
    const datasets::Conversation& conversation, const std::string& question,
    const Setting& setting)>;

// Scores one question (its evidence ids known to be in the conversation)
// under a setting; `conversation` and `category` are filled by the caller.
using ScoreFn = std::function<absl::StatusOr<QuestionScore>(
    const datasets::Conversation& conversation, const datasets::Question& question,
    const std::set<std::string>& evidence, const Setting& setting)>;

// What a tuner maximises over the questions of the conversations with
// use[i] true.
using ObjectiveFn =
    std::function<double(const std::vector<QuestionScore>& scores, const std::vector<bool>& use)>;

// The mean over datasets of the mean recall@10 of their questions (each
// dataset counts once however many questions it has).
ObjectiveFn MeanRecallObjective(const std::vector<datasets::Conversation>* conversations);

// Recall@k of a ranking: the ScoreFn for a RankFn.
ScoreFn RecallScore(RankFn rank);

// Scores settings on a fixed set of conversations, each setting once
// (memoised). Not thread-safe.
// The question's evidence ids that the conversation holds (`ids`: its
// message ids); a question with none is not scored.
std::set<std::string> KnownEvidence(const datasets::Question& q, const std::set<std::string>& ids);

class RecallTuner {
 public:
  // `progress` (may be empty) is called with the number of settings scored.
  // Without `objective`, MeanRecallObjective.
  RecallTuner(const std::vector<datasets::Conversation>* conversations, ScoreFn score,
              std::function<void(size_t)> progress, ObjectiveFn objective = nullptr);

  // Per-question recall of every question with evidence, in conversation
  // order. Errors of the rank function are returned as they are.
  absl::StatusOr<const std::vector<QuestionScore>*> Score(const Setting& setting);

  // The objective the tuner maximises.
  double Objective(const std::vector<QuestionScore>& scores, const std::vector<bool>& use) const {
    return objective_(scores, use);
  }

  // Coordinate ascent from `start`: each constant in turn takes the grid
  // value that maximises the objective on the `train` conversations, the
  // others held; `passes` rounds.
  absl::StatusOr<Setting> Tune(const std::vector<TunableConstant>& constants, Setting start,
                               const std::vector<bool>& train, int passes = 2);

  // Every combination of the constants' grids (for constants that only
  // work together, where coordinate ascent stalls): the best on `train`,
  // ties to the earliest combination (grids in order, the last constant
  // varying fastest).
  absl::StatusOr<Setting> TuneExhaustive(const std::vector<TunableConstant>& constants,
                                         const std::vector<bool>& train);

  size_t settings_scored() const { return cache_.size(); }

 private:
  const std::vector<datasets::Conversation>* const conversations_;
  const ScoreFn score_;
  const std::function<void(size_t)> progress_;
  const ObjectiveFn objective_;
  std::map<Setting, std::unique_ptr<std::vector<QuestionScore>>> cache_;
};

struct LooResult {
  Setting in_sample;                   // tuned on every conversation
  std::vector<Setting> fold_settings;  // fold i: tuned without conversation i
  // Per conversation: the objective on it alone at the in-sample setting
  // and at its fold's (recall studies: its mean recall@10).
  std::vector<double> in_sample_recall10;
  std::vector<double> held_out_recall10;
  std::vector<size_t> questions;
  // Every question scored at its fold's setting (the honest figures).
  std::vector<QuestionScore> held_out;
};

enum class Search { kCoordinate, kExhaustive };

// Tunes on all conversations, then once per held-out conversation, with
// coordinate ascent from `start` or over every combination (`start` unused).
absl::StatusOr<LooResult> LeaveOneConversationOut(RecallTuner* tuner,
                                                  const std::vector<TunableConstant>& constants,
                                                  const Setting& start, size_t conversations,
                                                  Search search = Search::kCoordinate);

}  // namespace speakermem::eval

#endif  // SPEAKERMEM_EVAL_RECALL_TUNING_H_
