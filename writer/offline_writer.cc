// The rule-based Writer: turns a segment into well-formed ADD / UPDATE / NOOP
// actions without a model. Rules, in order, per message:
//   * chit-chat and questions are skipped;
//   * a decision or plan (decided, let's, we'll, agreed, ...) -> GROUP
//     interaction, utype decision, source = speaker;
//   * a norm (always, never, please remember, every time, ...) stated for
//     the group -> GROUP insight;
//   * a statement about another roster member -> that member's profile,
//     source = speaker ("A says B ..." is owner B, source A);
//   * a first-person statement -> the speaker's profile (stances,
//     preferences) or core (facts, commitments, identity);
// and a candidate that revises a current head (or an earlier action of this
// segment) of the same owner and layer on the same topic becomes an UPDATE
// of it (within a segment: the statements are joined); one restating it
// unchanged is dropped. Contents are rewritten in the
// third person ("I prefer X" -> "Bob prefers X").
#include <algorithm>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "retrieval/text.h"
#include "retrieval/tokenizer.h"
#include "writer/writer_model.h"

namespace speakermem::writer {
namespace {

using retrieval::ContentTokens;
using retrieval::FindTokenRun;
using retrieval::Tokenize;

bool HasAny(const std::vector<std::string>& toks, const absl::flat_hash_set<std::string>& set) {
  for (const auto& t : toks) {
    if (set.contains(t)) return true;
  }
  return false;
}

bool HasPhrase(const std::vector<std::string>& toks, const std::vector<std::string>& phrase) {
  return FindTokenRun(toks, phrase) >= 0;
}

const absl::flat_hash_set<std::string>& DecisionWords() {
  static const auto* s = new absl::flat_hash_set<std::string>{
      "decided", "decision", "decide", "agreed", "agree", "settled", "booked", "confirmed",
      "plan", "scheduled", "final", "deadline", "chosen", "picked", "moves", "moved"};
  return *s;
}

const absl::flat_hash_set<std::string>& NormWords() {
  static const auto* s = new absl::flat_hash_set<std::string>{
      "always", "never", "usually", "rule", "rules", "tradition", "norm", "remember",
      "policy", "whenever"};
  return *s;
}

const absl::flat_hash_set<std::string>& StanceWords() {
  static const auto* s = new absl::flat_hash_set<std::string>{
      "prefer", "prefers", "like", "likes", "love", "loves", "hate", "hates", "rather",
      "think", "thinks", "feel", "feels", "want", "wants", "enjoy", "enjoys", "believe",
      "vote", "favourite", "favorite", "wish", "worried", "excited", "happy", "against"};
  return *s;
}

const absl::flat_hash_set<std::string>& UpdateCues() {
  static const auto* s = new absl::flat_hash_set<std::string>{
      "actually", "instead", "changed", "change", "moved", "moves", "now", "anymore",
      "longer", "update", "updated", "cancelled", "canceled", "switched", "new", "revised"};
  return *s;
}

// Greetings, thanks and acknowledgements carry nothing to remember.
bool AllPhatic(const std::vector<std::string>& content) {
  static const auto* kPhatic = new absl::flat_hash_set<std::string>{
      "good", "morning", "afternoon", "evening", "night", "hi", "hello", "hey", "thanks",
      "thank", "welcome", "bye", "cheers", "everyone", "everybody", "guys", "folks", "team",
      "update", "lol", "haha", "great", "nice", "cool", "sure", "yep", "yes", "np", "sounds",
      "awesome", "congrats", "congratulations", "see", "later", "soon", "morning", "gm"};
  for (const auto& t : content) {
    if (!kPhatic->contains(t)) return false;
  }
  return true;
}

const absl::flat_hash_set<std::string>& FirstPerson() {
  static const auto* s = new absl::flat_hash_set<std::string>{"i", "my", "me", "myself", "mine"};
  return *s;
}

// Words that may sit between "I" and its verb ("I actually enjoy").
bool IsAdverb(const std::string& w) {
  static const absl::flat_hash_set<std::string> kAdverbs = {
      "actually", "still", "also", "just", "really", "never", "always", "already",
      "definitely", "usually", "often", "sometimes", "honestly", "probably", "totally",
      "mostly", "only", "even", "kinda", "finally", "secretly"};
  // Manner adverbs ("genuinely", "really") are not verbs to conjugate.
  return kAdverbs.contains(w) || (w.size() > 4 && absl::EndsWith(w, "ly"));
}

std::string ThirdPersonVerb(const std::string& verb) {
  static const absl::flat_hash_set<std::string> kModal = {
      "can", "could", "will", "would", "shall", "should", "must", "might", "may", "did",
      "was", "had", "used",
      // common irregular past forms
      "found", "went", "said", "made", "got", "saw", "took", "came", "thought", "left",
      "told", "felt", "knew", "bought", "brought", "ran", "won", "lost", "met", "sent",
      "spent", "kept", "began", "wrote", "ate", "gave", "heard", "paid", "put", "read",
      "set", "sat", "stood", "understood", "forgot", "chose", "drove", "flew", "grew"};
  if (verb == "am") return "is";
  if (verb == "have") return "has";
  if (verb == "do") return "does";
  if (verb == "go") return "goes";
  if (kModal.contains(verb) || verb.empty() || !absl::ascii_isalpha(verb[0])) return verb;
  if (verb.size() >= 2 && (verb.back() == 's' || verb.back() == 'x' || verb.back() == 'o' ||
                           absl::EndsWith(verb, "sh") || absl::EndsWith(verb, "ch"))) {
    return verb + "es";
  }
  if (verb.size() >= 2 && verb.back() == 'y' &&
      std::string("aeiou").find(verb[verb.size() - 2]) == std::string::npos) {
    return verb.substr(0, verb.size() - 1) + "ies";
  }
  if (absl::EndsWith(verb, "ed")) return verb;  // past tense
  return verb + "s";
}

// Rewrites first-person words as `who` and "we/our/us" as "the group".
std::string ThirdPerson(const std::string& text, const std::string& who) {
  std::vector<std::string> words = absl::StrSplit(text, ' ', absl::SkipEmpty());
  std::vector<std::string> out;
  for (size_t i = 0; i < words.size(); ++i) {
    std::string w = words[i];
    // Keep trailing punctuation aside.
    std::string tail;
    while (!w.empty() && std::string(".,!?;:").find(w.back()) != std::string::npos) {
      tail.insert(tail.begin(), w.back());
      w.pop_back();
    }
    std::string lw = absl::AsciiStrToLower(w);
    std::string repl;
    if (lw == "i") {
      repl = who;
      size_t v = i + 1;
      while (v < words.size() && IsAdverb(absl::AsciiStrToLower(words[v]))) ++v;
      if (v < words.size()) {
        std::string next = absl::AsciiStrToLower(words[v]);
        while (!next.empty() && !absl::ascii_isalpha(next.back())) next.pop_back();
        if (!next.empty()) {
          words[v] = ThirdPersonVerb(next) + words[v].substr(next.size());
        }
      }
    } else if (lw == "i'm" || lw == "im" || lw == "i’m") {
      repl = who + " is";
    } else if (lw == "i've" || lw == "i’ve") {
      repl = who + " has";
    } else if (lw == "i'd" || lw == "i’d") {
      repl = who + " would";
    } else if (lw == "i'll" || lw == "i’ll") {
      repl = who + " will";
    } else if (lw == "my" || lw == "mine") {
      repl = who + "'s";
    } else if (lw == "me" || lw == "myself") {
      repl = who;
    } else if (lw == "we" || lw == "us") {
      repl = "the group";
    } else if (lw == "we'll" || lw == "we’ll") {
      repl = "the group will";
    } else if (lw == "we're" || lw == "we’re") {
      repl = "the group is";
    } else if (lw == "our" || lw == "ours") {
      repl = "the group's";
    } else {
      repl = w;
    }
    out.push_back(repl + tail);
  }
  std::string s = absl::StrJoin(out, " ");
  while (!s.empty() && std::string(" .!").find(s.back()) != std::string::npos) s.pop_back();
  if (!s.empty()) s[0] = absl::ascii_toupper(s[0]);
  return s;
}

// Jaccard similarity of two token lists, ignoring words that only announce
// a record ("decision:", "update:") so a restatement compares equal.
double Jaccard(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  static const absl::flat_hash_set<std::string> kMeta = {
      "decision", "decided", "update", "updated", "final", "confirmed", "agreed", "okay"};
  absl::flat_hash_set<std::string> sa, sb;
  for (const auto& t : a) {
    if (!kMeta.contains(t)) sa.insert(t);
  }
  for (const auto& t : b) {
    if (!kMeta.contains(t)) sb.insert(t);
  }
  if (sa.empty() || sb.empty()) return 0;
  size_t inter = 0;
  for (const auto& t : sa) inter += sb.contains(t);
  return static_cast<double>(inter) / static_cast<double>(sa.size() + sb.size() - inter);
}

// A state entry the Writer can revise: a current head or an ADD of this
// segment (entry_id empty until applied; updates to those are merged).
struct Slot {
  std::string entry_id;  // head id; empty for this segment's own ADDs
  std::string owner, layer;
  std::vector<std::string> tokens;
  size_t action = SIZE_MAX;  // index into actions for this segment's ADDs
};

class OfflineWriter final : public WriterModel {
 public:
  absl::StatusOr<WriterOutput> Write(const WriterInput& in, llm::StageCall* call) override {
    std::vector<Slot> slots;
    for (const auto& h : in.heads) {
      slots.push_back(Slot{h.record_id, h.owner, h.layer, ContentTokens(h.content), SIZE_MAX});
    }
    std::vector<WriterAction> actions;
    for (const auto& m : in.messages) {
      if (actions.size() >= in.max_actions) break;
      WriterAction a;
      if (!Classify(m, in.roster, &a)) continue;
      Place(std::move(a), &slots, &actions);
    }
    if (actions.empty()) {
      WriterAction noop;
      noop.type = WriterAction::Type::kNoop;
      noop.type_name = "NOOP";
      actions.push_back(noop);
    }
    WriterOutput out;
    out.actions = std::move(actions);
    out.raw_text = SerializeWriterActions(out.actions);
    if (call != nullptr) call->note = "offline rule-based writer";
    return out;
  }

 private:
  // Fills an ADD for message `m`, or returns false when it records nothing.
  static bool Classify(const WriterMessage& m, const std::vector<WriterRosterMember>& roster,
                       WriterAction* a) {
    const std::vector<std::string> toks = Tokenize(m.text);
    const std::vector<std::string> content = ContentTokens(m.text);
    std::string trimmed(absl::StripAsciiWhitespace(m.text));
    // Chit-chat: "ok", "lol", "thanks!", "good morning everyone".
    if (content.size() < 2 || AllPhatic(content)) return false;
    const std::string who = m.speaker.empty() ? m.speaker_id : m.speaker;
    const bool question = trimmed.find('?') != std::string::npos;
    const bool first_person = HasAny(toks, FirstPerson());
    a->type = WriterAction::Type::kAdd;
    a->type_name = "ADD";
    a->source = m.speaker_id;
    a->content = question && !first_person ? absl::StrCat(who, " asks: ", trimmed)
                                           : ThirdPerson(trimmed, who);

    // About another member: their name as the subject ("Bob agreed ..."), or
    // right after a view verb ("I think Chen ..."); not an address ("Chen,
    // would ...") and not the speaker's own reaction to them.
    for (const auto& r : roster) {
      if (r.speaker_id == m.speaker_id) continue;
      std::vector<std::string> names = r.aliases;
      names.push_back(r.speaker_id);
      for (const auto& name : names) {
        int pos = FindTokenRun(toks, Tokenize(name));
        if (pos < 0) continue;
        bool address = pos == 0 && trimmed.size() > name.size() &&
                       trimmed.compare(name.size(), 1, ",") == 0;
        bool subject = pos == 0 && !first_person;
        bool reported = pos >= 2 && pos <= 3 && first_person &&
                        HasAny({toks[pos - 1]}, {"think", "believe", "heard", "feel", "guess",
                                                 "bet", "suspect", "noticed"});
        if (address || question || !(subject || reported)) continue;
        a->owner = r.speaker_id;
        a->layer = "profile";
        a->utype = HasAny(toks, StanceWords()) ? "stance" : "observation";
        return true;
      }
    }
    const bool group_subject = HasAny(toks, {"we", "us", "our", "everyone", "team", "group"}) ||
                               HasPhrase(toks, {"let", "s"});
    // A decision or plan of the group: a decision word, or the group as the
    // subject of a plan or need ("let's", "we'll", "we need"); "my team
    // needs" is the speaker's own matter.
    const bool own_group = HasPhrase(toks, {"my", "team"}) || HasPhrase(toks, {"my", "group"});
    if (!question && (HasAny(toks, DecisionWords()) || HasPhrase(toks, {"let", "s"}) ||
                      HasPhrase(toks, {"we", "ll"}) || HasPhrase(toks, {"we", "will"}) ||
                      (!own_group && HasAny(toks, {"we", "team", "group"}) &&
                       HasAny(toks, {"need", "needs", "must", "require", "requires"})))) {
      a->owner = kGroupOwner;
      a->layer = "interaction";
      a->utype = "decision";
      return true;
    }
    if (!question && HasAny(toks, NormWords()) && (group_subject || HasAny(toks, {"please"}))) {
      a->owner = kGroupOwner;
      a->layer = "insight";
      a->utype = HasAny(toks, {"please"}) ? "decision" : "observation";
      return true;
    }
    // The speaker's own facts, stances and behaviour (DESIGN: core).
    if (content.size() < 3 && !first_person) return false;
    a->owner = m.speaker_id;
    a->layer = "core";
    a->utype = question ? "observation" : HasAny(toks, StanceWords()) ? "stance" : "fact";
    return true;
  }

  // Adds `a`, or turns it into an UPDATE of the slot it revises, or drops it
  // when it restates one.
  static void Place(WriterAction a, std::vector<Slot>* slots, std::vector<WriterAction>* actions) {
    std::vector<std::string> tokens = ContentTokens(a.content);
    const bool cue = HasAny(Tokenize(a.content), UpdateCues());
    Slot* best = nullptr;
    double best_sim = 0;
    for (Slot& s : *slots) {
      if (s.owner != a.owner || s.layer != a.layer) continue;
      double sim = Jaccard(tokens, s.tokens);
      if (sim > best_sim) {
        best_sim = sim;
        best = &s;
      }
    }
    if (best != nullptr && best_sim >= 0.9) return;  // restated unchanged
    if (best != nullptr && (best_sim >= 0.4 || (cue && best_sim >= 0.12))) {
      if (best->action != SIZE_MAX) {
        // The same matter again within this segment: a revision replaces the
        // earlier statement, anything else adds to it.
        WriterAction& earlier = (*actions)[best->action];
        static const absl::flat_hash_set<std::string> kRevision = {
            "instead", "changed", "switched", "cancelled", "canceled", "anymore", "longer",
            "revised", "updated", "update", "moves", "moved"};
        bool revision = HasAny(Tokenize(a.content), kRevision);
        if (revision || earlier.content.size() + a.content.size() > 400) {
          earlier.content = a.content;
        } else {
          earlier.content = absl::StrCat(earlier.content, "; ", a.content);
        }
        std::vector<std::string> more = ContentTokens(a.content);
        best->tokens.insert(best->tokens.end(), more.begin(), more.end());
        return;
      }
      WriterAction u;
      u.type = WriterAction::Type::kUpdate;
      u.type_name = "UPDATE";
      u.entry_id = best->entry_id;
      u.content = a.content;
      u.owner = a.owner;
      u.layer = a.layer;
      u.source = a.source;
      u.utype = a.utype;
      // The chain keeps matching on everything said about its matter, and
      // later statements in this segment revise this UPDATE, not the head.
      best->tokens.insert(best->tokens.end(), tokens.begin(), tokens.end());
      best->action = actions->size();
      actions->push_back(std::move(u));
      return;
    }
    slots->push_back(Slot{"", a.owner, a.layer, tokens, actions->size()});
    actions->push_back(std::move(a));
  }
};

}  // namespace

std::unique_ptr<WriterModel> NewOfflineWriter() { return std::make_unique<OfflineWriter>(); }

}  // namespace speakermem::writer
