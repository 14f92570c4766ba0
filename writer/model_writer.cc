// The model-backed Writer and its prompt.
#include "absl/strings/str_cat.h"
#include "common/clock.h"
#include "writer/writer_model.h"

namespace speakermem::writer {
namespace {

constexpr char kWriterSystem[] =
    "You maintain the memory of a group chat. You read a segment of new messages and the "
    "current memory records, and decide what to write. Reply with one JSON object and "
    "nothing else:\n"
    "{\"actions\": [ ... ]}\n"
    "Each action is one of:\n"
    "  {\"action\": \"ADD\", \"owner\": ..., \"source\": ..., \"layer\": ..., \"utype\": ..., "
    "\"content\": ...}\n"
    "  {\"action\": \"UPDATE\", \"entry_id\": ..., \"content\": ...}\n"
    "  {\"action\": \"NOOP\"}\n"
    "Layers: per_speaker_core (a person's stable identity, facts, stances, recurring "
    "behaviour), per_speaker_profile (observations about a person, including one person's "
    "view of another), group_interaction (events and relations between people, decisions "
    "made together), group_insight (the group's norms, consensus and exceptions to them). "
    "utype: fact, stance, observation, decision or relation.\n"
    "Rules:\n"
    "- owner is whom the record is about, source is who provided the information; both are "
    "speaker ids from the roster. Group layers always have owner \"GROUP\" and the speaker who "
    "said it as source. \"A says B did X\" is owner B, source A.\n"
    "- One matter per record, written as a short third-person sentence with names, not "
    "pronouns.\n"
    "- Progress on a matter already in memory is an UPDATE of that record's entry_id, never "
    "a new ADD. An UPDATE that would not change the record is a NOOP.\n"
    "- When people disagree, write a separate ADD per person; do not merge their views, and "
    "never present one person's view as the group's.\n"
    "- Record behaviour too (how someone reacts, deflects, volunteers), not only stated "
    "facts.\n"
    "- Skip greetings and small talk. If nothing is worth remembering, reply with a single "
    "NOOP.\n"
    "- At most MAX actions.";

std::string When(int64_t ms) {
  std::string iso = FormatIsoUtc(ms);
  return absl::StrCat(iso.substr(0, 10), " ", iso.substr(11, 5));
}

class ModelWriter final : public WriterModel {
 public:
  explicit ModelWriter(std::shared_ptr<llm::ModelClient> c) : client_(std::move(c)) {}

  absl::StatusOr<WriterOutput> Write(const WriterInput& in, llm::StageCall* call) override {
    std::string system = kWriterSystem;
    system.replace(system.find("MAX"), 3, std::to_string(in.max_actions));
    std::string user = "Roster (speaker id: display names):\n";
    for (const auto& m : in.roster) {
      absl::StrAppend(&user, "- ", m.speaker_id, ":");
      for (const auto& a : m.aliases) absl::StrAppend(&user, " ", a);
      user += "\n";
    }
    user += "\nCurrent memory records:\n";
    if (in.heads.empty()) user += "(none yet)\n";
    for (const auto& h : in.heads) {
      absl::StrAppend(&user, "- entry_id=", h.record_id, " layer=", PaperLayerName(h.layer),
                      " owner=", h.owner, " source=", h.source, " utype=", h.utype, " date=",
                      When(h.valid_at_ms).substr(0, 10), ": ", h.content, "\n");
    }
    user += "\nNew messages:\n";
    for (const auto& m : in.messages) {
      absl::StrAppend(&user, "[", m.message_id, "] ", When(m.timestamp_ms), " ", m.speaker_id,
                      ": ", m.text, "\n");
    }
    absl::StatusOr<llm::ChatResponse> r = client_->Chat(llm::ChatRequest{"writer", system, user, true});
    if (call != nullptr) ++call->model_calls;
    if (!r.ok()) return r.status();
    if (call != nullptr) call->usage.Add(r->usage);
    if (r->truncated) {
      return absl::OutOfRangeError("stage writer: reply cut at max_tokens (finish_reason=length)");
    }
    WriterOutput out;
    out.raw_text = r->text;
    absl::StatusOr<std::vector<WriterAction>> actions = ParseWriterActions(r->text);
    if (actions.ok()) {
      out.actions = std::move(*actions);
    } else {
      out.parse_error = std::string(actions.status().message());
    }
    return out;
  }

 private:
  const std::shared_ptr<llm::ModelClient> client_;
};

}  // namespace

std::unique_ptr<WriterModel> NewModelWriter(std::shared_ptr<llm::ModelClient> client) {
  return std::make_unique<ModelWriter>(std::move(client));
}

absl::StatusOr<std::unique_ptr<WriterModel>> BuildWriter(const llm::ModelsConfig& config,
                                                         llm::LlmMetrics* metrics,
                                                         const llm::EnvLookup& env) {
  absl::StatusOr<llm::EndpointConfig> c = config.Resolve("writer");
  if (!c.ok()) return c.status();
  if (c->provider != "openai") return NewOfflineWriter();
  absl::StatusOr<std::unique_ptr<llm::ModelClient>> client = llm::NewOpenAiClient(*c, metrics, env);
  if (!client.ok()) return client.status();
  return NewModelWriter(std::shared_ptr<llm::ModelClient>(std::move(*client)));
}

}  // namespace speakermem::writer
