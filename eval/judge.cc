#include "eval/judge.h"

#include "absl/strings/str_cat.h"
#include "llm/json_extract.h"
#include "nlohmann/json.hpp"

namespace speakermem::eval {
namespace {

using json = nlohmann::json;

constexpr char kVerdictSystem[] =
    "You grade an answer to a question about a conversation against the reference answer. "
    "The answer is correct when it states the same facts as the reference (wording, detail "
    "and format may differ; extra correct detail is fine; a different person, date, place "
    "or a refusal when the reference has an answer is wrong). Reply with a single JSON "
    "object and no other text: {\"verdict\": \"yes\" or \"no\", \"reason\": \"...\"}";

constexpr char kPartialSystem[] =
    "You grade an open-ended answer to a question about a conversation against the "
    "reference answer. Score how much of the reference's substance the answer gets right, "
    "from 0 (nothing, or contradicts it) to 1 (all of it); penalise claims that contradict "
    "the reference. Reply with a single JSON object and no other text: "
    "{\"score\": number between 0 and 1, \"reason\": \"...\"}";

constexpr char kAttributionCap[] =
    "If the answer attributes a statement, view or trait to the wrong person, score at most "
    "0.2 however much else it gets right.";

}  // namespace

std::string RubricFor(const std::string& category) {
  if (category == "Q3" || category == "Q6") {
    return absl::StrCat(
        "This question is about several members. Score the fraction of the members named in "
        "the reference whose position (or whether they follow the norm) the answer states "
        "correctly: e.g. 3 of 5 members right is 0.6. A member given someone else's position "
        "counts as wrong. ",
        kAttributionCap);
  }
  if (category == "Q8" || category == "Q2") {
    return absl::StrCat(
        "This question is about a change or a pattern over time. Score three equal parts: the "
        "earlier state, the later state, and what triggered or marks the change (1/3 each); an "
        "answer that gives only the latest state scores at most 1/3. ",
        kAttributionCap);
  }
  if (category == "Q4" || category == "Q5" || category == "Q7" || category == "Q1") {
    return absl::StrCat("Who is who matters here: the people named must be the reference's. ",
                        kAttributionCap);
  }
  return "";
}

namespace {

class ModelJudge final : public JudgeStage {
 public:
  explicit ModelJudge(std::shared_ptr<llm::ModelClient> c) : client_(std::move(c)) {}

  absl::StatusOr<JudgeVerdict> Judge(const JudgeInput& in, llm::StageCall* call) override {
    std::string user = absl::StrCat("Question: ", in.question, "\nReference answer: ", in.gold,
                                    "\nAnswer to grade: ", in.answer);
    std::string system = in.partial_credit ? kPartialSystem : kVerdictSystem;
    if (in.partial_credit) {
      const std::string rubric = RubricFor(in.category);
      if (!rubric.empty()) absl::StrAppend(&system, "\nRubric for this question: ", rubric);
    }
    llm::ChatRequest req{"judge", system, user, true};
    absl::StatusOr<llm::ChatResponse> r = client_->Chat(req);
    if (call != nullptr) ++call->model_calls;
    if (!r.ok()) return r.status();
    if (call != nullptr) call->usage.Add(r->usage);
    if (r->truncated) {
      return absl::OutOfRangeError("stage judge: reply cut at max_tokens (finish_reason=length)");
    }
    absl::StatusOr<std::string> text = llm::ExtractJson(r->text);
    if (!text.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("stage judge: ", text.status().message()));
    }
    json j = json::parse(*text, nullptr, false);
    if (!j.is_object()) return absl::InvalidArgumentError("stage judge: reply is not an object");
    JudgeVerdict v;
    v.reason = j.value("reason", "");
    if (in.partial_credit) {
      if (!j.contains("score") || !j["score"].is_number()) {
        return absl::InvalidArgumentError("stage judge: reply has no numeric score");
      }
      v.score = std::min(1.0, std::max(0.0, j["score"].get<double>()));
      v.correct = v.score >= 0.5;
    } else {
      std::string verdict = j.value("verdict", "");
      if (verdict != "yes" && verdict != "no") {
        return absl::InvalidArgumentError("stage judge: verdict is neither yes nor no");
      }
      v.correct = verdict == "yes";
      v.score = v.correct ? 1.0 : 0.0;
    }
    return v;
  }

 private:
  const std::shared_ptr<llm::ModelClient> client_;
};

}  // namespace

std::unique_ptr<JudgeStage> NewModelJudge(std::shared_ptr<llm::ModelClient> client) {
  return std::make_unique<ModelJudge>(std::move(client));
}

absl::StatusOr<std::unique_ptr<JudgeStage>> BuildJudge(const llm::ModelsConfig& config,
                                                       llm::LlmMetrics* metrics,
                                                       const llm::EnvLookup& env) {
  absl::StatusOr<llm::EndpointConfig> c = config.Resolve("judge");
  if (!c.ok()) return c.status();
  if (c->provider != "openai") return std::unique_ptr<JudgeStage>();
  absl::StatusOr<std::unique_ptr<llm::ModelClient>> client = llm::NewOpenAiClient(*c, metrics, env);
  if (!client.ok()) return client.status();
  return NewModelJudge(std::shared_ptr<llm::ModelClient>(std::move(*client)));
}

}  // namespace speakermem::eval
