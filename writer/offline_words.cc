#include "writer/offline_words.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "text/text.h"
#include "text/tokenizer.h"

namespace speakermem::writer::offline {

using text::IsStopword;
using text::Tokenize;

std::vector<Word> Words(absl::string_view clause) {
  std::vector<Word> out;
  for (absl::string_view raw : absl::StrSplit(clause, ' ', absl::SkipEmpty())) {
    std::string w(raw);
    std::string tail;
    while (!w.empty() && std::string(".,!?;:\"()[]").find(w.back()) != std::string::npos) {
      tail.insert(tail.begin(), w.back());
      w.pop_back();
    }
    // Brackets and quotes lose both ends: "(12k, 600m)" reads ", 12k, 600m,", and so
    // does an image caption, "[image: a photo of a lake]".
    const bool closes = tail.find_first_of(")]") != std::string::npos;
    tail.erase(std::remove_if(tail.begin(), tail.end(),
                              [](char c) { return c == ')' || c == ']' || c == '"'; }),
               tail.end());
    if (closes && tail.empty()) tail = ",";
    if (!w.empty() && (w.front() == '(' || w.front() == '[') && !out.empty() &&
        out.back().tail.empty()) {
      out.back().tail = ",";
    }
    while (!w.empty() && std::string("\"([").find(w.front()) != std::string::npos) w.erase(0, 1);
    while (!w.empty() && w.front() == '\'') w.erase(0, 1);
    while (!w.empty() && w.back() == '\'') w.pop_back();
    if (w.empty()) {
      if (!out.empty()) out.back().tail += tail;
      continue;
    }
    static const Set kEmoticons = {":)", ":(", ":d", ";)", ":p", "xd", "<3", ":-)", ":-(", ":/"};
    if (kEmoticons.contains(absl::AsciiStrToLower(raw))) continue;
    Word word;
    word.text = w;
    word.lower = absl::AsciiStrToLower(w);
    word.tail = tail;
    out.push_back(std::move(word));
  }
  return out;
}

bool In(const std::string& w, const Set& set) { return set.contains(w); }

bool HasWord(const std::vector<Word>& ws, const Set& set) {
  for (const auto& w : ws) {
    if (set.contains(w.lower)) return true;
  }
  return false;
}

size_t ContentCount(const std::vector<Word>& ws) {
  size_t n = 0;
  for (const auto& w : ws) {
    for (const auto& t : Tokenize(w.lower)) n += !IsStopword(t);
  }
  return n;
}

namespace {

// A capitalised word that is a word of its own at the head of a sentence or
// a date ("Will", "May", "Sat"), so never a member's short name.
bool CommonCapitalised(const std::string& lower) {
  if (IsStopword(lower) || In(lower, Auxiliaries()) || IsTimeWord(lower)) return true;
  for (const char* t : {"monday", "tuesday", "wednesday", "thursday", "friday", "saturday",
                        "sunday", "january", "february", "march", "april", "june", "july", "august",
                        "september", "october", "november", "december"}) {
    if (absl::StartsWith(t, lower)) return true;  // "Sat", "Dec", "Sept"
  }
  return false;
}

}  // namespace

const WriterRosterMember* Member(const Word& w, const MessageContext& ctx) {
  if (ctx.roster == nullptr || w.text.empty()) return nullptr;
  absl::string_view bare = w.lower;  // compared without copies: a hot path
  if (absl::EndsWith(bare, "'s")) bare.remove_suffix(2);
  const bool capital = absl::ascii_isupper(w.text[0]);
  for (const auto& r : *ctx.roster) {
    if (absl::EqualsIgnoreCase(r.speaker_id, bare)) return &r;
    if (!capital) continue;
    for (const auto& a : r.aliases) {
      if (!a.empty() && absl::EqualsIgnoreCase(a, bare)) return &r;
    }
  }
  // A short name: "Mel" for Melanie, "Tobe" for Tobenna, capitalised, at
  // least three letters, the start of exactly one member's first name.
  if (bare.size() < 3 || !capital || CommonCapitalised(std::string(bare))) return nullptr;
  auto starts = [&bare](absl::string_view name) {
    const absl::string_view first = name.substr(0, name.find(' '));
    return first.size() > bare.size() && absl::EqualsIgnoreCase(first.substr(0, bare.size()), bare);
  };
  const WriterRosterMember* found = nullptr;
  for (const auto& r : *ctx.roster) {
    if (!starts(r.speaker_id) && std::none_of(r.aliases.begin(), r.aliases.end(), starts)) {
      continue;
    }
    if (found != nullptr && found != &r) return nullptr;  // "Sam" for Samir or Samantha
    found = &r;
  }
  return found;
}

bool PhaticOnly(const std::vector<Word>& ws, const MessageContext& ctx) {
  for (const auto& w : ws) {
    if (Member(w, ctx) != nullptr) continue;
    for (const auto& t : Tokenize(w.lower)) {
      if (!IsStopword(t) && !Phatic().contains(t)) return false;
    }
  }
  return true;
}

bool CheerOrThanks(const std::vector<Word>& ws) {
  const size_t n = ws.size();
  if (n >= 2 && ws[n - 2].lower == "got" && ws[n - 1].lower == "this") return true;
  bool yours = false;
  for (size_t i = 0; i < n; ++i) {
    const std::string& w = ws[i].lower;
    if (w == "hang" && i + 2 < n && ws[i + 1].lower == "in" && ws[i + 2].lower == "there") {
      return true;
    }
    // Plain comparisons, no set built per word: this reads every word of
    // every clause.
    if (w == "you" || w == "your" || w == "you're" || w == "you've") yours = true;
    if (yours && (w == "means" || w == "mean" || w == "meant") && i + 1 < n) {
      const std::string& next = ws[i + 1].lower;
      const std::string after = i + 2 < n ? ws[i + 2].lower : "";
      const bool of = i + 3 < n && ws[i + 3].lower == "of";  // "a lot of early mornings"
      if (next == "everything" || (next == "a" && (after == "lot" || after == "ton") && !of) ||
          (next == "so" && after == "much") || (next == "the" && after == "world")) {
        return true;
      }
    }
  }
  return false;
}

bool ReactionToNews(const std::vector<Word>& ws) {
  size_t i = 0;
  // "Marcus, so glad ...", "Oh, sorry to hear ...": a first word set apart.
  if (ws.size() > 2 && absl::StrContains(ws[0].tail, ",")) ++i;
  while (i < ws.size() && In(ws[i].lower, {"so", "really", "very", "soo", "sooo", "just"})) ++i;
  if (i + 1 >= ws.size()) return false;
  const std::string& feeling = ws[i].lower;
  const std::string& link = ws[i + 1].lower;
  if (In(feeling, {"glad", "happy", "sorry", "sad", "pleased", "relieved", "gutted"}) &&
      link == "to" && i + 2 < ws.size() && In(ws[i + 2].lower, {"hear", "see", "read", "know"})) {
    // "Happy to see the galleries" is a wish; "happy to see you", "sorry to
    // hear that", "glad to hear it went well" answer news.
    return ws[i + 2].lower != "see" || i + 3 >= ws.size() ||
           In(ws[i + 3].lower, {"you", "that", "this", "it", "him", "her", "them", "everyone"});
  }
  // "Glad it went well", "Glad that helped ya": short, about what happened;
  // "So glad your son is okay": relief at someone's news.
  if (In(feeling, {"glad", "happy", "pleased", "relieved"}) && ws.size() <= i + 7) {
    const bool about_it = In(link, {"it", "that", "this"}) && ws.size() <= i + 5;
    const bool someone_ok =
        In(ws.back().lower, {"okay", "ok", "fine", "safe", "alright", "better"});
    if (about_it || someone_ok) return true;
  }
  if (In(feeling, {"glad", "happy", "proud", "stoked", "thrilled", "pleased", "chuffed"}) &&
      In(link, {"for", "of"}) && i + 2 < ws.size()) {
    const Word& who = ws[i + 2];
    return In(who.lower, {"you", "him", "her", "them", "y'all", "everyone", "both", "us"}) ||
           absl::ascii_isupper(who.text[0]);
  }
  return false;
}

size_t LeadingMarker(const std::vector<Word>& ws) {
  // "You won't believe it - I got mentored ...": news announced.
  if (ws.size() > 5 && ws[0].lower == "you" && In(ws[1].lower, {"won't", "wont"}) &&
      ws[2].lower == "believe" && In(ws[3].lower, {"it", "this"})) {
    size_t n = 4;
    while (n < ws.size() && ws[n].lower.find_first_not_of("-:") == std::string::npos) ++n;
    return n;
  }
  if (ws.size() < 2 || !In(ws[0].lower, Markers())) return 0;
  const std::string& w0 = ws[0].lower;
  const std::string& w1 = ws[1].lower;
  if (w0 == "no" && !absl::StrContains(ws[0].tail, ",")) return 0;
  // "Thanks, Caroline, for letting me join": what is thanked for is not news.
  if (In(w0, {"thanks", "thank"})) {
    size_t j = 1;
    while (j < ws.size() && j < 4 &&
           (In(ws[j].lower, {"you", "all", "everyone", "guys", "so", "much"}) ||
            absl::ascii_isupper(static_cast<unsigned char>(ws[j].text[0])))) {
      ++j;
    }
    if (j < ws.size() && ws[j].lower == "for") return ws.size();
  }
  // "Fair enough, ...", "Great news, ..."
  if (ws[0].tail.empty() && (ws.size() == 2 || !ws[1].tail.empty()) &&
      ((w0 == "fair" && w1 == "enough") || (In(w0, {"great", "good"}) && w1 == "news"))) {
    return 2;
  }
  static const Set kAlsoWords = {
      "all",     "same",    "everyone",  "great",     "nice",    "cool",     "right",
      "fair",    "true",    "exactly",   "look",      "listen",  "wait",     "noted",
      "agreed",  "guys",    "folks",     "correct",   "perfect", "lovely",   "brilliant",
      "amazing", "awesome", "excellent", "wonderful", "fab",     "fantastic"};
  if (!kAlsoWords.contains(w0) || !ws[0].tail.empty()) return 1;
  const bool subject_follows = In(w1, FirstPersonSubject()) || In(w1, SecondPersonSubject()) ||
                               In(w1, {"we", "we're", "we'll", "it", "it's", "that", "that's",
                                       "this", "he", "she", "they", "there", "there's"});
  return subject_follows ? 1 : 0;
}

bool MomentaryStatus(const std::vector<Word>& ws) {
  for (size_t i = 0; i < ws.size(); ++i) {
    const std::string& w = ws[i].lower;
    const std::string next = i + 1 < ws.size() ? ws[i + 1].lower : "";
    const std::string after = i + 2 < ws.size() ? ws[i + 2].lower : "";
    if (w == "omw" || (w == "on" && next == "my" && after == "way")) {
      return true;
    }
    if (w == "running") {
      for (size_t j = i + 1; j < ws.size() && j < i + 5; ++j) {
        if (In(ws[j].lower, {"late", "behind", "early"})) return true;
      }
    }
    if (In(w, {"heading", "leaving", "setting"}) && In(next, {"out", "off", "now", "over"})) {
      return true;
    }
    if (next == "there" &&
        (In(w, {"almost", "nearly"}) || (In(w, {"be", "get"}) && after == "in"))) {
      return true;
    }
    if (w == "see" && In(next, {"you", "u", "ya", "everyone", "everybody", "y'all"})) {
      return true;
    }
    // "just getting in, it's late here": arriving home, the hour where one is.
    if ((w == "getting" || w == "got") && (next == "in" || next == "home") &&
        (i + 2 == ws.size() || absl::StrContains(ws[i + 1].tail, ",") || after == "now" ||
         after == "late")) {
      return true;
    }
    if ((w == "it's" || w == "its") && after == "here" &&
        (next == "late" || next == "early" || next == "midnight")) {
      return true;
    }
    if ((w == "here" && next == "now") ||
        (w == "arrived" && (next.empty() || In(next, {"now", "here"})))) {
      return true;
    }
    // "been here ten minutes", not "I've been here before".
    if (w == "been" && next == "here" &&
        (In(after, {"ages", "for", "since", "an", "half", "five", "ten", "twenty"}) ||
         (!after.empty() && absl::ascii_isdigit(after[0])))) {
      return true;
    }
  }
  return false;
}

bool NamesOwnCircle(const std::vector<Word>& ws) {
  static const Set kCircle = {
      "kids",     "children", "family",   "son",       "sons",        "daughter", "daughters",
      "husband",  "wife",     "partner",  "boyfriend", "girlfriend",  "parents",  "brother",
      "brothers", "sister",   "sisters",  "siblings",  "team",        "students", "crew",
      "band",     "club",     "friends",  "class",     "colleagues",  "kid",      "family's",
      "kids'",    "group",    "roommate", "roommates", "grandparents"};
  for (size_t i = 0; i + 1 < ws.size(); ++i) {
    if (!In(ws[i].lower, {"my", "our"})) continue;
    // "my kids", "our family camping trip", "my little brother"
    for (size_t j = i + 1; j < ws.size() && j <= i + 2; ++j) {
      if (!kCircle.contains(ws[j].lower)) continue;
      // "our group" in a group chat is the chat, unless a name follows ("our
      // group, Connected Activists, ..."); "my group" is the speaker's.
      if (ws[j].lower != "group" || ws[i].lower == "my") return true;
      if (j + 1 < ws.size() && ws[j].tail.find_first_of(".!?") == std::string::npos &&
          absl::ascii_isupper(static_cast<unsigned char>(ws[j + 1].text[0]))) {
        return true;
      }
    }
  }
  return false;
}

bool Encouragement(const std::vector<Word>& ws) {
  for (const auto& w : ws) {
    if (IsTimeWord(w.lower)) return false;  // "make some memories tomorrow" is a plan
  }
  static const Set kWe = {"we", "we'll", "let's", "lets", "we've", "we're"};
  static const Set kHope = {"chase", "reach", "tackle",  "spread",  "show",     "push",
                            "stay",  "got",   "achieve", "inspire", "motivate", "rock",
                            "crush", "smash", "believe", "conquer", "come"};
  size_t i = 0;
  while (i < ws.size() && !kWe.contains(ws[i].lower)) ++i;
  if (i == ws.size()) return false;
  size_t v = i + 1;
  while (v < ws.size() && (In(ws[v].lower, {"can", "will", "all", "both", "just", "gotta", "have",
                                            "still", "totally", "definitely"}) ||
                           IsAdverb(ws[v].lower))) {
    ++v;
  }
  if (v >= ws.size()) return false;
  const std::string& verb = ws[v].lower;
  const std::string next = v + 1 < ws.size() ? ws[v + 1].lower : "";
  const std::string after = v + 2 < ws.size() ? ws[v + 2].lower : "";
  // "keep going", "keep it up", "keep each other going"; "keep it on the
  // street" is a plan.
  if (verb == "keep") {
    return absl::EndsWith(next, "ing") || (next.size() > 4 && absl::EndsWith(next, "in")) ||
           (next == "it" && after == "up") || next == "each";
  }
  // "we'll make it", "make a difference", "do great things together".
  return kHope.contains(verb) || (verb == "make" && In(next, {"it", "a", "an", "this", "that"})) ||
         (verb == "do" && In(next, {"it", "this", "great", "amazing", "big"})) ||
         (verb == "get" && next == "through") || (verb == "go" && next == "for" && after == "it");
}

bool ReactionToAThing(const std::vector<Word>& ws) {
  if (ws.empty()) return false;
  if (ws.size() <= 4 && In(ws[0].lower, {"classic", "typical", "vintage"})) return true;
  if (ws.size() < 2 || !ws[0].tail.empty()) return false;
  return ws.size() <= 5 &&
         In(ws[0].lower, {"great", "nice", "cool", "lovely", "brilliant", "awesome", "amazing"});
}

size_t AgreementLength(const std::vector<Word>& ws) {
  if (ws.size() < 2) return 0;
  // "Kwame's right", "you're right": the verb is in the name.
  const bool fused = absl::EndsWith(ws[0].lower, "'s") || In(ws[0].lower, {"you're", "youre"});
  size_t at = fused ? 1 : 2;  // where "right" may stand
  if (!fused && !In(ws[1].lower, {"is", "was", "are", "were"})) at = ws.size();
  if (at < ws.size() && IsAdverb(ws[at].lower) && !In(ws[at].lower, {"only", "never"})) ++at;
  if (at < ws.size() &&
      (In(ws[at].lower, {"right", "correct"}) || (!fused && ws[at].lower == "spot"))) {
    return at + 1 + (at + 1 < ws.size() && ws[at + 1].lower == "on");
  }
  for (size_t i = 2; i < ws.size() && i < 5; ++i) {
    if (In(ws[1].lower, {"makes", "made", "has", "had", "raises", "raised", "make"}) &&
        In(ws[i].lower, {"point", "points"})) {
      return i + 1;
    }
  }
  return 0;
}

bool Endorsed(const std::vector<Word>& ws) {
  return ws.size() >= 5 && absl::EndsWith(ws[0].lower, "'s") && In(ws[2].lower, {"is", "was"}) &&
         ws[3].lower == "the" && In(ws[4].lower, {"right", "best", "better"});
}

bool NounBeforeVerb(const std::vector<Word>& ws) {
  if (ws.size() < 3) return false;
  const std::string& w0 = ws[0].lower;
  const std::string& w1 = ws[1].lower;
  if (w0 == "be" || w0 == "don't" || w0 == "dont" || w0 == "let") return false;
  return !absl::StrContains(ws[0].tail, ",") && (In(w1, Auxiliaries()) || w1 == "went") &&
         w1 != "don't";
}

size_t OwnClauseAfterBut(const std::vector<Word>& ws) {
  for (size_t i = 1; i + 2 < ws.size(); ++i) {
    const std::string& next = ws[i + 1].lower;
    if (ws[i].lower == "but" && In(next, FirstPersonSubject()) && next != "my" && next != "me") {
      return i + 1;
    }
  }
  return 0;
}

bool GroupArranges(const std::vector<Word>& ws) {
  if (ws.empty()) return false;
  const std::string& w0 = ws[0].lower;
  if (w0 == "we'll" || w0 == "let's" || w0 == "lets") return true;
  if (HasWord(ws, DecisionWords()) || HasTime(ws)) return true;
  if (HasWord(ws, {"plan", "plans", "planning", "book", "booked", "booking", "meet", "meeting",
                   "decided", "decide", "agreed", "agree", "vote", "schedule", "scheduled", "move",
                   "moves", "moved", "moving"})) {
    return true;
  }
  const bool the_group = w0 == "the";  // "the group", "the team"
  size_t v = the_group ? 2 : 1;
  while (v < ws.size() && IsAdverb(ws[v].lower)) ++v;
  if (v >= ws.size()) return false;
  const std::string& verb = ws[v].lower;
  if (w0 == "we" || the_group) {
    // "we have to", not "we have a garden".
    if (verb == "have" || verb == "has") return v + 1 < ws.size() && ws[v + 1].lower == "to";
    return In(verb, {"will", "shall", "should", "must", "need", "needs", "can", "could", "gotta",
                     "gonna", "might", "may", "would", "requires", "require"});
  }
  return w0 == "we're" && (verb == "going" || verb == "gonna");
}

bool FromNowOn(const std::vector<Word>& ws) {
  for (size_t i = 0; i + 2 < ws.size(); ++i) {
    if (ws[i].lower == "from" && ws[i + 1].lower == "now" && ws[i + 2].lower == "on") return true;
  }
  return false;
}

bool HasTime(const std::vector<Word>& ws) {
  for (size_t i = 0; i < ws.size(); ++i) {
    if (IsTimeWord(ws[i].lower)) return true;
    if (i + 1 < ws.size() && In(ws[i].lower, {"next", "this"}) &&
        In(ws[i + 1].lower, {"week", "month", "year", "weekend", "time", "one"})) {
      return true;
    }
    // "in six weeks", "in 3 days": a moment that far from now ("within two
    // weeks" is a limit a rule sets, not a moment).
    if (i + 2 < ws.size() && ws[i].lower == "in" &&
        In(ws[i + 2].lower, {"days", "weeks", "months", "hours"})) {
      return true;
    }
  }
  return false;
}

bool StatementNotReaction(const std::vector<Word>& ws) {
  if (ws.size() < 3) return false;
  const std::string& w0 = ws[0].lower;
  const std::string& w1 = ws[1].lower;
  if ((w0 == "that" || w0 == "it") && w1 == "depends" && ws[2].lower == "on") return true;
  // An article or a number after "there's": something named is there.
  if (w0 != "there's" && w0 != "theres") return false;
  return w1 == "a" || w1 == "an" || w1 == "the" || w1 == "no" ||
         std::all_of(w1.begin(), w1.end(), [](char c) { return c >= '0' && c <= '9'; });
}

bool Appraisal(const std::vector<Word>& ws) {
  static const Set kSeem = {"looks", "look",    "looked", "sounds",
                            "sound", "sounded", "seems",  "seem"};
  static const Set kDegree = {"so", "really", "very", "pretty", "absolutely", "super", "quite"};
  static const Set kJudgement = {
      "great",    "good",      "well",      "fun",       "perfect",    "amazing",   "awesome",
      "lovely",   "nice",      "fancy",     "real",      "cool",       "delicious", "beautiful",
      "gorgeous", "brilliant", "fantastic", "wonderful", "incredible", "stunning",  "badass",
      "epic",     "intense",   "exciting",  "fab",       "ideal",      "tasty",     "cute"};
  if (ws.size() > 6 || !kJudgement.contains(ws.back().lower)) return false;
  for (size_t v = 0; v + 1 < ws.size() && v <= 3; ++v) {
    if (!kSeem.contains(ws[v].lower)) continue;
    const size_t rest = ws.size() - v - 1;  // the judgement, maybe a degree before it
    return rest == 1 || (rest == 2 && kDegree.contains(ws[v + 1].lower));
  }
  return false;
}

std::string NameOf(const WriterRosterMember& r) {
  return r.aliases.empty() ? r.speaker_id : r.aliases.front();
}

namespace {

// "called", "been", "paid": the form after "had" ("I'd paid" is "I had
// paid") and after "already" ("Already booked the hall").
bool PastParticiple(const std::string& w) {
  return (absl::EndsWith(w, "ed") && !absl::EndsWith(w, "eed")) ||
         In(w, {"been",  "had",    "gone",      "done",    "seen",  "known", "taken",
                "given", "got",    "forgotten", "heard",   "found", "left",  "told",
                "made",  "bought", "paid",      "said",    "sent",  "spent", "put",
                "lost",  "won",    "met",       "thought", "kept",  "felt",  "held",
                "built", "meant",  "brought",   "forgot",  "run",   "come"});
}

}  // namespace

namespace {

// "the place you suggest", "the book you lent me": a word at `i` right
// after a noun its determiner opened is the subject of a clause about that
// noun, and the verb after it is its own.
bool RelativeSubject(const std::vector<Word>& ws, size_t i) {
  if (i < 2 || i + 1 >= ws.size() || !ws[i - 1].tail.empty() || !ws[i].tail.empty()) return false;
  return In(ws[i - 2].lower, {"the", "a", "an", "this", "every", "any", "each", "my", "your", "our",
                              "his", "her", "their"}) &&
         !IsStopword(ws[i - 1].lower) && !IsStopword(ws[i + 1].lower) && !IsAdverb(ws[i + 1].lower);
}

}  // namespace

std::string Rewrite(std::vector<Word> ws, const std::string& self, const std::string& you) {
  std::vector<std::string> out;
  const size_t start = 0;
  bool named_self = false;     // the clause has named the speaker already
  bool third_subject = false;  // a resolved "I" or "you" took a verb
  auto conjugate_next = [&](size_t from) {
    size_t v = from;
    while (v < ws.size() && IsAdverb(ws[v].lower)) ++v;
    if (v < ws.size()) {
      std::string third = ThirdPersonVerb(ws[v].lower);
      if (third != ws[v].lower) {
        ws[v].text = third;
        ws[v].lower = third;
        third_subject = true;
      }
    }
  };
  // Verbs that a subject's second verb often is, in their base form.
  static const Set kSecondVerbs = {
      "know", "love", "like",    "want",   "need",  "think",  "hope",     "feel",    "miss",
      "have", "hate", "do",      "make",   "get",   "go",     "take",     "keep",    "work",
      "live", "say",  "try",     "look",   "play",  "bring",  "cook",     "read",    "write",
      "help", "care", "deserve", "mean",   "seem",  "enjoy",  "spend",    "stay",    "wish",
      "own",  "run",  "teach",   "prefer", "leave", "come",   "eat",      "sleep",   "walk",
      "talk", "call", "buy",     "pay",    "watch", "forget", "remember", "believe", "agree",
      "wait", "tell", "ask",     "send",   "laugh", "worry"};
  for (size_t i = start; i < ws.size(); ++i) {
    const std::string& lw = ws[i].lower;
    std::string repl = ws[i].text;
    // "you've been there six years and know everything": the subject's
    // second verb takes its form too ("... and knows everything").
    if (third_subject && lw == "and" && ws[i].tail.empty() && i + 1 < ws.size() &&
        kSecondVerbs.contains(ws[i + 1].lower)) {
      ws[i + 1].text = ws[i + 1].lower = ThirdPersonVerb(ws[i + 1].lower);
    }
    // After "to", a modal or "doesn't" the verbs stay in their base form
    // ("has to go and see", "will come and help").
    if (In(lw, {"to",  "will",  "would", "can",   "could",   "should", "must",   "might",
                "may", "shall", "can't", "won't", "doesn't", "didn't", "does",   "did",
                "let", "gonna", "wanna", "gotta", "i'll",    "i'd",    "you'll", "you'd"})) {
      third_subject = false;
    }
    // "I'd rather not fly, I'm trying to ...": a second clause of the same
    // subject after a comma reads "..., and is trying to ...".
    if (!self.empty() && named_self && i > 0 && ws[i - 1].tail == "," &&
        In(ws[0].lower, {"i", "i'm", "im", "i've", "i'll", "i'd"}) &&
        In(lw, {"i", "i'm", "im", "i've", "i'll"})) {
      if (lw == "i") conjugate_next(i + 1);
      out.push_back(lw == "i"      ? "and"
                    : lw == "i've" ? "and has"
                    : lw == "i'll" ? "and will"
                                   : "and is");
      if (!ws[i].tail.empty()) out.back() += ws[i].tail;
      continue;
    }
    if (!self.empty()) {
      if (lw == "i") {
        repl = self;
        // "Cass and I vote", "my sister and I love": a plural subject keeps
        // its verb; "... but I've been busy and I want" is "I" alone.
        const bool plural =
            i >= 2 && ws[i - 1].lower == "and" && ws[i - 2].tail.empty() &&
            (absl::ascii_isupper(static_cast<unsigned char>(ws[i - 2].text[0])) ||
             In(ws[i - 2].lower,
                {"wife",      "husband",    "partner", "sister",   "brother",   "mum",
                 "mom",       "dad",        "son",     "daughter", "friend",    "kids",
                 "boyfriend", "girlfriend", "family",  "father",   "mother",    "parents",
                 "uncle",     "aunt",       "auntie",  "cousin",   "colleague", "boss",
                 "he",        "she",        "him",     "her",      "they"}));
        if (!plural) conjugate_next(i + 1);
      } else if (lw == "i'm" || lw == "im") {
        repl = self + " is";
        third_subject = true;
      } else if (lw == "i've") {
        repl = self + " has";
        third_subject = true;
      } else if (lw == "i'd") {
        // "I'd been", "I'd gone": had; "I'd love": would.
        const std::string next = i + 1 < ws.size() ? ws[i + 1].lower : "";
        repl = self + (PastParticiple(next) ? " had" : " would");
      } else if (lw == "i'll") {
        repl = self + " will";
      } else if (lw == "my" && named_self) {
        repl = "their";  // "I'm trying to cut my footprint": "Chen is trying to cut their ..."
      } else if (lw == "my" || lw == "mine") {
        repl = self + "'s";
      } else if (lw == "me" || lw == "myself") {
        repl = self;
      }
    }
    if (!you.empty()) {
      if ((lw == "you" || lw == "u") && i + 1 < ws.size() &&
          In(ws[i + 1].lower, {"all", "guys", "lot", "lads", "people"})) {
        // "if you all say yes", "miss you all": everyone, not the addressee.
        const bool subject = i == start || In(ws[i - 1].lower, ClauseOpeners());
        ++i;
        if (subject) conjugate_next(i + 1);
        out.push_back("everyone" + ws[i].tail);
        continue;
      } else if ((lw == "you" || lw == "u") &&
                 ((i + 1 < ws.size() && In(ws[i + 1].lower, SeveralAddressees())) ||
                  (i >= 2 && ws[i - 1].lower == "of" &&
                   In(ws[i - 2].lower, {"both", "all", "each", "either", "neither", "two", "three",
                                        "none", "some", "one", "any", "most", "many", "few"})))) {
        // "you two", "both of you", "one of you": several addressees, not
        // the one replied to; left as written.
      } else if (lw == "you" || lw == "u") {
        repl = you;
        // "you" as a subject: opening the clause, or after a word that opens
        // a clause of its own ("I know you want the goat": "... Emeka wants").
        const bool subject = i == start || In(ws[i - 1].lower, ClauseOpeners());
        if (i + 1 < ws.size() && (subject || RelativeSubject(ws, i))) {
          conjugate_next(i + 1);
        } else if (i + 1 < ws.size() && ws[i].tail.empty() &&
                   In(ws[i + 1].lower, {"are", "were", "aren't", "weren't", "haven't"})) {
          // "like you are doing", "the power you were talking about": a
          // subject inside the clause, before a verb only a subject takes.
          ws[i + 1].text = ws[i + 1].lower = ThirdPersonVerb(ws[i + 1].lower);
        }
      } else if (lw == "you're" || lw == "youre") {
        repl = you + " is";
        third_subject = true;
      } else if (lw == "you've") {
        repl = you + " has";
        third_subject = true;
      } else if (lw == "you'd") {
        repl = you + " would";  // "you'd be a great counselor"
      } else if (lw == "you'll") {
        repl = you + " will";
      } else if (lw == "your" || lw == "ur" || lw == "yours") {
        repl = you + "'s";
      } else if (lw == "yourself") {
        repl = you;  // "looking after yourself", as "myself" is the speaker
      }
    }
    // "I'd like us to pick a city", "she asked us to wait": the people asked
    // are the conversation's members.
    if (lw == "us" && i > 0 && i + 1 < ws.size() && ws[i + 1].lower == "to" &&
        In(ws[i - 1].lower,
           {"like",   "love", "want",  "wants",  "wanted",   "need",    "needs",
            "needed", "ask",  "asks",  "asked",  "expect",   "expects", "expected",
            "told",   "tell", "tells", "remind", "reminded", "invited", "allow"})) {
      repl = "the group";
    }
    if (!self.empty() && absl::StartsWith(repl, self)) named_self = true;
    // "No doubt, Jon, you've got this": the name just said is the "you".
    if (!you.empty() && repl != ws[i].text && absl::StartsWith(repl, you) && !out.empty() &&
        absl::StripSuffix(out.back(), ",") == you) {
      out.pop_back();
    }
    out.push_back(repl + ws[i].tail);
  }
  std::string s = absl::StrJoin(out, " ");
  while (!s.empty() && std::string(" .,!;:-").find(s.back()) != std::string::npos) s.pop_back();
  return s;
}

namespace {

// "Been a busy week", "Been ages", "Been hectic lately": what has been is
// a span of time or how it went ("it's been"), not the speaker ("Been a
// nurse for years", "Been busy with the move" are).
bool SpanOfTime(const std::vector<Word>& ws) {
  if (ws.size() < 2 || ws[0].lower != "been") return false;
  if (In(ws[1].lower, {"ages", "forever", "years", "months", "weeks", "days", "hectic", "chaotic",
                       "crazy", "nuts", "insane", "wild", "mad", "brutal"})) {
    return true;
  }
  if (!In(ws[1].lower, {"a", "an", "such", "quite"})) return false;
  for (size_t i = 2; i < ws.size() && i < 5; ++i) {
    if (In(ws[i].lower, {"week",   "month",  "year",   "day",     "while",   "road",    "journey",
                         "ride",   "time",   "night",  "weekend", "morning", "evening", "summer",
                         "winter", "spring", "autumn", "season",  "stretch", "decade"})) {
      return true;
    }
  }
  return false;
}

}  // namespace

bool RestoreDroppedI(std::vector<Word>* ws) {
  if (ws->size() < 2) return false;
  const std::string& w0 = (*ws)[0].lower;
  const std::string& w1 = (*ws)[1].lower;
  // A finite verb later in the clause makes an opening "-ing" word its
  // subject ("Going there is a trek").
  auto later_verb = [ws] {
    return std::any_of(ws->begin() + 1, ws->end(), [](const Word& w) {
      return In(w.lower, {"is", "was", "are", "were", "isn't", "wasn't", "makes", "sounds"});
    });
  };
  std::string subject;
  // "Already contacted highways": a past verb after "already".
  if ((w0 == "already" && PastParticiple(w1)) ||
      (In(w0, DroppedIVerbs()) &&
       !In(w1, {"be", "it", "you", "ages", "forever", "any", "well", "badly", "great", "fine",
                "wrong", "off", "so", "too", "really", "raining", "snowing", "pouring"}) &&
       // "Went to the beach", not "Went well"
       (w0 != "went" ||
        In(w1, {"to", "out", "home", "back", "for", "on", "with", "up", "down"})))) {
    subject = "I";
  } else if (w0 == "been" && !later_verb() && !SpanOfTime(*ws)) {
    subject = "I've";
  } else if ((In(w0, DroppedImVerbs()) || (w0 == "still" && In(w1, DroppedImVerbs()))) &&
             !later_verb()) {
    subject = "I'm";
  } else if (In(w0, {"happy", "glad", "keen", "excited", "ready", "thrilled", "stoked", "eager"}) &&
             In(w1, {"to", "for", "about"}) && !later_verb()) {
    subject = "I'm";  // "Happy to help with the move", "Excited for the trip"
  }
  if (subject.empty()) return false;
  (*ws)[0].text = (*ws)[0].lower;  // no longer the clause's first word
  ws->insert(ws->begin(), Word{subject, absl::AsciiStrToLower(subject), ""});
  return true;
}

std::vector<Word> DropHedges(std::vector<Word> ws) {
  std::vector<Word> out;
  std::string previous;
  for (size_t i = 0; i < ws.size(); ++i) {
    // "..., but please remember I'm vegetarian", "Please note we moved to
    // Thursday": a courtesy before what is to be remembered, not a request.
    if (i + 2 < ws.size() && ws[i].lower == "please" && In(ws[i + 1].lower, {"remember", "note"}) &&
        In(ws[i + 2].lower, {"i", "i'm", "im", "i've", "that", "we", "we're", "my"})) {
      if (ws[i + 2].lower == "that") ++i;
      ++i;
      continue;
    }
    const bool negated = previous == "not" || absl::EndsWith(previous, "n't");
    previous = ws[i].lower;
    if (!In(ws[i].lower, Hedges()) || (negated && ws[i].lower == "really")) {
      out.push_back(std::move(ws[i]));
    } else if (!out.empty() && out.back().tail.empty()) {
      out.back().tail = ws[i].tail;  // "good though, ..." keeps its comma
    }
  }
  return out.empty() ? ws : out;
}

}  // namespace speakermem::writer::offline
