// Model-backed query stages: each renders its own prompt, calls the shared
// model client, and parses the reply strictly. Plus the fallback wrappers
// and the factory that builds the configured stages.
#include <algorithm>
#include <map>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/clock.h"
#include "common/log.h"
#include "llm/metrics.h"
#include "llm/streamed_field.h"
#include "llm/structured.h"
#include "nlohmann/json.hpp"
#include "retrieval/stages.h"

namespace speakermem::retrieval {
namespace {

using json = nlohmann::json;

std::string When(int64_t ms) {
  std::string iso = FormatIsoUtc(ms);
  return absl::StrCat(iso.substr(0, 10), " ", iso.substr(11, 5));
}

// Each stage's reply: its JSON Schema (sent as a strict response_format),
// the property every reply has, and the property a bare array stands for.
// The parsers below accept exactly what the schema allows plus the lenient
// forms llm::ReadReply and the Read* helpers record as coercions.
const llm::ReplyShape& ProjectShape() {
  static const auto* s = new llm::ReplyShape{
      "project",
      R"({"type":"object","properties":{"rows":{"type":"array","items":{"type":"string"}},)"
      R"("issue":{"type":"string"},"tense":{"type":"string","enum":["head","full"]},)"
      R"("source":{"type":"string"},"owner":{"type":"string"}},)"
      R"("required":["rows","issue","tense","source","owner"],"additionalProperties":false})",
      "rows", "rows"};
  return *s;
}
const llm::ReplyShape& SelectShape() {
  static const auto* s = new llm::ReplyShape{
      "select",
      R"({"type":"object","properties":{"ranking":{"type":"array","items":{"type":"integer"}},)"
      R"("anchors":{"type":"array","items":{"type":"integer"}}},)"
      R"("required":["ranking","anchors"],"additionalProperties":false})",
      "ranking", "ranking"};
  return *s;
}
const llm::ReplyShape& SufficiencyShape() {
  static const auto* s = new llm::ReplyShape{
      "sufficiency",
      R"({"type":"object","properties":{"sufficient":{"type":"boolean"},)"
      R"("search_term":{"type":"string"}},"required":["sufficient","search_term"],)"
      R"("additionalProperties":false})",
      "", "sufficient"};
  return *s;
}
const llm::ReplyShape& AnswerShape() {
  static const auto* s = new llm::ReplyShape{
      "answer",
      R"({"type":"object","properties":{"answer":{"type":"string"},"abstain":{"type":"boolean"},)"
      R"("cited":{"type":"array","items":{"type":"string"}}},)"
      R"("required":["answer","abstain","cited"],"additionalProperties":false})",
      "", "answer"};
  return *s;
}

// Notes what a stage had to coerce, for the query trace.
void NoteCoercions(StageCall* call) {
  if (call == nullptr || call->coercions.empty()) return;
  absl::StrAppend(&call->note, call->note.empty() ? "" : "; ",
                  "coerced: ", absl::StrJoin(call->coercions, ", "));
}

// Indexes into `n` candidates from a JSON list, lenient per item; items
// that are not indexes, out of range or repeated are dropped and counted.
std::vector<size_t> ReadIndexes(const json& list, size_t n, size_t limit, StageCall* call,
                                const char* dropped_kind) {
  std::vector<size_t> out;
  std::vector<bool> seen(n, false);
  for (const auto& x : list) {
    int64_t i = 0;
    if (!llm::ReadIndex(x, &i, call) || i < 0 || static_cast<size_t>(i) >= n || seen[i] ||
        out.size() >= limit) {
      llm::Coerced(call, dropped_kind);
      continue;
    }
    seen[i] = true;
    out.push_back(static_cast<size_t>(i));
  }
  return out;
}

absl::Status Malformed(const std::string& stage, const std::string& what) {
  return absl::InvalidArgumentError(absl::StrCat("stage ", stage, ": model reply ", what));
}

// ------------------------------------------------------------------ Project

constexpr char kProjectSystem[] =
    "Turn a question about a group chat into a retrieval plan. Reply with one JSON object: "
    "{\"rows\": [...], \"issue\": \"...\", \"tense\": \"head\"|\"full\", \"source\": \"\", "
    "\"owner\": \"\"}.\n"
    "rows: whom it is about, names as in the roster; \"ALL\" for every member or 'which "
    "member(s)'; \"GROUP\" for what the group decided, planned or agreed, or its norms "
    "(may be combined with names).\n"
    "issue: the matter asked about, a short noun phrase.\n"
    "tense: \"full\" when it asks how something changed or what it was before, else "
    "\"head\".\n"
    "source, owner: only for one person's view of another (\"what does A think about B\": "
    "source A, owner B), else \"\".";

class ModelProject final : public ProjectStage {
 public:
  explicit ModelProject(std::shared_ptr<llm::ModelClient> c) : client_(std::move(c)) {}

  absl::StatusOr<Projection> Project(const ProjectInput& in, StageCall* call) override {
    // Names, not ids: an id shows only where two members share a name.
    std::map<std::string, int> uses;
    for (const auto& m : in.roster) {
      if (!m.aliases.empty()) ++uses[m.aliases.front()];
    }
    std::string user = "Roster:";
    for (const auto& m : in.roster) {
      const bool unique = !m.aliases.empty() && uses[m.aliases.front()] == 1;
      absl::StrAppend(&user, " ", unique ? m.aliases.front() : m.speaker_id, ";");
    }
    user += "\n";
    if (!in.asker.empty()) absl::StrAppend(&user, "Asked by: ", in.asker, "\n");
    absl::StrAppend(&user, "Question: ", in.question);
    absl::StatusOr<json> j =
        llm::ChatStructured(client_.get(), ProjectShape(), kProjectSystem, user, call);
    if (!j.ok()) return j.status();
    json rows = (*j)["rows"];
    if (rows.is_string()) {
      llm::Coerced(call, "string_as_list");
      rows = json::array({rows});
    }
    if (!rows.is_array()) return Malformed("project", "has no rows list");
    Projection p;
    for (const auto& r : rows) {
      std::string name;
      std::string id = llm::ReadString(r, &name, call) ? Resolve(name, in.roster) : "";
      if (id.empty()) {
        llm::Coerced(call, "dropped_row");
      } else if (std::find(p.rows.begin(), p.rows.end(), id) == p.rows.end()) {
        p.rows.push_back(id);
      }
    }
    if (p.rows.empty()) p.rows.push_back(kRowAll);
    auto text = [&](const char* key) {
      std::string v;
      if (j->contains(key)) llm::ReadString((*j)[key], &v, call);
      return v;
    };
    p.issue = text("issue");
    if (p.issue.empty()) p.issue = in.question;
    p.tense = absl::AsciiStrToLower(text("tense")) == "full" ? Tense::kFull : Tense::kHead;
    p.source = Resolve(text("source"), in.roster);
    p.owner = Resolve(text("owner"), in.roster);
    NoteCoercions(call);
    if (p.source == kRowAll || p.source == kRowGroup) p.source.clear();
    if (p.owner == kRowAll) p.owner.clear();
    return p;
  }

 private:
  // A roster id for `name` (id or alias, case-insensitive), ALL/GROUP, or
  // empty for anything else.
  static std::string Resolve(const std::string& name, const std::vector<RosterMember>& roster) {
    std::string upper = name;
    for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    if (upper == kRowAll || upper == kRowGroup) return upper;
    for (const auto& m : roster) {
      if (EqualsIgnoreCase(m.speaker_id, name)) return m.speaker_id;
      for (const auto& a : m.aliases) {
        if (EqualsIgnoreCase(a, name)) return m.speaker_id;
      }
    }
    return "";
  }
  static bool EqualsIgnoreCase(const std::string& a, const std::string& b) {
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
             return std::tolower(static_cast<unsigned char>(x)) ==
                    std::tolower(static_cast<unsigned char>(y));
           });
  }

  const std::shared_ptr<llm::ModelClient> client_;
};

// ------------------------------------------------------------------- Select

constexpr char kSelectSystem[] =
    "Rank chat messages by how necessary each is to answer the question. Reply with one JSON "
    "object only: {\"ranking\": [numbers], \"anchors\": [numbers]}.\n"
    "ranking: candidate numbers, most necessary first; omit ones that do not help. anchors: at "
    "most MAX numbers whose surrounding conversation should also be read (e.g. a message "
    "answering what was said just before it). An undated candidate is from the same day as the "
    "one above it.";
// The re-select (no anchors to choose): the same reply shape, a shorter ask.
constexpr char kReselectSystem[] =
    "Rank chat messages by how necessary each is to answer the question. Reply with one JSON "
    "object only: {\"ranking\": [numbers], \"anchors\": []}.\n"
    "ranking: candidate numbers, most necessary first; omit ones that do not help. An undated "
    "candidate is from the same day as the one above it.";

// `text` cut at a word boundary to at most `max_chars` (0: whole), "..."
// marking the cut.
std::string Clip(const std::string& text, size_t max_chars) {
  if (max_chars == 0 || text.size() <= max_chars) return text;
  size_t cut = text.rfind(' ', max_chars);
  if (cut == std::string::npos || cut < max_chars / 2) cut = max_chars;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;  // UTF-8
  return text.substr(0, cut) + "...";
}

// "[i] YYYY-MM-DD HH:MM Name: text" per candidate; a clipped preview shows
// the day only, and only when it differs from the candidate above (the
// prompt says so). `each` (when not empty) overrides max_chars per candidate.
std::string RenderCandidates(const std::vector<Candidate>& cs, size_t max_chars = 0,
                             const std::vector<size_t>& each = {}) {
  std::string out, day_above;
  for (size_t i = 0; i < cs.size(); ++i) {
    const size_t clip = i < each.size() ? each[i] : max_chars;
    std::string when = When(cs[i].timestamp_ms);
    if (clip > 0) {
      when.resize(10);
      const bool same_day = when == day_above;
      day_above = when;
      if (same_day) when.clear();
    } else {
      day_above.clear();
    }
    absl::StrAppend(&out, "[", i, "] ", when, when.empty() ? "" : " ", cs[i].speaker, ": ",
                    Clip(cs[i].text, clip), "\n");
  }
  return out;
}

class ModelSelect final : public SelectStage {
 public:
  explicit ModelSelect(std::shared_ptr<llm::ModelClient> c) : client_(std::move(c)) {}

  absl::StatusOr<SelectOutput> Select(const SelectInput& in, StageCall* call) override {
    std::string system = in.max_anchors == 0 ? kReselectSystem : kSelectSystem;
    if (in.max_anchors > 0) system.replace(system.find("MAX"), 3, std::to_string(in.max_anchors));
    std::string user =
        absl::StrCat("Question: ", in.question, "\nCandidates:\n",
                     RenderCandidates(in.candidates, in.max_chars, in.max_chars_each));
    absl::StatusOr<json> j = llm::ChatStructured(client_.get(), SelectShape(), system, user, call);
    if (!j.ok()) return j.status();
    if (!(*j)["ranking"].is_array()) return Malformed("select", "has no ranking list");
    SelectOutput out;
    out.ranking = ReadIndexes((*j)["ranking"], in.candidates.size(), in.candidates.size(), call,
                              "dropped_ranking_item");
    // Candidates the model left out keep their recall order, after the rest.
    std::vector<bool> seen(in.candidates.size(), false);
    for (size_t i : out.ranking) seen[i] = true;
    for (size_t i = 0; i < seen.size(); ++i) {
      if (!seen[i]) out.ranking.push_back(i);
    }
    if (j->contains("anchors") && (*j)["anchors"].is_array()) {
      out.anchors = ReadIndexes((*j)["anchors"], in.candidates.size(), in.max_anchors, call,
                                "dropped_anchor");
    }
    NoteCoercions(call);
    return out;
  }

 private:
  const std::shared_ptr<llm::ModelClient> client_;
};

// -------------------------------------------------------------- Sufficiency

constexpr char kSufficiencySystem[] =
    "You check whether retrieved chat messages are enough to answer a question. Answer "
    "with a single JSON object and no other text:\n"
    "{\"sufficient\": true or false, \"search_term\": \"...\"}\n"
    "When they are not enough, search_term is one short term to search the chat history "
    "for; otherwise an empty string.";

class ModelSufficiency final : public SufficiencyStage {
 public:
  explicit ModelSufficiency(std::shared_ptr<llm::ModelClient> c) : client_(std::move(c)) {}

  absl::StatusOr<SufficiencyOutput> Judge(const SufficiencyInput& in, StageCall* call) override {
    std::string user =
        absl::StrCat("Question: ", in.question, "\nMessages:\n", RenderCandidates(in.evidence));
    absl::StatusOr<json> j =
        llm::ChatStructured(client_.get(), SufficiencyShape(), kSufficiencySystem, user, call);
    if (!j.ok()) return j.status();
    SufficiencyOutput out;
    if (!llm::ReadBool((*j)["sufficient"], &out.sufficient, call)) {
      return Malformed("sufficiency", "has no boolean 'sufficient'");
    }
    if (!out.sufficient && j->contains("search_term")) {
      llm::ReadString((*j)["search_term"], &out.search_term, call);
    }
    NoteCoercions(call);
    out.coverage = out.sufficient ? 1.0 : 0.0;
    return out;
  }

 private:
  const std::shared_ptr<llm::ModelClient> client_;
};

// ------------------------------------------------------------------- Answer

constexpr char kAnswerSystem[] =
    "Answer a question about a group chat from the evidence pack only. Reply with one JSON "
    "object: {\"answer\": \"...\", \"abstain\": true|false, \"cited\": [\"ids\"]}.\n"
    "Excerpts are messages verbatim ([id] time, speaker). Memory cells, per person and for the "
    "group: [id], layer, 'from X' when X said it about someone else, time, 'current' or "
    "'history (superseded)'.\n"
    "A GROUP CONCLUSION is the group's decision or norm, not one person's stance; a person's "
    "cell is not the group's. 'said by X about Y' is X's claim, not Y's word. A row '(none)': "
    "that person did not address the matter. 'verbatim message (no record)': the person's own "
    "words. Current state: 'current' cells and the latest messages; 'history' only for what "
    "changed or was true before. A message marked NEWER THAN MEMORY outranks a cell on the "
    "same matter: answer from it and say so. One or two sentences. If the pack does not answer "
    "the question, set abstain true and answer exactly \"I don't know: the evidence does not "
    "answer that.\" cited: the ids the answer rests on.";

class ModelAnswer final : public AnswerStage {
 public:
  explicit ModelAnswer(std::shared_ptr<llm::ModelClient> c) : client_(std::move(c)) {}

  absl::StatusOr<AnswerOutput> Answer(const AnswerInput& in, StageCall* call) override {
    std::string user = absl::StrCat("Question: ", in.question, "\n");
    if (!in.members.empty())
      absl::StrAppend(&user, "Members: ", absl::StrJoin(in.members, ", "), "\n");
    if (!in.options.empty()) {
      absl::StrAppend(&user, "Options (answer with exactly one, as \"LETTER: text\"):\n");
      for (const auto& o : in.options) absl::StrAppend(&user, "  ", o, "\n");
    }
    if (!in.pack.empty()) {
      absl::StrAppend(&user, "\n", in.pack);
    } else {
      absl::StrAppend(&user, "Evidence:\n");
    }
    for (const auto& e : in.pack.empty() ? in.evidence : std::vector<EvidenceItem>{}) {
      if (e.layer.empty()) {
        absl::StrAppend(&user, "- id=", e.id, " message",
                        e.newer_than_memory ? " (NEWER THAN MEMORY)" : "", ", ",
                        When(e.timestamp_ms), ", ", e.speaker, " said: ", e.text, "\n");
      } else {
        absl::StrAppend(&user, "- id=", e.id, " record (", e.layer, "), about ", e.owner,
                        ", source ", e.speaker, ", ", When(e.timestamp_ms), ": ", e.text, "\n");
      }
    }
    // Streaming: the reply's "answer" string, decoded as it arrives.
    std::unique_ptr<llm::StreamedStringField> field;
    std::function<bool(absl::string_view)> on_text;
    if (in.on_delta) {
      field = std::make_unique<llm::StreamedStringField>("answer", in.on_delta);
      on_text = [&field](absl::string_view text) { return field->Feed(text); };
    }
    absl::StatusOr<json> j = llm::ChatStructured(client_.get(), AnswerShape(), kAnswerSystem, user,
                                                 call, std::move(on_text));
    if (!j.ok()) return j.status();
    AnswerOutput out;
    if (!llm::ReadString((*j)["answer"], &out.answer, call)) {
      return Malformed("answer", "has no string 'answer'");
    }
    if (j->contains("abstain") && !llm::ReadBool((*j)["abstain"], &out.abstained, call)) {
      llm::Coerced(call, "dropped_abstain");
    }
    if (j->contains("cited") && (*j)["cited"].is_array()) {
      for (const auto& c : (*j)["cited"]) {
        std::string id;
        if (llm::ReadString(c, &id, call)) {
          out.cited_ids.push_back(id);
        } else {
          llm::Coerced(call, "dropped_citation");
        }
      }
    }
    NoteCoercions(call);
    return out;
  }

 private:
  const std::shared_ptr<llm::ModelClient> client_;
};

// -------------------------------------------------------------------- Embed

class ModelEmbed final : public EmbedStage {
 public:
  explicit ModelEmbed(std::shared_ptr<llm::ModelClient> c) : client_(std::move(c)) {}

  size_t dimension() const override { return dim_.load(); }

  absl::StatusOr<std::vector<std::vector<float>>> Embed(const std::vector<std::string>& inputs,
                                                        StageCall* call) override {
    if (inputs.empty()) return std::vector<std::vector<float>>{};
    absl::StatusOr<llm::EmbedResponse> r = client_->Embed("embed", inputs);
    if (call != nullptr) ++call->model_calls;
    if (!r.ok()) return r.status();
    if (call != nullptr) call->usage.Add(r->usage);
    for (auto& v : r->vectors) {
      double norm = 0;
      for (float x : v) norm += static_cast<double>(x) * x;
      if (norm > 0) {
        float inv = static_cast<float>(1.0 / std::sqrt(norm));
        for (float& x : v) x *= inv;
      }
    }
    dim_.store(r->vectors.front().size());
    return std::move(r->vectors);
  }

 private:
  const std::shared_ptr<llm::ModelClient> client_;
  std::atomic<size_t> dim_{0};
};

// ---------------------------------------------------------------- Fallbacks

// Runs `primary`; when it fails, logs, counts and notes the failure and
// returns `fallback()` instead. A call the caller cancelled (a streamed
// answer nobody reads any more) is not a failure: it stays cancelled.
template <typename Out, typename Primary, typename Fallback>
absl::StatusOr<Out> WithFallback(const char* stage, llm::LlmMetrics* metrics, StageCall* call,
                                 Primary&& primary, Fallback&& fallback) {
  absl::StatusOr<Out> r = primary();
  if (metrics != nullptr && call != nullptr) {
    for (const auto& kind : call->coercions) metrics->CountCoercion(stage, kind);
  }
  if (r.ok() || absl::IsCancelled(r.status())) return r;
  LOG_WARN("stage fell back to its default").Str("stage", stage).Str("error", r.status().message());
  if (metrics != nullptr) metrics->CountFallback(stage);
  if (call != nullptr) {
    call->fell_back = true;
    call->note = absl::StrCat("fallback: ", r.status().message());
  }
  return fallback();
}

class FallbackProject final : public ProjectStage {
 public:
  FallbackProject(std::unique_ptr<ProjectStage> p, llm::LlmMetrics* m)
      : primary_(std::move(p)), metrics_(m) {}
  absl::StatusOr<Projection> Project(const ProjectInput& in, StageCall* call) override {
    // The design's safe default: every row, the question as the issue, head.
    return WithFallback<Projection>(
        "project", metrics_, call, [&] { return primary_->Project(in, call); },
        [&]() -> absl::StatusOr<Projection> {
          Projection p;
          p.rows = {kRowAll};
          p.issue = in.question;
          return p;
        });
  }

 private:
  const std::unique_ptr<ProjectStage> primary_;
  llm::LlmMetrics* const metrics_;
};

class FallbackSelect final : public SelectStage {
 public:
  FallbackSelect(std::unique_ptr<SelectStage> p, llm::LlmMetrics* m)
      : primary_(std::move(p)), offline_(NewOfflineSelect()), metrics_(m) {}
  absl::StatusOr<SelectOutput> Select(const SelectInput& in, StageCall* call) override {
    return WithFallback<SelectOutput>(
        "select", metrics_, call, [&] { return primary_->Select(in, call); },
        [&] { return offline_->Select(in, nullptr); });
  }

 private:
  const std::unique_ptr<SelectStage> primary_, offline_;
  llm::LlmMetrics* const metrics_;
};

class FallbackSufficiency final : public SufficiencyStage {
 public:
  FallbackSufficiency(std::unique_ptr<SufficiencyStage> p, llm::LlmMetrics* m)
      : primary_(std::move(p)), offline_(NewOfflineSufficiency()), metrics_(m) {}
  absl::StatusOr<SufficiencyOutput> Judge(const SufficiencyInput& in, StageCall* call) override {
    return WithFallback<SufficiencyOutput>(
        "sufficiency", metrics_, call, [&] { return primary_->Judge(in, call); },
        [&] { return offline_->Judge(in, nullptr); });
  }

 private:
  const std::unique_ptr<SufficiencyStage> primary_, offline_;
  llm::LlmMetrics* const metrics_;
};

class FallbackAnswer final : public AnswerStage {
 public:
  FallbackAnswer(std::unique_ptr<AnswerStage> p, llm::LlmMetrics* m)
      : primary_(std::move(p)), offline_(NewOfflineAnswer()), metrics_(m) {}
  // A streamed answer the model failed after part of it went out is not
  // replaced by another answer: the call ends with the model's error.
  absl::StatusOr<AnswerOutput> Answer(const AnswerInput& in, StageCall* call) override {
    bool passed_on = false;
    AnswerInput streamed = in;
    if (in.on_delta) {
      streamed.on_delta = [&in, &passed_on](absl::string_view piece) {
        passed_on = true;
        return in.on_delta(piece);
      };
    }
    absl::StatusOr<AnswerOutput> partial;
    absl::StatusOr<AnswerOutput> r = WithFallback<AnswerOutput>(
        "answer", metrics_, call,
        [&] {
          partial = primary_->Answer(streamed, call);
          return partial;
        },
        [&]() -> absl::StatusOr<AnswerOutput> {
          if (passed_on) {
            return absl::Status(
                partial.status().code(),
                absl::StrCat("the answer stream broke off: ", partial.status().message()));
          }
          return offline_->Answer(in, nullptr);
        });
    return r;
  }

 private:
  const std::unique_ptr<AnswerStage> primary_, offline_;
  llm::LlmMetrics* const metrics_;
};

// Builds one stage: model-backed (wrapped by `wrap`, when given) for provider
// "openai", else `offline()`.
template <typename Stage, typename Model, typename Wrap, typename Offline>
absl::Status BuildStage(const llm::ModelsConfig& config, const char* stage,
                        llm::LlmMetrics* metrics, const llm::EnvLookup& env, Model&& model,
                        Wrap&& wrap, Offline&& offline, std::unique_ptr<Stage>* out) {
  absl::StatusOr<llm::EndpointConfig> c = config.Resolve(stage);
  if (!c.ok()) return c.status();
  if (c->provider != "openai") {
    *out = offline(*c);
    return absl::OkStatus();
  }
  absl::StatusOr<std::unique_ptr<llm::ModelClient>> client = llm::NewOpenAiClient(*c, metrics, env);
  if (!client.ok()) return client.status();
  *out = wrap(model(std::shared_ptr<llm::ModelClient>(std::move(*client))));
  return absl::OkStatus();
}

}  // namespace

std::unique_ptr<EmbedStage> NewModelEmbed(std::shared_ptr<llm::ModelClient> c) {
  return std::make_unique<ModelEmbed>(std::move(c));
}
std::unique_ptr<ProjectStage> NewModelProject(std::shared_ptr<llm::ModelClient> c) {
  return std::make_unique<ModelProject>(std::move(c));
}
std::unique_ptr<SelectStage> NewModelSelect(std::shared_ptr<llm::ModelClient> c) {
  return std::make_unique<ModelSelect>(std::move(c));
}
std::unique_ptr<SufficiencyStage> NewModelSufficiency(std::shared_ptr<llm::ModelClient> c) {
  return std::make_unique<ModelSufficiency>(std::move(c));
}
std::unique_ptr<AnswerStage> NewModelAnswer(std::shared_ptr<llm::ModelClient> c) {
  return std::make_unique<ModelAnswer>(std::move(c));
}

absl::StatusOr<QueryStages> BuildQueryStages(const llm::ModelsConfig& config,
                                             llm::LlmMetrics* metrics, const llm::EnvLookup& env) {
  QueryStages s;
  using Endpoint = const llm::EndpointConfig&;
  absl::Status st = BuildStage(
      config, "project", metrics, env, NewModelProject,
      [&](auto p) -> std::unique_ptr<ProjectStage> {
        return std::make_unique<FallbackProject>(std::move(p), metrics);
      },
      [](Endpoint) { return NewOfflineProject(); }, &s.project);
  if (st.ok()) {
    st = BuildStage(
        config, "select", metrics, env, NewModelSelect,
        [&](auto p) -> std::unique_ptr<SelectStage> {
          return std::make_unique<FallbackSelect>(std::move(p), metrics);
        },
        [](Endpoint) { return NewOfflineSelect(); }, &s.select);
  }
  if (st.ok()) {
    st = BuildStage(
        config, "sufficiency", metrics, env, NewModelSufficiency,
        [&](auto p) -> std::unique_ptr<SufficiencyStage> {
          return std::make_unique<FallbackSufficiency>(std::move(p), metrics);
        },
        [](Endpoint) { return NewOfflineSufficiency(); }, &s.sufficiency);
  }
  if (st.ok()) {
    st = BuildStage(
        config, "answer", metrics, env, NewModelAnswer,
        [&](auto p) -> std::unique_ptr<AnswerStage> {
          return std::make_unique<FallbackAnswer>(std::move(p), metrics);
        },
        [](Endpoint) { return NewOfflineAnswer(); }, &s.answer);
  }
  // Embeddings never fall back: another model's vectors would not be
  // comparable with the index. A failed embedding is retried later.
  if (st.ok()) {
    st = BuildStage(
        config, "embed", metrics, env, NewModelEmbed, [](auto p) { return p; },
        [](Endpoint c) { return NewOfflineEmbed(static_cast<size_t>(c.dimension)); }, &s.embed);
  }
  if (!st.ok()) return st;
  return s;
}

}  // namespace speakermem::retrieval
