// The model stages of the query path (DESIGN 3, 4): small typed interfaces,
// each with an offline implementation (deterministic, no model) and a
// model-backed one (renders a prompt, calls the shared model client).
#ifndef SPEAKERMEM_RETRIEVAL_STAGES_H_
#define SPEAKERMEM_RETRIEVAL_STAGES_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "llm/config.h"
#include "llm/model_client.h"
#include "storage/types.h"

namespace speakermem::llm {
class LlmMetrics;
}

namespace speakermem::retrieval {

enum class Tense { kHead, kFull };

// Reserved row names (storage/types.h).
inline constexpr const auto& kRowAll = storage::kAllMembers;
inline constexpr const auto& kRowGroup = storage::kGroupOwner;

using storage::RosterMember;

// The compiled question (DESIGN 3.1).
struct Projection {
  std::vector<std::string> rows;  // speaker ids, "ALL" and/or "GROUP"
  std::string issue;              // short noun phrase
  Tense tense = Tense::kHead;
  std::string source;  // set with owner for "X's view of Y"
  std::string owner;
};

using llm::StageCall;

struct ProjectInput {
  std::string question;
  std::string asker;
  std::vector<RosterMember> roster;
};

class ProjectStage {
 public:
  virtual ~ProjectStage() = default;
  // Rows only name roster speaker ids, ALL or GROUP; never empty.
  virtual absl::StatusOr<Projection> Project(const ProjectInput& in, StageCall* call) = 0;
};

// A System 1 candidate for Select and Sufficiency.
struct Candidate {
  std::string id;          // message_id
  std::string speaker;     // display name
  std::string speaker_id;  // roster id (rows name these)
  std::string text;
  int64_t timestamp_ms = 0;
  double score = 0;  // recall score
};

struct SelectInput {
  std::string question;
  Projection projection;
  std::vector<Candidate> candidates;
  size_t max_anchors = 2;
  // Characters of each candidate's text a model is shown (cut at a word,
  // marked "..."); 0: all of it. See kSelectPreviewChars for what each
  // pass shows.
  size_t max_chars = 0;
  // Per candidate, overriding max_chars where set (same length as candidates).
  std::vector<size_t> max_chars_each;
};

// Characters of each candidate's text a Select prompt shows a model, a
// token budget (not a tuned constant: bench/model_tokens_bench prints what
// each stage costs). The first pass shows the first kSelectHeadFactor x
// top-k candidates of recall about the first fifteen words (the median
// LoCoMo message has 113 characters) and the rest of the pool, which recall
// ranked lower, the first seven or so. The re-select shows the
// candidates the first pass already ranked as that short reminder and the
// new neighbours, seen for the first time, at more length.
inline constexpr size_t kSelectPreviewChars = 80;
inline constexpr size_t kSelectTailChars = 40;
inline constexpr size_t kSelectNeighbourChars = 120;
inline constexpr size_t kSelectHeadFactor = 2;

struct SelectOutput {
  // Every candidate index exactly once, most necessary first.
  std::vector<size_t> ranking;
  // At most max_anchors candidate indices whose neighbours should be added.
  std::vector<size_t> anchors;
};

class SelectStage {
 public:
  virtual ~SelectStage() = default;
  virtual absl::StatusOr<SelectOutput> Select(const SelectInput& in, StageCall* call) = 0;
};

struct SufficiencyInput {
  std::string question;
  std::vector<Candidate> evidence;
};

struct SufficiencyOutput {
  bool sufficient = true;
  std::string search_term;  // when not sufficient: one term to search for
  double coverage = 1.0;    // offline: share of the question's content words covered
};

class SufficiencyStage {
 public:
  virtual ~SufficiencyStage() = default;
  virtual absl::StatusOr<SufficiencyOutput> Judge(const SufficiencyInput& in, StageCall* call) = 0;
};

// One item of the composed evidence pack the answerer sees.
struct EvidenceItem {
  std::string id;       // message_id or record_id
  std::string row;      // "S1" for verbatim messages, else the owner row
  std::string speaker;  // who said it (System 1) or the record's source
  std::string speaker_id;
  std::string owner;  // System 2: whom it is about ("GROUP" for group layers)
  std::string layer;  // System 2 layer name; empty for System 1
  int64_t timestamp_ms = 0;
  std::string text;
  double score = 0;  // retrieval score; the offline answerer uses it to break ties
  // System 1 only: said after the Writer cursor, newer than every record.
  bool newer_than_memory = false;
};

struct AnswerInput {
  std::string question;
  Projection projection;
  // The same evidence as items (the offline answerer scores these) and as
  // the composed pack (retrieval/compose.h) the model-backed answerer reads.
  std::vector<EvidenceItem> evidence;
  std::string pack;
  // Multiple choice: "LETTER: text" each; the answer names one of them.
  std::vector<std::string> options;
  // The channel's members by display name, for questions about who.
  std::vector<std::string> members;
  // Streaming (may be empty): receives the answer text as it forms, in
  // order; returning false means the caller has gone, and the stage stops
  // (CANCELLED), abandoning its model call. A stage that cannot stream
  // sends its whole answer as one piece.
  std::function<bool(absl::string_view)> on_delta = nullptr;
};

struct AnswerOutput {
  std::string answer;
  bool abstained = false;
  std::vector<std::string> cited_ids;
};

class AnswerStage {
 public:
  virtual ~AnswerStage() = default;
  virtual absl::StatusOr<AnswerOutput> Answer(const AnswerInput& in, StageCall* call) = 0;
};

class EmbedStage {
 public:
  virtual ~EmbedStage() = default;
  // Dimension of every vector Embed returns; 0 until known (model-backed
  // stages learn it from the first reply).
  virtual size_t dimension() const = 0;
  // One L2-normalised vector per input.
  virtual absl::StatusOr<std::vector<std::vector<float>>> Embed(
      const std::vector<std::string>& inputs, StageCall* call) = 0;
  // True for the offline hashed n-gram embedder, a weaker ranker than a
  // model's: the pipeline fuses its list with a lower weight.
  virtual bool offline() const { return false; }
};

// Offline implementations (DESIGN 4). Deterministic and thread-safe.
std::unique_ptr<EmbedStage> NewOfflineEmbed(size_t dimension = 256);
std::unique_ptr<ProjectStage> NewOfflineProject();
std::unique_ptr<SelectStage> NewOfflineSelect();
std::unique_ptr<SufficiencyStage> NewOfflineSufficiency(double threshold = 0.6);
std::unique_ptr<AnswerStage> NewOfflineAnswer();

// Model-backed implementations over `client` (shared; must outlive nothing:
// the stage keeps it alive).
std::unique_ptr<EmbedStage> NewModelEmbed(std::shared_ptr<llm::ModelClient> client);
std::unique_ptr<ProjectStage> NewModelProject(std::shared_ptr<llm::ModelClient> client);
std::unique_ptr<SelectStage> NewModelSelect(std::shared_ptr<llm::ModelClient> client);
std::unique_ptr<SufficiencyStage> NewModelSufficiency(std::shared_ptr<llm::ModelClient> client);
std::unique_ptr<AnswerStage> NewModelAnswer(std::shared_ptr<llm::ModelClient> client);

// The query path's stages built from configuration: each on its provider;
// model-backed ones wrapped so a model failure falls back to the offline
// implementation (counted in `metrics`, which may be null, and noted in the
// StageCall).
struct QueryStages {
  std::unique_ptr<ProjectStage> project;
  std::unique_ptr<SelectStage> select;
  std::unique_ptr<SufficiencyStage> sufficiency;
  std::unique_ptr<AnswerStage> answer;
  std::unique_ptr<EmbedStage> embed;
};
absl::StatusOr<QueryStages> BuildQueryStages(const llm::ModelsConfig& config,
                                             llm::LlmMetrics* metrics,
                                             const llm::EnvLookup& env = llm::GetEnv);

}  // namespace speakermem::retrieval

#endif  // SPEAKERMEM_RETRIEVAL_STAGES_H_
