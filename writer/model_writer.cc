// The model-backed Writer and its prompt.
#include <map>
#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "common/clock.h"
#include "llm/structured.h"
#include "text/text.h"
#include "writer/writer_model.h"

namespace speakermem::writer {

using text::ContentTokens;
namespace {

constexpr char kWriterSystem[] =
    "You keep the memory of a group chat: read the new messages and the current records, "
    "decide what to write. Reply with one JSON object {\"actions\": [...]}, each action "
    "{\"action\": \"ADD\"|\"UPDATE\"|\"NOOP\", \"owner\", \"source\", \"layer\", \"utype\", "
    "\"content\", \"entry_id\"} (\"\" where unused).\n"
    "Layers: core (a person's identity, facts, stances, habits), profile (what is observed "
    "or said about a person by another), interaction (what happened between people, "
    "decisions made together), insight (the group's norms, consensus and its exceptions). "
    "utype: fact, stance, observation, decision or relation.\n"
    "Rules: owner is whom a record is about, source who said it, both names from the "
    "roster; interaction and insight have owner \"GROUP\" and the proposer as source; "
    "\"A says B did X\" is owner B, source A. One matter per record, one short third-person "
    "sentence with names, no quoting or filler. Progress on a listed record is an UPDATE of "
    "its entry_id (E1, E2, ...), never a new ADD; an unchanged one is a NOOP. Disagreeing "
    "people get an ADD each; one person's view is never the group's. Record behaviour too "
    "(reacting, deflecting, volunteering). Skip greetings and small talk; nothing worth "
    "remembering: one NOOP. At most MAX actions.";

std::string When(int64_t ms) {
  std::string iso = FormatIsoUtc(ms);
  return absl::StrCat(iso.substr(0, 10), " ", iso.substr(11, 5));
}

// The reply's JSON Schema (strict: every property present, "" when unused).
constexpr char kWriterSchema[] =
    R"({"type":"object","properties":{"actions":{"type":"array","items":{"type":"object",)"
    R"("properties":{"action":{"type":"string","enum":["ADD","UPDATE","NOOP"]},)"
    R"("owner":{"type":"string"},"source":{"type":"string"},"layer":{"type":"string"},)"
    R"("utype":{"type":"string"},"content":{"type":"string"},"entry_id":{"type":"string"}},)"
    R"("required":["action","owner","source","layer","utype","content","entry_id"],)"
    R"("additionalProperties":false}}},"required":["actions"],"additionalProperties":false})";

// The name a prompt shows for a roster member: their display name, or their
// id when another member shares it (or they have none).
std::map<std::string, std::string> PromptNames(const std::vector<WriterRosterMember>& roster) {
  std::map<std::string, int> uses;
  for (const auto& m : roster) {
    if (!m.aliases.empty()) ++uses[absl::AsciiStrToLower(m.aliases.front())];
  }
  std::map<std::string, std::string> out;
  for (const auto& m : roster) {
    const bool unique = !m.aliases.empty() && uses[absl::AsciiStrToLower(m.aliases.front())] == 1;
    out[m.speaker_id] = unique ? m.aliases.front() : m.speaker_id;
  }
  out[kGroupOwner] = kGroupOwner;
  return out;
}

std::string NameIn(const std::map<std::string, std::string>& names, const std::string& id) {
  auto it = names.find(id);
  return it == names.end() ? id : it->second;
}

}  // namespace

std::string ResolveEntryAlias(const std::string& written, const std::vector<WriterHead>& heads) {
  std::string s = absl::AsciiStrToUpper(absl::StripAsciiWhitespace(written));
  for (const auto& h : heads) {
    if (absl::AsciiStrToUpper(h.record_id) == s) return h.record_id;
  }
  // "[E3]", "entry E3", "E-3", "e3", "#3", "3".
  for (const char* noise :
       {"[", "]", "(", ")", "#", "\"", "'", "ENTRY_ID", "ENTRY", "ID", "=", ":", "-", " "}) {
    absl::StrReplaceAll({{noise, ""}}, &s);
  }
  if (absl::StartsWith(s, "E")) s.erase(0, 1);
  size_t n = 0;
  if (!s.empty() && absl::SimpleAtoi(s, &n) && n >= 1 && n <= heads.size()) {
    return heads[n - 1].record_id;
  }
  return written;
}

namespace {

// The source of an ADD the model left without one: the speaker of the
// segment when only one person spoke, else the one speaker whose messages
// share the most content words with the record (a tie: none).
std::string InferSource(const WriterAction& a, const std::vector<WriterMessage>& messages) {
  std::set<std::string> speakers;
  for (const auto& m : messages) speakers.insert(m.speaker_id);
  if (speakers.size() == 1) return *speakers.begin();
  std::vector<std::string> want = ContentTokens(a.content);
  std::set<std::string> want_set(want.begin(), want.end());
  std::map<std::string, size_t> best;  // speaker -> best overlap of one message
  for (const auto& m : messages) {
    size_t hit = 0;
    std::set<std::string> seen;
    for (const auto& t : ContentTokens(m.text)) {
      if (want_set.count(t) && seen.insert(t).second) ++hit;
    }
    best[m.speaker_id] = std::max(best[m.speaker_id], hit);
  }
  std::string who;
  size_t top = 0, second = 0;
  for (const auto& [speaker, hit] : best) {
    if (hit > top) {
      second = top;
      top = hit;
      who = speaker;
    } else if (hit > second) {
      second = hit;
    }
  }
  return top > 0 && top > second ? who : "";
}

class ModelWriter final : public WriterModel {
 public:
  explicit ModelWriter(std::shared_ptr<llm::ModelClient> c) : client_(std::move(c)) {}

  absl::StatusOr<WriterOutput> Write(const WriterInput& in, llm::StageCall* call) override {
    std::string system = kWriterSystem;
    system.replace(system.find("MAX"), 3, std::to_string(in.max_actions));
    const std::map<std::string, std::string> names = PromptNames(in.roster);
    std::string user = "Roster:";
    for (const auto& m : in.roster) absl::StrAppend(&user, " ", NameIn(names, m.speaker_id), ";");
    user += "\n\nCurrent memory records:\n";
    if (in.heads.empty()) user += "(none yet)\n";
    for (size_t i = 0; i < in.heads.size(); ++i) {
      const WriterHead& h = in.heads[i];
      absl::StrAppend(&user, "E", i + 1, " ", h.layer, " ", NameIn(names, h.owner));
      if (h.source != h.owner) absl::StrAppend(&user, " from ", NameIn(names, h.source));
      absl::StrAppend(&user, ": ", h.content, "\n");
    }
    user += "\nNew messages:\n";
    for (const auto& m : in.messages) {
      absl::StrAppend(&user, When(m.timestamp_ms), " ", NameIn(names, m.speaker_id), ": ", m.text,
                      "\n");
    }
    llm::ChatRequest req{"writer", system, user, true, kWriterSchema};
    absl::StatusOr<llm::ChatResponse> r = client_->Chat(req);
    if (call != nullptr) ++call->model_calls;
    if (!r.ok()) return r.status();
    if (call != nullptr) call->usage.Add(r->usage);
    WriterOutput out;
    out.raw_text = r->text;
    if (r->truncated) {
      out.truncated = true;
      out.actions = SalvageWriterActions(r->text);
      if (!out.actions.empty()) llm::Coerced(call, "salvaged_cut_reply");
    } else {
      absl::StatusOr<std::vector<WriterAction>> actions = ParseWriterActions(r->text);
      if (!actions.ok()) {
        out.parse_error = std::string(actions.status().message());
        return out;
      }
      out.actions = std::move(*actions);
    }
    for (WriterAction& a : out.actions) {
      if (a.type == WriterAction::Type::kUpdate) {
        std::string id = ResolveEntryAlias(a.entry_id, in.heads);
        if (id != a.entry_id && !absl::StartsWith(absl::AsciiStrToUpper(a.entry_id), "E")) {
          llm::Coerced(call, "entry_id_spelling");
        }
        a.entry_id = std::move(id);
      } else if (a.type == WriterAction::Type::kAdd &&
                 absl::StripAsciiWhitespace(a.source).empty()) {
        a.source = InferSource(a, in.messages);
        llm::Coerced(call, a.source.empty() ? "source_missing" : "source_from_message");
      }
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
                                                         const OfflineWriterParams& offline,
                                                         const llm::EnvLookup& env) {
  absl::StatusOr<llm::EndpointConfig> c = config.Resolve("writer");
  if (!c.ok()) return c.status();
  if (c->provider != "openai") return NewOfflineWriter(offline);
  absl::StatusOr<std::unique_ptr<llm::ModelClient>> client = llm::NewOpenAiClient(*c, metrics, env);
  if (!client.ok()) return client.status();
  return NewSplittingWriter(NewModelWriter(std::shared_ptr<llm::ModelClient>(std::move(*client))),
                            metrics);
}

}  // namespace speakermem::writer
