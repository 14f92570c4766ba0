// Offline (no model) implementations of the query stages: deterministic,
// dependency-free, good enough for demos and tests (DESIGN 4).
#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/clock.h"
#include "retrieval/stages.h"
#include "text/similarity.h"
#include "text/text.h"
#include "text/tokenizer.h"

namespace speakermem::retrieval {

using text::ContentTokens;
using text::FindTokenRun;
using text::Fnv1a64;
using text::IsStopword;
using text::Stem;
using text::StemmedTokens;
using text::Tokenize;
namespace {

// ---------------------------------------------------------------- Embed

class OfflineEmbed final : public EmbedStage {
 public:
  explicit OfflineEmbed(size_t dim) : dim_(dim) {}
  size_t dimension() const override { return dim_; }
  bool offline() const override { return true; }

  absl::StatusOr<std::vector<std::vector<float>>> Embed(const std::vector<std::string>& inputs,
                                                        StageCall* call) override {
    std::vector<std::vector<float>> out;
    out.reserve(inputs.size());
    for (const auto& text : inputs) out.push_back(EmbedOne(text));
    if (call != nullptr) call->note = "offline hashed n-grams";
    return out;
  }

 private:
  void AddFeature(absl::string_view f, uint64_t ns, float w, std::vector<float>* v) const {
    uint64_t h = Fnv1a64(f, ns);
    float sign = (h >> 63) ? -1.0f : 1.0f;
    (*v)[h % dim_] += sign * w;
  }

  // Word unigrams (1.0), word bigrams (0.5) and character trigrams of each
  // word with boundary marks (0.5 spread over the word's trigrams), hashed
  // with a sign bit into dim_ buckets, then L2-normalised.
  std::vector<float> EmbedOne(const std::string& text) const {
    std::vector<float> v(dim_, 0.0f);
    std::vector<std::string> toks = Tokenize(text);
    for (size_t i = 0; i < toks.size(); ++i) {
      const std::string& t = toks[i];
      float w = IsStopword(t) ? 0.3f : 1.0f;
      AddFeature(t, 1, w, &v);
      if (i + 1 < toks.size()) AddFeature(absl::StrCat(t, " ", toks[i + 1]), 2, 0.5f * w, &v);
      std::string padded = absl::StrCat("#", t, "#");
      if (padded.size() >= 5) {
        size_t n = padded.size() - 2;
        for (size_t j = 0; j + 3 <= padded.size(); ++j) {
          AddFeature(absl::string_view(padded).substr(j, 3), 3, 0.5f * w / n, &v);
        }
      }
    }
    double norm = 0;
    for (float x : v) norm += static_cast<double>(x) * x;
    if (norm > 0) {
      float inv = static_cast<float>(1.0 / std::sqrt(norm));
      for (float& x : v) x *= inv;
    }
    return v;
  }

  const size_t dim_;
};

// -------------------------------------------------------------- Project

const absl::flat_hash_set<std::string>& AllWords() {
  static const auto* s = new absl::flat_hash_set<std::string>{
      "everyone", "everybody", "each", "anyone", "anybody", "nobody", "members", "member"};
  return *s;
}

const absl::flat_hash_set<std::string>& GroupWords() {
  static const auto* s = new absl::flat_hash_set<std::string>{
      "decide",    "decided",  "decides",      "decision",  "decisions", "agree", "agreed",
      "agreement", "plan",     "plans",        "planned",   "planning",  "we",    "us",
      "our",       "group",    "team",         "consensus", "norm",      "norms", "rule",
      "rules",     "together", "collectively", "settle",    "settled"};
  return *s;
}

const absl::flat_hash_set<std::string>& FullWords() {
  static const auto* s = new absl::flat_hash_set<std::string>{
      "change",     "changed",   "changes",    "changing", "before",   "history",
      "originally", "initially", "previously", "earlier",  "evolve",   "evolved",
      "evolution",  "formerly",  "revised",    "revise",   "switched", "first"};
  return *s;
}

const absl::flat_hash_set<std::string>& ViewWords() {
  static const auto* s = new absl::flat_hash_set<std::string>{
      "think",    "thinks",    "thought",    "believe",   "believes", "believed", "feel",
      "feels",    "felt",      "view",       "views",     "opinion",  "opinions", "say",
      "says",     "said",      "see",        "sees",      "take",     "consider", "considers",
      "perceive", "perceives", "impression", "according", "claims",   "claimed",  "suspect",
      "suspects", "reckon",    "reckons"};
  return *s;
}

const absl::flat_hash_set<std::string>& QuestionWords() {
  static const auto* s = new absl::flat_hash_set<std::string>{
      "what",  "who",       "whom",    "whose",     "when",   "where", "why",     "how",
      "which", "does",      "did",     "do",        "is",     "are",   "was",     "were",
      "has",   "have",      "had",     "think",     "thinks", "view",  "opinion", "feel",
      "feels", "currently", "current", "now",       "latest", "final", "say",     "says",
      "said",  "according", "mention", "mentioned", "tell",   "told",  "know"};
  return *s;
}

struct Mention {
  size_t member;
  int position;
  size_t length;
};

class OfflineProject final : public ProjectStage {
 public:
  absl::StatusOr<Projection> Project(const ProjectInput& in, StageCall* call) override {
    const std::vector<std::string> toks = Tokenize(in.question);
    std::vector<Mention> mentions = FindMentions(toks, in.roster);
    Projection p;
    bool all = false, group = false, full = false;
    for (size_t i = 0; i < toks.size(); ++i) {
      all = all || AllWords().contains(toks[i]);
      group = group || GroupWords().contains(toks[i]);
      full = full || FullWords().contains(toks[i]);
      if (i + 2 < toks.size() && toks[i] == "all" && toks[i + 1] == "of" &&
          (toks[i + 2] == "them" || toks[i + 2] == "us" || toks[i + 2] == "you")) {
        all = true;
      }
      if (i + 1 < toks.size() && ((toks[i] == "used" && toks[i + 1] == "to") ||
                                  (toks[i] == "over" && toks[i + 1] == "time"))) {
        full = true;
      }
    }
    // "who ..." without names asks about every member.
    if (mentions.empty() && !toks.empty() && (toks[0] == "who" || toks[0] == "whose")) all = true;
    p.tense = full ? Tense::kFull : Tense::kHead;
    AssignSourceOwner(toks, mentions, in.roster, &p);
    for (const Mention& m : mentions) {
      const std::string& id = in.roster[m.member].speaker_id;
      if (std::find(p.rows.begin(), p.rows.end(), id) == p.rows.end()) p.rows.push_back(id);
    }
    if (all) p.rows.insert(p.rows.begin(), kRowAll);
    if (group) p.rows.push_back(kRowGroup);
    // A question naming no one is about everyone and about the group's
    // shared state ("Where is the offsite now?").
    if (p.rows.empty()) p.rows = {kRowAll, kRowGroup};
    p.issue = Issue(toks, mentions, in.question);
    if (call != nullptr) call->note = "offline roster/keyword rules";
    return p;
  }

 private:
  static std::vector<Mention> FindMentions(const std::vector<std::string>& toks,
                                           const std::vector<RosterMember>& roster) {
    std::vector<Mention> out;
    for (size_t m = 0; m < roster.size(); ++m) {
      std::vector<std::string> names = roster[m].aliases;
      names.push_back(roster[m].speaker_id);
      for (const auto& name : names) {
        std::vector<std::string> nt = Tokenize(name);
        int pos = FindTokenRun(toks, nt);
        if (pos >= 0) {
          out.push_back(Mention{m, pos, nt.size()});
          break;
        }
      }
    }
    std::sort(out.begin(), out.end(),
              [](const Mention& a, const Mention& b) { return a.position < b.position; });
    return out;
  }

  // "X's view of Y", "what does X think about Y", "X thinks Y agreed",
  // "according to X, did Y...": the first of two people is the source, the
  // second the owner, when a view word stands between them (or "according
  // to" right before the first).
  static void AssignSourceOwner(const std::vector<std::string>& toks,
                                const std::vector<Mention>& mentions,
                                const std::vector<RosterMember>& roster, Projection* p) {
    for (size_t i = 0; i + 1 < mentions.size(); ++i) {
      const Mention& a = mentions[i];
      const Mention& b = mentions[i + 1];
      bool view = a.position >= 2 && toks[a.position - 2] == "according";
      for (int k = a.position + static_cast<int>(a.length); k < b.position && !view; ++k) {
        view = ViewWords().contains(toks[k]);
      }
      if (view && a.member != b.member) {
        p->source = roster[a.member].speaker_id;
        p->owner = roster[b.member].speaker_id;
        p->rows.push_back(p->owner);
        return;
      }
    }
  }

  static std::string Issue(const std::vector<std::string>& toks,
                           const std::vector<Mention>& mentions, const std::string& question) {
    std::vector<bool> is_name(toks.size(), false);
    for (const Mention& m : mentions) {
      for (size_t k = 0; k < m.length; ++k) is_name[m.position + k] = true;
    }
    std::vector<std::string> words;
    for (size_t i = 0; i < toks.size(); ++i) {
      if (is_name[i] || IsStopword(toks[i]) || QuestionWords().contains(toks[i]) ||
          AllWords().contains(toks[i]) || ViewWords().contains(toks[i])) {
        continue;
      }
      words.push_back(toks[i]);
    }
    return words.empty() ? question : absl::StrJoin(words, " ");
  }
};

// --------------------------------------------------------------- Select

// Lexical necessity score of one text for a set of weighted query terms:
// matched weight, a proximity bonus when several terms sit close together.
double LexicalScore(const std::vector<std::string>& text_toks,
                    const absl::flat_hash_map<std::string, double>& weights) {
  double matched = 0;
  absl::flat_hash_set<std::string> seen;
  std::vector<int> positions;
  for (size_t i = 0; i < text_toks.size(); ++i) {
    auto it = weights.find(text_toks[i]);
    if (it == weights.end()) continue;
    positions.push_back(static_cast<int>(i));
    if (seen.insert(text_toks[i]).second) matched += it->second;
  }
  if (seen.size() >= 2) {
    int span = positions.back() - positions.front() + 1;
    double density = static_cast<double>(seen.size()) / std::max(span, 1);
    matched *= 1.0 + 0.5 * density;
  }
  // Mild length normalisation: long messages match more by chance.
  return matched / (1.0 + 0.02 * static_cast<double>(text_toks.size()));
}

absl::flat_hash_map<std::string, double> QueryWeights(const std::string& question,
                                                      const std::string& issue,
                                                      const std::vector<std::string>& texts) {
  std::vector<std::string> q = ContentTokens(question);
  for (auto& t : ContentTokens(issue)) q.push_back(std::move(t));
  for (auto& t : q) t = Stem(t);
  absl::flat_hash_map<std::string, double> weights;
  absl::flat_hash_map<std::string, int> df;
  for (const auto& t : q) df[t] = 0;
  for (const auto& text : texts) {
    absl::flat_hash_set<std::string> uniq;
    for (auto& t : StemmedTokens(text)) {
      if (df.contains(t)) uniq.insert(std::move(t));
    }
    for (const auto& t : uniq) ++df[t];
  }
  const double n = static_cast<double>(std::max<size_t>(texts.size(), 1));
  for (const auto& [t, d] : df) weights[t] = std::log(1.0 + n / (1.0 + d));
  return weights;
}

bool InRows(const Projection& p, const std::string& speaker) {
  return std::find(p.rows.begin(), p.rows.end(), speaker) != p.rows.end();
}

// Recall's score already holds the lexical evidence, the speaker field and
// the context of neighbouring turns, and beats any re-ranking by word
// overlap the offline stage could do (measured: `speakermem eval
// retrieval`, docs/retrieval.md). So the offline Select keeps recall's
// order and names the best candidates as anchors; their neighbours then
// compete for the top-k with their own recall scores.
class OfflineSelect final : public SelectStage {
 public:
  absl::StatusOr<SelectOutput> Select(const SelectInput& in, StageCall* call) override {
    SelectOutput out;
    out.ranking.resize(in.candidates.size());
    for (size_t i = 0; i < out.ranking.size(); ++i) out.ranking[i] = i;
    std::stable_sort(out.ranking.begin(), out.ranking.end(), [&](size_t a, size_t b) {
      return in.candidates[a].score > in.candidates[b].score;
    });
    for (size_t i = 0; i < out.ranking.size() && out.anchors.size() < in.max_anchors; ++i) {
      if (in.candidates[out.ranking[i]].score > 0) out.anchors.push_back(out.ranking[i]);
    }
    if (call != nullptr) call->note = "offline: recall order";
    return out;
  }
};

// ---------------------------------------------------------- Sufficiency

class OfflineSufficiency final : public SufficiencyStage {
 public:
  explicit OfflineSufficiency(double threshold) : threshold_(threshold) {}

  absl::StatusOr<SufficiencyOutput> Judge(const SufficiencyInput& in, StageCall* call) override {
    // (stem, word as asked) of each distinct content word of the question.
    std::vector<std::pair<std::string, std::string>> want;
    for (auto& t : ContentTokens(in.question)) {
      if (QuestionWords().contains(t)) continue;
      std::string stem = Stem(t);
      bool dup =
          std::any_of(want.begin(), want.end(), [&](const auto& w) { return w.first == stem; });
      if (!dup) want.emplace_back(stem, t);
    }
    absl::flat_hash_set<std::string> have;
    for (const auto& e : in.evidence) {
      for (auto& t : StemmedTokens(e.text)) have.insert(std::move(t));
      for (auto& t : StemmedTokens(e.speaker)) have.insert(std::move(t));
    }
    SufficiencyOutput out;
    size_t covered = 0;
    for (const auto& [stem, word] : want) {
      if (have.contains(stem)) {
        ++covered;
      } else if (out.search_term.empty()) {
        out.search_term = word;
      }
    }
    out.coverage = want.empty() ? 1.0 : static_cast<double>(covered) / want.size();
    out.sufficient = out.coverage >= threshold_;
    if (out.sufficient) out.search_term.clear();
    if (call != nullptr) {
      call->note = absl::StrCat("offline coverage ", covered, "/", want.size());
    }
    return out;
  }

 private:
  const double threshold_;
};

// --------------------------------------------------------------- Answer

std::string ShortTime(int64_t ms) {
  std::string iso = FormatIsoUtc(ms);
  return absl::StrCat(iso.substr(0, 10), " ", iso.substr(11, 5), " UTC");
}

// A newer-than-memory message overrides the best item when its lexical
// match is at least this share of the best item's and the two share at
// least this Jaccard overlap of content words.
constexpr double kNewerShare = 0.7;
constexpr double kSameMatter = 0.2;

std::set<std::string> ContentStems(const std::string& text) {
  std::set<std::string> out;
  for (const auto& t : ContentTokens(text)) out.insert(Stem(t));
  return out;
}

// Each evidence item's score as an answer, and the best.
struct AnswerScores {
  std::vector<double> scores;   // the item's weight as an answer
  std::vector<double> lexical;  // its lexical match alone
  double best = 0;
  int best_i = -1;
};

AnswerScores ScoreAnswers(const AnswerInput& in) {
  std::vector<std::string> texts;
  for (const auto& e : in.evidence) texts.push_back(e.text);
  auto weights = QueryWeights(in.question, in.projection.issue, texts);
  bool person_question = false, group_question = false;
  for (const auto& r : in.projection.rows) {
    if (r == kRowGroup) {
      group_question = true;
    } else if (r != kRowAll) {
      person_question = true;
    }
  }
  AnswerScores out;
  out.scores.assign(in.evidence.size(), 0.0);
  out.lexical.assign(in.evidence.size(), 0.0);
  double max_score = 0;
  for (const auto& e : in.evidence) max_score = std::max(max_score, e.score);
  for (size_t i = 0; i < in.evidence.size(); ++i) {
    const EvidenceItem& e = in.evidence[i];
    // Who said it counts: "What does Bob like?" is answered by Bob's words.
    double s = LexicalScore(StemmedTokens(absl::StrCat(e.speaker, " ", e.text)), weights);
    out.lexical[i] = s;
    // Never let a group conclusion stand in for a person's own stance;
    // for a question about the group's state, its records come first.
    if (person_question && !group_question && e.owner == kRowGroup) s *= 0.5;
    if (group_question && !person_question && e.owner == kRowGroup) s *= 1.3;
    // The group's state is its plans and decisions; a norm it was asked to
    // keep ("please submit receipts after the offsite") is not where it stands.
    if (group_question && e.layer == "insight" && in.projection.tense == Tense::kHead) {
      s *= 0.75;
    }
    // A question rarely answers a question.
    std::string trimmed(absl::StripAsciiWhitespace(e.text));
    if (!trimmed.empty() && trimmed.back() == '?') s *= 0.6;
    if (person_question &&
        (InRows(in.projection, e.speaker_id) || InRows(in.projection, e.owner))) {
      s *= 1.25;
    }
    // Retrieval's ranking breaks near-ties, never creates an answer alone.
    // A derived record competes as the best recalled message would; for
    // the current state (head) it is preferred, being the latest word.
    if (s > 0 && max_score > 0) {
      s += 0.5 * (e.layer.empty() ? e.score / max_score : 1.0);
      if (!e.layer.empty() && in.projection.tense == Tense::kHead) s *= 1.1;
    }
    out.scores[i] = s;
    if (s > out.best) {
      out.best = s;
      out.best_i = static_cast<int>(i);
    }
  }
  return out;
}

// Multiple choice: the option the relevant evidence supports most, an item
// counting by its relevance times the share of the option's words it
// contains (speaker included).
AnswerOutput ChooseOption(const AnswerInput& in, const AnswerScores& sc) {
  double top = 0;
  int pick = -1;
  for (size_t o = 0; o < in.options.size(); ++o) {
    const std::string& opt = in.options[o];
    const size_t colon = opt.find(':');
    std::vector<std::string> words;
    for (auto& w : StemmedTokens(colon == std::string::npos ? opt : opt.substr(colon + 1))) {
      if (!IsStopword(w)) words.push_back(std::move(w));
    }
    if (words.empty()) continue;
    double support = 0;
    for (size_t i = 0; i < in.evidence.size(); ++i) {
      std::vector<std::string> toks =
          StemmedTokens(absl::StrCat(in.evidence[i].speaker, " ", in.evidence[i].text));
      std::set<std::string> have(toks.begin(), toks.end());
      size_t hit = 0;
      for (const auto& w : words) hit += have.count(w);
      support += sc.scores[i] * static_cast<double>(hit) / static_cast<double>(words.size());
    }
    if (support > top) {
      top = support;
      pick = static_cast<int>(o);
    }
  }
  AnswerOutput out;
  if (pick >= 0) {
    out.answer = in.options[pick];
    if (sc.best_i >= 0) out.cited_ids.push_back(in.evidence[sc.best_i].id);
  } else {
    out.abstained = true;
    out.answer = "I don't know: the evidence supports none of the options.";
  }
  return out;
}

// Freshness: a message said after the Writer's cursor is newer than every
// record. When one answers the question about as well as the best item (a
// record, or an older message) and speaks to the same matter (shares enough
// of its words), it is the current word. Its index, or -1.
int NewerWord(const AnswerInput& in, const AnswerScores& sc) {
  int newer_i = -1;
  if (sc.best_i < 0 || in.evidence[sc.best_i].newer_than_memory) return newer_i;
  const std::set<std::string> old_words = ContentStems(in.evidence[sc.best_i].text);
  double best_overlap = kSameMatter;
  for (size_t i = 0; i < in.evidence.size(); ++i) {
    const EvidenceItem& e = in.evidence[i];
    if (!e.newer_than_memory || sc.lexical[i] < kNewerShare * sc.lexical[sc.best_i]) continue;
    const double jaccard = text::Jaccard(ContentStems(e.text), old_words);
    if (jaccard >= best_overlap) {
      best_overlap = jaccard;
      newer_i = static_cast<int>(i);
    }
  }
  return newer_i;
}

// Matching only a name is no answer: the best item must hold a word of the
// issue itself (Project's issue leaves names and question words out).
bool OnIssue(const AnswerInput& in, const AnswerScores& sc) {
  if (sc.best_i < 0) return true;
  const std::set<std::string> issue = ContentStems(in.projection.issue);
  if (issue.empty()) return true;
  for (const auto& w : ContentStems(in.evidence[sc.best_i].text)) {
    if (issue.count(w)) return true;
  }
  return false;
}

// The best item quoted (with the newer word over it when there is one), or
// an abstention.
AnswerOutput Extract(const AnswerInput& in, const AnswerScores& sc) {
  AnswerOutput out;
  if (sc.best_i < 0 || sc.best < 0.3 || !OnIssue(in, sc)) {
    out.abstained = true;
    out.answer = "I don't know: the evidence does not answer that.";
    return out;
  }
  const EvidenceItem& e = in.evidence[sc.best_i];
  if (const int newer_i = NewerWord(in, sc); newer_i >= 0) {
    const EvidenceItem& n = in.evidence[newer_i];
    out.answer = absl::StrCat(n.speaker, " (", ShortTime(n.timestamp_ms), "): \"", n.text,
                              "\" [newer than memory, which still says: \"", e.text, "\"]");
    out.cited_ids = {n.id, e.id};
    return out;
  }
  if (e.layer.empty()) {
    out.answer = absl::StrCat(e.speaker, " (", ShortTime(e.timestamp_ms), "): \"", e.text, "\"");
  } else {
    out.answer = absl::StrCat(e.text, " [", e.layer, " record about ", e.owner, ", from ",
                              e.speaker, ", ", ShortTime(e.timestamp_ms), "]");
  }
  out.cited_ids.push_back(e.id);
  return out;
}

class OfflineAnswer final : public AnswerStage {
 public:
  absl::StatusOr<AnswerOutput> Answer(const AnswerInput& in, StageCall* call) override {
    const AnswerScores sc = ScoreAnswers(in);
    if (!in.options.empty()) {
      if (call != nullptr) call->note = "offline multiple choice";
      return ChooseOption(in, sc);
    }
    if (call != nullptr) call->note = "offline extractive";
    return Extract(in, sc);
  }
};

}  // namespace

std::unique_ptr<EmbedStage> NewOfflineEmbed(size_t dimension) {
  return std::make_unique<OfflineEmbed>(dimension);
}
std::unique_ptr<ProjectStage> NewOfflineProject() { return std::make_unique<OfflineProject>(); }
std::unique_ptr<SelectStage> NewOfflineSelect() { return std::make_unique<OfflineSelect>(); }
std::unique_ptr<SufficiencyStage> NewOfflineSufficiency(double threshold) {
  return std::make_unique<OfflineSufficiency>(threshold);
}
std::unique_ptr<AnswerStage> NewOfflineAnswer() { return std::make_unique<OfflineAnswer>(); }

}  // namespace speakermem::retrieval
