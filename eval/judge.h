// The evaluation Judge stage: decides whether a system answer matches a gold
// answer. Model-backed only: with no judge configured (provider offline, the
// default), evaluation reports accuracy as not measured instead of guessing.
#ifndef SPEAKERMEM_EVAL_JUDGE_H_
#define SPEAKERMEM_EVAL_JUDGE_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "llm/config.h"
#include "llm/model_client.h"

namespace speakermem::eval {

struct JudgeInput {
  std::string question;
  std::string gold;
  std::string answer;
  // Open-ended items get a partial-credit score in [0, 1]; others a verdict.
  bool partial_credit = false;
  // The question's category (SocialMem "Q1".."Q8"): partial credit follows
  // that category's rubric (RubricFor).
  std::string category;
};

// The partial-credit rules of a SocialMem question category: members'
// positions counted as fractions for questions about every member (Q3) or a
// norm and who departs from it (Q6); old state, new state and trigger as
// three parts for change questions (Q8) and for group patterns (Q2);
// attribution capped for who-questions (Q4, Q5) and relationships (Q7);
// person profiles (Q1) by substance with attribution capped. Empty for an
// unknown category (the generic rubric applies).
std::string RubricFor(const std::string& category);

struct JudgeVerdict {
  bool correct = false;
  double score = 0;  // 1/0 for verdicts, [0, 1] with partial credit
  std::string reason;
};

class JudgeStage {
 public:
  virtual ~JudgeStage() = default;
  virtual absl::StatusOr<JudgeVerdict> Judge(const JudgeInput& in, llm::StageCall* call) = 0;
};

std::unique_ptr<JudgeStage> NewModelJudge(std::shared_ptr<llm::ModelClient> client);

// The judge of `config` ("judge" stage), or nullptr when none is configured
// (provider offline). FAILED_PRECONDITION when its API key is missing.
absl::StatusOr<std::unique_ptr<JudgeStage>> BuildJudge(const llm::ModelsConfig& config,
                                                       llm::LlmMetrics* metrics,
                                                       const llm::EnvLookup& env = llm::GetEnv);

}  // namespace speakermem::eval

#endif  // SPEAKERMEM_EVAL_JUDGE_H_
