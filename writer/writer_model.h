// The Writer stage (DESIGN 2.4): from a segment of messages and the current
// heads of the derived layers to a list of ADD / UPDATE / NOOP actions. The
// raw model text is kept beside the parsed actions so validation can report
// on it and trajectories can be captured.
#ifndef SPEAKERMEM_WRITER_WRITER_MODEL_H_
#define SPEAKERMEM_WRITER_WRITER_MODEL_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "llm/config.h"
#include "llm/model_client.h"
#include "storage/layers.h"
#include "storage/types.h"

namespace speakermem::writer {

// Layer names (storage/layers.h): "per_speaker_core" -> "core" etc.; a code
// name maps to itself; anything else to "".
std::string NormalizeLayer(const std::string& name);
// "core" -> "per_speaker_core" etc.
std::string PaperLayerName(const std::string& layer);
// True for the group layers (interaction, insight), owned by GROUP.
using storage::IsGroupLayer;

using storage::kGroupOwner;

using WriterRosterMember = storage::RosterMember;

// A current head the Writer may UPDATE.
struct WriterHead {
  std::string record_id;
  std::string layer;  // code name
  std::string owner;
  std::string source;
  std::string utype;
  std::string content;
  int64_t valid_at_ms = 0;
};

struct WriterMessage {
  std::string message_id;
  std::string speaker_id;
  std::string speaker;  // display name
  std::string text;
  int64_t timestamp_ms = 0;
  std::string session;
  // The speaker id of the message this one replies to; empty when it names
  // none or the target is unknown.
  std::string reply_to_speaker_id;
};

struct WriterInput {
  std::vector<WriterRosterMember> roster;
  std::vector<WriterHead> heads;
  std::vector<WriterMessage> messages;
  // max(8, 2 x messages) by the design.
  size_t max_actions = 8;
};

struct WriterAction {
  enum class Type { kAdd, kUpdate, kNoop, kUnknown };
  Type type = Type::kUnknown;
  std::string type_name;  // as written by the model
  std::string owner;
  std::string source;
  std::string layer;  // normalised code name, or as written when unknown
  std::string utype;
  std::string content;
  std::string entry_id;  // UPDATE: the head it revises
  // The segment's messages the record is drawn from, when the Writer says
  // (the offline Writer always does); empty: the support is inferred from
  // the content.
  std::vector<std::string> from_ids;
};

struct WriterOutput {
  std::string raw_text;               // the model's text, verbatim
  std::vector<WriterAction> actions;  // parsed, not yet validated
  // Set when raw_text held no parseable action list (actions is empty).
  std::string parse_error;
  // The reply was cut at max_tokens: `actions` holds its complete actions
  // only, and the segment's messages may not all be covered.
  bool truncated = false;
};

// Thread-safe.
class WriterModel {
 public:
  virtual ~WriterModel() = default;
  virtual absl::StatusOr<WriterOutput> Write(const WriterInput& in, llm::StageCall* call) = 0;
};

// Parses model text holding {"actions": [...]} or a bare list of actions
// (tolerant of fences, prose and trailing commas). INVALID_ARGUMENT when no
// JSON list of actions can be found; an action object with an unknown type
// is kept as kUnknown for validation to count.
absl::StatusOr<std::vector<WriterAction>> ParseWriterActions(const std::string& text);

// The complete action objects of a reply cut at max_tokens (the one cut off
// is dropped); empty when the list never opened.
std::vector<WriterAction> SalvageWriterActions(const std::string& text);

// Serialises actions as {"actions": [...]} with paper layer names.
std::string SerializeWriterActions(const std::vector<WriterAction>& actions);

// The rule-based Writer's constants, chosen leave-one-network-out on the
// development trajectories (`speakermem eval writer`, eval/results/writer_dev.md).
struct OfflineWriterParams {
  // Content words (not function words) a clause needs to be remembered; a
  // clause whose subject is "I" needs one.
  size_t min_content = 2;
  // Within a segment, a record joins an earlier one of the same owner and
  // layer when their content words overlap at least this much (Jaccard);
  // 0 joins all of a person's statements in a segment into one record.
  double merge_similarity = 0.1;
  // At most this many core records per person from one segment: beyond it,
  // the person's least informative records (fewest content words) join the
  // kept record whose content words they overlap most, unless that would
  // make it unreadably long. 0: no limit.
  size_t max_core_per_segment = 2;
  // A person's core record from one segment with fewer content words than
  // this joins their most similar kept record of the segment ("Not the
  // Thai place" joins the rest of what they said) rather than standing
  // alone; 0: no such floor. The most informative record always stands.
  size_t min_record_words = 4;
  // A clause that arranges something for the group without being the
  // speaker's own ("we" or "everyone" with a plan or a date) is a GROUP
  // interaction rather than the speaker's core (two or more members'
  // positions always are). Off by default and not in the leave-one-network-out
  // grid: on, it moves SpeakerLevenshtein on the development trajectories by
  // little and lowers the System 2 row precision (eval/results/writer_dev.md).
  bool group_arrangements = false;
};

// The rule-based Writer (offline provider): deterministic, no model.
std::unique_ptr<WriterModel> NewOfflineWriter(const OfflineWriterParams& params = {});

// The head an UPDATE's entry id names: the alias shown to the model ("E3"),
// its common spellings ("e3", "[E3]", "entry 3", "3"), or the record id
// itself (case-insensitive); `written` unchanged when none matches.
std::string ResolveEntryAlias(const std::string& written, const std::vector<WriterHead>& heads);

// The model-backed Writer: renders the Writer prompt, calls `client`, keeps
// the raw reply and parses it (an unparseable reply is returned with
// parse_error set; transport errors and truncation are errors).
std::unique_ptr<WriterModel> NewModelWriter(std::shared_ptr<llm::ModelClient> client);

// Wraps a model-backed Writer so a reply cut at max_tokens loses nothing:
// its complete actions are kept and the segment is derived again in halves
// (recursively); coercions are counted in `metrics` (may be null).
std::unique_ptr<WriterModel> NewSplittingWriter(std::unique_ptr<WriterModel> inner,
                                                llm::LlmMetrics* metrics);

// The Writer of `config` ("writer" stage); the offline one with `offline`'s
// constants. FAILED_PRECONDITION when its API key variable is unset.
absl::StatusOr<std::unique_ptr<WriterModel>> BuildWriter(const llm::ModelsConfig& config,
                                                         llm::LlmMetrics* metrics,
                                                         const OfflineWriterParams& offline = {},
                                                         const llm::EnvLookup& env = llm::GetEnv);

}  // namespace speakermem::writer

#endif  // SPEAKERMEM_WRITER_WRITER_MODEL_H_
