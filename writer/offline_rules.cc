#include "writer/offline_rules.h"

#include <algorithm>
#include <cstdint>
#include <optional>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "text/text.h"
#include "writer/offline_lexicon.h"
#include "writer/offline_words.h"

namespace speakermem::writer::offline {

using text::IsStopword;
namespace {

// ---- code points ----------------------------------------------------------

// Decodes one UTF-8 code point at s[*i] and advances; -1 for an invalid byte.
int32_t NextCodePoint(absl::string_view s, size_t* i) {
  const auto b = static_cast<unsigned char>(s[*i]);
  int len = b < 0x80 ? 1 : (b >> 5) == 6 ? 2 : (b >> 4) == 14 ? 3 : (b >> 3) == 30 ? 4 : 0;
  if (len == 0 || *i + len > s.size()) {
    ++*i;
    return -1;
  }
  int32_t cp = len == 1 ? b : len == 2 ? (b & 0x1F) : len == 3 ? (b & 0x0F) : (b & 0x07);
  for (int k = 1; k < len; ++k) cp = (cp << 6) | (static_cast<unsigned char>(s[*i + k]) & 0x3F);
  *i += len;
  return cp;
}

bool IsPictograph(int32_t cp) {
  return (cp >= 0x1F000 && cp <= 0x1FAFF) || (cp >= 0x2600 && cp <= 0x27BF) ||
         (cp >= 0x2300 && cp <= 0x23FF) || (cp >= 0x2B00 && cp <= 0x2BFF) ||
         (cp >= 0x2190 && cp <= 0x21FF) || (cp >= 0xFE00 && cp <= 0xFE0F) || cp == 0x200D ||
         cp == 0x20E3 || (cp >= 0xE0020 && cp <= 0xE007F) || cp == 0x2764;
}

ClauseReading Nothing(const char* why) {
  ClauseReading r;
  r.why = why;
  return r;
}

// "Mt.", "Dr.", "St." and single initials do not end a sentence.
bool IsAbbreviation(const std::string& clause_so_far) {
  static const Set kAbbrev = {"mt", "dr",   "mr",  "mrs", "ms", "st",     "vs",  "etc", "jr",
                              "sr", "prof", "ave", "rd",  "no", "approx", "e.g", "i.e"};
  size_t end = clause_so_far.size() - 1;  // the '.'
  size_t begin = clause_so_far.rfind(' ', end);
  begin = begin == std::string::npos ? 0 : begin + 1;
  std::string word = absl::AsciiStrToLower(clause_so_far.substr(begin, end - begin));
  return kAbbrev.contains(word) || (word.size() == 1 && absl::ascii_isalpha(word[0]));
}

}  // namespace

std::string CleanText(absl::string_view text) {
  std::string out;
  size_t i = 0;
  bool pending_break = false;  // an emoji was seen since the last word
  while (i < text.size()) {
    size_t at = i;
    int32_t cp = NextCodePoint(text, &i);
    if (cp < 0) continue;
    if (IsPictograph(cp)) {
      pending_break = true;
      continue;
    }
    if (cp == 0x2013 || cp == 0x2014) {
      out += '-';
      continue;
    }
    if (cp == 0x2018 || cp == 0x2019) {
      out += '\'';
      continue;
    }
    if (cp == 0x201C || cp == 0x201D) {
      out += '"';
      continue;
    }
    if (cp == '\n' || cp == '\r' || cp == '\t') {
      pending_break = pending_break || cp == '\n';
      cp = ' ';
    }
    if (pending_break && cp != ' ') {
      // Text after an emoji: the emoji ended a sentence unless one had ended.
      while (!out.empty() && out.back() == ' ') out.pop_back();
      if (!out.empty() && std::string(".!?;:,").find(out.back()) == std::string::npos) {
        out += '.';
      }
      if (!out.empty()) out += ' ';
      pending_break = false;
    }
    if (cp == ' ') {
      if (!out.empty() && out.back() != ' ') out += ' ';
      continue;
    }
    out.append(text.data() + at, i - at);
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

std::vector<std::string> SplitClauses(absl::string_view cleaned) {
  std::vector<std::string> out;
  std::string cur;
  auto flush = [&] {
    std::string c(absl::StripAsciiWhitespace(cur));
    if (!c.empty()) out.push_back(std::move(c));
    cur.clear();
  };
  for (size_t i = 0; i < cleaned.size(); ++i) {
    char c = cleaned[i];
    cur += c;
    // "September it is, I'll send dates": the choice is a clause of its own.
    if (c == ',' && absl::EndsWith(absl::AsciiStrToLower(cur), " it is,")) {
      cur.pop_back();
      flush();
      continue;
    }
    if (c != '.' && c != '!' && c != '?' && c != ';') continue;
    // A sentence end is followed by a space or the end ("3.5", "e.g." stay).
    while (i + 1 < cleaned.size() && std::string(".!?").find(cleaned[i + 1]) != std::string::npos) {
      cur += cleaned[++i];
    }
    if (c == '.' && IsAbbreviation(cur)) continue;
    if (i + 1 == cleaned.size() || cleaned[i + 1] == ' ') flush();
  }
  flush();
  return out;
}

namespace {

// A clause with its label, opening markers and vocatives taken off.
struct Stripped {
  std::vector<Word> ws;
  bool decision_label = false;                       // "Updated decision: ..."
  const WriterRosterMember* label_member = nullptr;  // "Yusuf: no autumn"
  Speaker addressee;                                 // a vocative overrides the context's
};

// "Dad always has the final word", "Mum says ...": a kinship word before a
// verb is who the clause is about, not whom it addresses.
bool KinAsSubject(const std::vector<Word>& ws) {
  if (absl::StrContains(ws[0].tail, ",")) return false;
  size_t v = 1;
  while (v < ws.size() && IsAdverb(ws[v].lower)) ++v;
  return v > 1 || (v < ws.size() && In(ws[v].lower, ThirdPersonVerbs()));
}

// "The whole thing is a rooftop Sam": a member's name closing a clause
// after a word that takes no object (not "with Sam", "told Sam").
bool TrailingAddress(const std::vector<Word>& ws) {
  const std::string& before = ws[ws.size() - 2].lower;
  if (In(before, ClauseEnders())) return true;  // "I'm not inventing it Dani"
  if (IsStopword(before) || absl::EndsWith(before, "'s")) return false;
  return !In(before, TakesAPerson());
}

// A short label before a colon ("Updated decision: ...", "Budget question:
// ..."): its words mark the clause, the rest is the matter. A member's name
// as the label ("Yusuf: no autumn") says what holds for that member. Then the
// opening markers and vocatives ("Yeah.", "Honestly", "Priya, ...") and a
// closing vocative (", Leon"), a vocative naming the addressee.
Stripped Strip(std::vector<Word> ws, const MessageContext& ctx) {
  Stripped c;
  for (size_t i = 0; i + 1 < ws.size() && i < 3; ++i) {
    if (!absl::StrContains(ws[i].tail, ':')) continue;
    std::vector<Word> label(ws.begin(), ws.begin() + static_cast<long>(i) + 1);
    c.decision_label = HasWord(label, DecisionWords()) || HasWord(label, {"decision", "plan"});
    if (i == 0) c.label_member = Member(ws[0], ctx);
    ws.erase(ws.begin(), ws.begin() + static_cast<long>(i) + 1);
    break;
  }
  // An announcement of what follows ("Quick question for the street, ...",
  // "Heads up, ...", "One more thing: ...") says nothing of its matter.
  {
    size_t i = 0;
    if (i < ws.size() && In(ws[i].lower, {"quick", "small", "one", "another", "little"})) ++i;
    if (i < ws.size() && ws[i].lower == "more") ++i;
    const bool announces =
        i < ws.size() && In(ws[i].lower, {"question", "update", "reminder", "thing", "heads", "fyi",
                                          "psa", "note", "thought"});
    for (size_t j = i; announces && j < ws.size() && j < i + 5; ++j) {
      if (absl::StrContains(ws[j].tail, ",") || absl::StrContains(ws[j].tail, ":")) {
        if (j + 1 < ws.size()) ws.erase(ws.begin(), ws.begin() + static_cast<long>(j) + 1);
        break;
      }
    }
  }
  c.addressee = ctx.addressee;
  bool changed = true;
  while (changed && ws.size() > 1) {
    changed = false;
    const WriterRosterMember* m = Member(ws[0], ctx);
    // "Priya, ...", "Priya you look ...", "Jordan are you going ...", and
    // a name before a question, the group's clause, a reaction, a clause of
    // its own or a request: "Rashida what were the four", "Yusuf we went on
    // a Saturday", "Luca that's it", "Marcus the south face is gentle",
    // "Claudette tell us about Maple Street", "Kwame I'm so sorry" (the
    // speaker's own clause, not a statement about Kwame).
    const bool vocative =
        m != nullptr && m->speaker_id != ctx.speaker.speaker_id &&
        !absl::EndsWith(ws[0].lower, "'s") &&
        (absl::StrContains(ws[0].tail, ",") || In(ws[1].lower, SecondPersonSubject()) ||
         In(ws[1].lower, AfterAddress()) || In(ws[1].lower, WhWords()) ||
         In(ws[1].lower, ImperativeVerbs()) ||
         In(ws[1].lower, {"i", "i'm", "im", "i've", "i'll", "i'd"}) ||
         (ws.size() > 2 && In(ws[1].lower, Auxiliaries()) &&
          In(ws[2].lower, SecondPersonSubject())) ||
         (ws.size() > 3 && ws[1].lower == "my" && In(ws[2].lower, Endearments())));
    if (vocative) {
      c.addressee = Speaker{m->speaker_id, NameOf(*m)};
      ws.erase(ws.begin());
      // "Tobenna my love did you ...": the endearment goes with the name.
      if (ws.size() > 2 && ws[0].lower == "my" && In(ws[1].lower, Endearments())) {
        ws.erase(ws.begin(), ws.begin() + 2);
      }
      changed = true;
    } else if (ws.size() > 3 && ws[0].lower == "look" && ws[1].lower == "at" &&
               In(ws[2].lower, {"that", "this", "him", "her", "them", "you"}) &&
               absl::StrContains(ws[2].tail, ",")) {
      ws.erase(ws.begin(), ws.begin() + 3);  // "Look at that, one decent haul and ..."
      changed = true;
    } else if (const size_t n = LeadingMarker(ws); n > 0) {
      ws.erase(ws.begin(), ws.begin() + static_cast<long>(n));
      changed = true;
    } else if (m == nullptr && In(ws[0].lower, KinVocatives()) && !KinAsSubject(ws)) {
      ws.erase(ws.begin());  // "Mum that's so much food", "Dad we are happy"
      changed = true;
    } else if (ws[0].lower == "please" && absl::StrContains(ws[0].tail, ",")) {
      ws.erase(ws.begin());  // "Yes please, still helps": a courtesy, not a request
      changed = true;
    } else if (In(ws[0].lower, {"my", "i"}) &&
               In(ws[1].lower, {"darlings", "darling", "people", "friends", "loves", "mean"})) {
      ws.erase(ws.begin(), ws.begin() + 2);  // "My darlings, ...", "I mean ..."
      changed = true;
    } else if (ws.size() > 2 && ws[0].lower == "i" && In(ws[1].lower, {"know", "guess", "see"}) &&
               absl::StrContains(ws[1].tail, ",")) {
      ws.erase(ws.begin(), ws.begin() + 2);  // "I know, I know, head down in ..."
      changed = true;
    }
  }
  // A tag question ("... for a while hasn't it", "... isn't it") asks
  // nothing the statement does not say.
  if (ws.size() > 3 && absl::EndsWith(ws[ws.size() - 2].lower, "n't") &&
      In(ws.back().lower, {"it", "you", "they", "he", "she", "we", "i", "there"})) {
    ws.resize(ws.size() - 2);
  }
  // "... but let's see", "... we'll see": a hedge closing a clause, no plan.
  if (ws.size() > 3 && ws.back().lower == "see" &&
      In(ws[ws.size() - 2].lower, {"let's", "lets", "we'll"})) {
    ws.resize(ws.size() - 2);
    if (In(ws.back().lower, {"but", "and", "so"})) ws.pop_back();
  }
  // "... can wait two days my love": an endearment closing a clause (not
  // "send them my love").
  if (ws.size() > 3 && ws[ws.size() - 2].lower == "my" && In(ws.back().lower, Endearments()) &&
      !In(ws[ws.size() - 3].lower, {"send", "sends", "sending", "sent", "give", "with", "all"})) {
    ws.resize(ws.size() - 2);
  }
  if (ws.size() > 1) {
    const WriterRosterMember* m = Member(ws.back(), ctx);
    if (m != nullptr && m->speaker_id != ctx.speaker.speaker_id &&
        (absl::StrContains(ws[ws.size() - 2].tail, ",") ||
         (ws.size() > 3 && TrailingAddress(ws)))) {
      c.addressee = Speaker{m->speaker_id, NameOf(*m)};
      ws.pop_back();
    } else if (m == nullptr && In(ws.back().lower, KinVocatives()) &&
               (absl::StrContains(ws[ws.size() - 2].tail, ",") ||
                (ws.size() > 2 && TrailingAddress(ws)))) {
      ws.pop_back();  // "your pepper soup is perfect mum", "nothing dramatic Mum"
    }
  }
  c.ws = std::move(ws);
  return c;
}

// `r`, a choice the group made, stated with the group as subject: its
// content opens with kGroupDecided unless it already names the group.
ClauseReading StateDecided(ClauseReading r) {
  if (r.kind != ClauseReading::Kind::kGroupPlan || r.content.empty() ||
      absl::StrContains(absl::AsciiStrToLower(r.content), "the group")) {
    return r;
  }
  const std::string first = absl::AsciiStrToLower(r.content.substr(0, r.content.find(' ')));
  if (IsStopword(first))
    r.content[0] = absl::ascii_tolower(static_cast<unsigned char>(r.content[0]));
  r.content = absl::StrCat(kGroupDecided, r.content);
  return r;
}

// The three readings a clause can get, stated as memory in the third person.
class Readings {
 public:
  Readings(const MessageContext& ctx, const Speaker& addressee)
      : ctx_(ctx),
        addressee_(addressee),
        self_(ctx.speaker.name.empty() ? ctx.speaker.speaker_id : ctx.speaker.name) {}

  // The speaker's own matter: their core.
  ClauseReading Self(const std::vector<Word>& ws, const char* why) const {
    ClauseReading r;
    r.kind = ClauseReading::Kind::kSelf;
    r.about = ctx_.speaker.speaker_id;
    r.utype = HasWord(ws, StanceWords()) ? "stance" : "fact";
    r.content = Rewrite(ws, self_, addressee_.name);
    r.why = why;
    return r;
  }

  // A plan or decision of the group (GROUP interaction), or its norm (insight).
  ClauseReading Group(const std::vector<Word>& ws, const char* why) const {
    // The "we" of "my kids ... we're going camping" is the speaker's circle.
    if (ctx_.own_circle && HasWord(ws, GroupSubject())) return Self(ws, "the speaker's circle");
    if (Encouragement(ws)) return Nothing("encouragement");
    ClauseReading r;
    const bool norm = HasWord(ws, NormWords());
    r.kind = norm ? ClauseReading::Kind::kGroupNorm : ClauseReading::Kind::kGroupPlan;
    r.about = kGroupOwner;
    r.utype = norm ? "observation" : "decision";
    std::vector<Word> rest = ws;
    static const auto* kAs = new absl::flat_hash_map<std::string, std::string>{
        {"we", "the group"},        {"us", "the group"},         {"our", "the group's"},
        {"ours", "the group's"},    {"we'll", "the group will"}, {"we're", "the group is"},
        {"we've", "the group has"}, {"we'd", "the group would"}, {"let's", "the group will"}};
    for (size_t i = 0; i < rest.size(); ++i) {
      Word& w = rest[i];
      if (auto as = kAs->find(w.lower); as != kAs->end()) w.text = as->second;
      if (w.lower != "we") continue;
      // The group is one subject: "we need" -> "the group needs".
      size_t v = i + 1;
      while (v < rest.size() && (IsAdverb(rest[v].lower) || In(rest[v].lower, {"all", "both"})))
        ++v;
      if (v < rest.size()) {
        const std::string third = ThirdPersonVerb(rest[v].lower);
        if (third != rest[v].lower) rest[v].text = rest[v].lower = third;
      }
    }
    if (ws[0].lower == "lets") rest[0].text = "the group will";
    r.content = Rewrite(rest, self_, addressee_.name);
    r.why = why;
    return r;
  }

  // A choice the group made, stated with the group as its subject.
  ClauseReading Decided(const std::vector<Word>& ws, const char* why) const {
    return StateDecided(Group(ws, why));
  }

  // What the speaker says of another member: that member's profile.
  ClauseReading Other(const Speaker& who, std::vector<Word> about, const char* why) const {
    ClauseReading r;
    r.kind = ClauseReading::Kind::kOther;
    r.about = who.speaker_id;
    r.utype = HasWord(about, StanceWords()) ? "stance" : "observation";
    r.content = Rewrite(std::move(about), self_, who.name);
    r.why = why;
    return r;
  }

 private:
  const MessageContext& ctx_;
  const Speaker addressee_;
  const std::string self_;
};

// A member's view of another member ("I think Bob ..."), or nothing.
std::optional<ClauseReading> ViewOfMember(const std::vector<Word>& ws, const Readings& read,
                                          const MessageContext& ctx, const Speaker& addressee) {
  if (ws.size() <= 2 || ws[0].lower != "i" || !In(ws[1].lower, ViewVerbs())) return std::nullopt;
  size_t at = 2;
  if (at < ws.size() && ws[at].lower == "that") ++at;
  if (at >= ws.size()) return std::nullopt;
  // What the speaker saw or heard of a member keeps its verb ("Bev saw
  // Marcus limping"); what they think of one is that member's clause.
  const bool perceived = In(ws[1].lower, {"saw", "heard", "noticed", "hear"});
  auto view = [&](const Speaker& who, const char* why) -> std::optional<ClauseReading> {
    std::vector<Word> about(ws.begin() + static_cast<long>(perceived ? 0 : at), ws.end());
    if (about.size() <= (perceived ? 3 : 1)) return std::nullopt;
    ClauseReading r = read.Other(who, about, why);
    r.utype = perceived ? "observation" : "stance";
    return r;
  };
  // "I saw you limping at the end": a view of the member addressed.
  if (In(ws[at].lower, SecondPersonSubject()) && !addressee.speaker_id.empty() &&
      addressee.speaker_id != ctx.speaker.speaker_id) {
    return view(addressee, "view of the member addressed");
  }
  const WriterRosterMember* m = Member(ws[at], ctx);
  if (m == nullptr || m->speaker_id == ctx.speaker.speaker_id) return std::nullopt;
  return view(Speaker{m->speaker_id, NameOf(*m)}, "view of a member");
}

// Two or more members' positions ("So: Vera and Marcus in favour, Claudette
// against") are where the group stands: GROUP interaction. Not a possessor
// ("Blessing's reading ... Harriet's"), nor the speaker's own "I told A and B".
std::optional<ClauseReading> MembersPositions(const std::vector<Word>& ws, const Readings& read,
                                              const MessageContext& ctx) {
  if (In(ws[0].lower, FirstPersonSubject())) return std::nullopt;
  // Most clauses name no two people: only capitalised words are looked up.
  if (std::count_if(ws.begin(), ws.end(), [](const Word& w) {
        return absl::ascii_isupper(w.text[0]) && !absl::EndsWith(w.lower, "'s");
      }) < 2) {
    return std::nullopt;
  }
  absl::flat_hash_set<std::string> members;
  for (const Word& w : ws) {
    const WriterRosterMember* m = Member(w, ctx);
    if (m != nullptr && absl::ascii_isupper(w.text[0]) && !absl::EndsWith(w.lower, "'s")) {
      members.insert(m->speaker_id);
    }
  }
  return members.size() < 2 ? std::nullopt : std::optional(read.Group(ws, "members' positions"));
}

// With group_arrangements on, "we" or "everyone" with a plan or a date, not
// the speaker's own ("Saturday works for everyone"): GROUP interaction.
std::optional<ClauseReading> GroupArrangement(const std::vector<Word>& ws, const Readings& read,
                                              const MessageContext& ctx) {
  if (!ctx.group_arrangements || In(ws[0].lower, FirstPersonSubject())) return std::nullopt;
  bool group_mention = false;
  for (size_t i = 1; i < ws.size(); ++i) {
    group_mention = group_mention || In(ws[i].lower, {"we", "we'll", "we're", "us", "everyone",
                                                      "everybody", "let's"});
  }
  const bool plan = HasWord(ws, PlanCues()) || HasWord(ws, DecisionWords());
  if (group_mention && (plan || HasTime(ws))) return read.Group(ws, "arrangement for the group");
  return std::nullopt;
}

// A decision with no subject of its own: a verb of arranging ("Already
// booked the date", "Moved to Thursday"); a word that only names a decision
// or its status ("Series A confirmed", "Independent decision, good outcome")
// when it is tied to a time.
bool ArrangedDecision(const std::vector<Word>& ws) {
  if (!HasWord(ws, DecisionWords())) return false;
  return HasTime(ws) || !HasWord(ws, {"decision", "final", "deadline", "confirmed", "chosen"}) ||
         HasWord(ws, {"booked", "scheduled", "settled", "agreed", "decided"});
}

// "X it is": a choice made ("Porto it is").
bool ChoiceMade(const std::vector<Word>& ws) {
  return ws.size() >= 3 && ws[ws.size() - 2].lower == "it" && ws.back().lower == "is";
}

// The subject decides the owner, the meaning the layer (the header's list).
ClauseReading ReadBySubject(const Stripped& c, const MessageContext& ctx) {
  std::vector<Word> ws = c.ws;
  const Readings read(ctx, c.addressee);
  const std::string w0 = ws[0].lower;
  const std::string w1 = ws.size() > 1 ? ws[1].lower : "";
  const bool first_person = HasWord(ws, FirstPersonSubject());
  if (c.decision_label) return read.Decided(ws, "decision label");
  if (c.label_member != nullptr && c.label_member->speaker_id != ctx.speaker.speaker_id) {
    return read.Other(Speaker{c.label_member->speaker_id, NameOf(*c.label_member)}, ws,
                      "what holds for a member");
  }
  if (std::optional<ClauseReading> g = MembersPositions(ws, read, ctx)) return *g;
  if (std::optional<ClauseReading> g = GroupArrangement(ws, read, ctx)) return *g;
  if (first_person) {
    if (std::optional<ClauseReading> view = ViewOfMember(ws, read, ctx, c.addressee)) return *view;
  }
  // "I think we should ...": the speaker proposes a plan for the group ("I
  // think we'd have a great time" only guesses, and stays the speaker's).
  if (w0 == "i" && In(w1, ViewVerbs()) && ws.size() > 3 && In(ws[2].lower, GroupSubject()) &&
      HasWord(ws, PlanCues()) &&
      (HasWord(ws, NormWords()) || GroupArranges(std::vector<Word>(ws.begin() + 2, ws.end())))) {
    ws.erase(ws.begin(), ws.begin() + 2);
    return read.Group(ws, "proposal for the group");
  }
  // "If we're routing anyway let's find ...": a proposal to the group
  // wherever it stands in the clause.
  if (w0 != "let's" && HasWord(ws, {"let's"})) return read.Group(ws, "let's");
  // "Preet and I will go together": two members' joint arrangement is an
  // event between members, the group's interaction.
  if (const WriterRosterMember* m = Member(ws[0], ctx);
      m != nullptr && m->speaker_id != ctx.speaker.speaker_id && ws.size() > 3 && w1 == "and" &&
      In(ws[2].lower, {"i", "me"}) && absl::ascii_isupper(ws[0].text[0])) {
    return read.Group(ws, "members together");
  }
  if (In(w0, FirstPersonSubject())) return read.Self(ws, "first person");
  // "My sister and I will ...": the speaker's own plan.
  if (first_person && ws.size() > 2 && w1 == "and" && In(ws[2].lower, {"i", "me"})) {
    return read.Self(ws, "first person");
  }
  // "We'll see what her schedule looks like": waiting to know, nothing
  // arranged; the speaker's own uncertainty.
  if (ws.size() > 3 && In(w0, {"we'll", "let's", "lets"}) && w1 == "see" &&
      In(ws[2].lower, {"what", "if", "whether", "how", "when", "where"})) {
    return read.Self(ws, "waiting to see");
  }
  if (In(w0, GroupSubject()) || (ws.size() > 1 && w0 == "the" && In(w1, {"group", "team"}))) {
    if (HasWord(ws, NormWords())) return read.Group(ws, "group norm");
    // "We do all kinds of dances", "We've put our hearts into it": what the
    // speaker's people do or did, not an arrangement of the group.
    if ((HasWord(ws, PlanCues()) || HasWord(ws, DecisionWords())) && GroupArranges(ws)) {
      return read.Group(ws, "group plan");
    }
    return read.Self(ws, "the speaker's circle");
  }
  // "Please submit receipts within two weeks": a rule the group is asked to
  // keep. A request tied to an occasion ("Please make it somewhere with a
  // tea stop this time", "... on Saturday") is part of that plan.
  if (w0 == "please") {
    ClauseReading r = read.Group(ws, "request to the group");
    if (!HasTime(ws)) r.kind = ClauseReading::Kind::kGroupNorm;
    r.utype = "decision";
    return r;
  }
  if (In(w0, SecondPersonSubject())) {
    if (c.addressee.speaker_id.empty() || c.addressee.speaker_id == ctx.speaker.speaker_id) {
      return Nothing("unknown addressee");
    }
    // "You're probably right": the speaker agrees, as with a member's name.
    if (size_t agreed = AgreementLength(ws); agreed > 0) {
      std::vector<Word> rest(ws.begin() + static_cast<long>(agreed), ws.end());
      if (ContentCount(rest) < ctx.min_content) return Nothing("agreement");
    }
    // "You two are the same person", "you all did well": several people.
    if (In(w1, SeveralAddressees())) {
      return Nothing("several addressees");
    }
    return read.Other(c.addressee, ws, "addressee");
  }
  if (ChoiceMade(ws)) return read.Decided(ws, "choice made");
  // "Let me look at September dates": what the speaker will do.
  if (w0 == "let" && w1 == "me" && ws.size() > 2) {
    ws[0] = Word{"I", "i", ""};
    ws[1] = Word{"will", "will", ws[1].tail};
    return read.Self(ws, "first person");
  }
  // Advice or a request ("Take one trip at a time", "Ask Sam") is what the
  // speaker would have someone do, not something that is so of anyone.
  if (In(w0, ImperativeVerbs())) {
    // "Show went well": the word names a thing, the subject of its verb.
    if (NounBeforeVerb(ws)) return read.Self(ws, "no subject of its own");
    // "Don't worry, but I'd take the booth": the speaker's own matter after it.
    if (size_t i = OwnClauseAfterBut(ws); i > 0) {
      Stripped rest = c;
      rest.ws.assign(ws.begin() + static_cast<long>(i), ws.end());
      return ReadBySubject(rest, ctx);
    }
    return Nothing("advice or a request");
  }
  if (const WriterRosterMember* m = Member(ws[0], ctx); m != nullptr) {
    // "Cass makes a fair point about Millbrook", "Kwame is right": the
    // speaker agrees, which is the speaker's stance; bare, an acknowledgement.
    if (size_t agreed = AgreementLength(ws);
        (agreed > 0 || Endorsed(ws)) && m->speaker_id != ctx.speaker.speaker_id) {
      std::vector<Word> rest(ws.begin() + static_cast<long>(agreed), ws.end());
      if (agreed > 0 && ContentCount(rest) < ctx.min_content) return Nothing("agreement");
      ClauseReading r = read.Self(ws, "agreement with a member");
      r.utype = "stance";
      return r;
    }
    // "Kwame's Saturday is confirmed", "Sasha's format from now on": a
    // decision about something of a member's, which the group adopts.
    if (absl::EndsWith(ws[0].lower, "'s") && (HasWord(ws, DecisionWords()) || FromNowOn(ws))) {
      return read.Decided(ws, "decision on a member's proposal");
    }
    if (m->speaker_id == ctx.speaker.speaker_id) {
      if (ws.size() < 2) return Nothing("filler");
      // "Omar owns the cost sheet" said by Omar.
      return read.Self(ws, "own name");
    }
    if (ws.size() < 2) return Nothing("filler");
    return read.Other(Speaker{m->speaker_id, NameOf(*m)}, ws, "named member");
  }
  if (In(w0, ThirdPronoun())) return Nothing("unresolved pronoun");
  // "Dad always has the final word": family outside the roster, the
  // speaker's own circle.
  if (In(w0, KinVocatives())) return read.Self(ws, "the speaker's family");
  const bool arranged = (ArrangedDecision(ws) || FromNowOn(ws)) && !first_person;
  if (RestoreDroppedI(&ws)) {
    // "Already booked the date for next year": the speaker arranged it.
    if (arranged) return read.Group(ws, "arranged by the speaker");
    return read.Self(ws, "first person, its I left out");
  }
  if (arranged) return read.Decided(ws, "decision");
  return read.Self(ws, "no subject of its own");
}

// "What about the noodle place on Judah?", "how about Friday?", "maybe
// 11:30?", "thinking last weekend of the month?", "we could do the Peak
// District?": a suggestion put as a question. It is not a bare question
// ("should we book ahead?" asks the group to decide, and stays one): what
// the speaker proposes is their stance, remembered as "Priya suggests the
// noodle place on Judah" (a proposal the group adopts is its decision,
// which later messages state).
std::optional<ClauseReading> Suggestion(absl::string_view clause, const MessageContext& ctx) {
  std::vector<Word> words = DropHedges(Words(clause));
  if (words.empty()) return std::nullopt;
  const Stripped c = Strip(std::move(words), ctx);
  const std::vector<Word>& ws = c.ws;
  auto opens = [&ws](std::initializer_list<const char*> prefix) {
    if (ws.size() <= prefix.size()) return false;
    size_t i = 0;
    for (const char* w : prefix) {
      if (ws[i++].lower != w) return false;
    }
    return true;
  };
  size_t skip = 0;
  bool group = false;  // "we could ...": the group would do it
  if (opens({"what", "about"}) || opens({"how", "about"})) {
    skip = 2;
  } else if (opens({"why", "don't", "we"})) {
    skip = 3, group = true;
  } else if (opens({"we", "could"}) || opens({"we", "should"}) || opens({"could", "we"})) {
    skip = 2, group = true;
  } else if (opens({"maybe"}) || opens({"perhaps"}) || opens({"thinking"})) {
    skip = 1;
    if (opens({"maybe", "we"}) || opens({"perhaps", "we"})) skip = 2, group = true;
  } else {
    return std::nullopt;
  }
  std::vector<Word> rest(ws.begin() + static_cast<long>(skip), ws.end());
  while (!rest.empty() && In(rest.back().lower, {"maybe", "perhaps", "then", "instead"})) {
    rest.pop_back();
  }
  for (Word& w : rest) w.tail.erase(std::remove(w.tail.begin(), w.tail.end(), '?'), w.tail.end());
  if (rest.empty() || ContentCount(rest) == 0 || In(rest[0].lower, SecondPersonSubject()) ||
      In(rest[0].lower, FirstPersonSubject()) || In(rest[0].lower, ThirdPronoun()) ||
      In(rest[0].lower, Demonstrative())) {
    return std::nullopt;
  }
  const std::string self = ctx.speaker.name.empty() ? ctx.speaker.speaker_id : ctx.speaker.name;
  ClauseReading r;
  r.kind = ClauseReading::Kind::kSelf;
  r.about = ctx.speaker.speaker_id;
  r.utype = "stance";
  r.content = absl::StrCat(self, " suggests ", group ? "the group " : "",
                           Rewrite(rest, self, c.addressee.name));
  r.why = "suggestion";
  return r;
}

// A clause without its markers and address, read.
ClauseReading ReadStripped(const Stripped& c, const MessageContext& ctx) {
  const std::vector<Word>& ws = c.ws;
  if (ws.empty()) return Nothing("filler");
  const std::string w0 = ws[0].lower;
  const std::string w1 = ws.size() > 1 ? ws[1].lower : "";

  // Questions without a question mark ("what happened", "anyone free").
  if (In(w0, QuestionOpeners()) && !In(w1, FirstPersonSubject())) return Nothing("question");
  if (In(w0, Auxiliaries()) &&
      (In(w1, InvertedSubjects()) || (ws.size() > 2 && Member(ws[1], ctx) != nullptr))) {
    return Nothing("question");  // "is Adaora ill"
  }

  if (MomentaryStatus(ws)) return Nothing("momentary status");
  // "Kicking off offsite planning", "Circling back on the budget": talk
  // about the conversation itself.
  if (ws.size() > 1 &&
      In(w0, {"kicking", "circling", "following", "checking", "wrapping", "moving"}) &&
      In(w1, {"off", "back", "up", "in", "on"})) {
    return Nothing("announcement");
  }
  // "Sending the link", "Attaching pics": what the message carries, not a
  // matter of its own (a time makes it a plan: "Sharing the draft tonight").
  if (ws.size() > 1 && ws.size() <= 4 &&
      In(w0, {"sending", "sharing", "attaching", "posting", "forwarding", "dropping"}) &&
      In(ws.back().lower, {"link", "links", "photo", "photos", "pic", "pics", "picture", "pictures",
                           "screenshot", "screenshots", "file", "doc", "it", "them"}) &&
      !HasTime(ws)) {
    return Nothing("what the message carries");
  }
  const bool first_person = HasWord(ws, FirstPersonSubject());
  const size_t content = ContentCount(ws);
  // "Sasha's idea is the right one" is the speaker's stance on it (below).
  const bool endorsed = Endorsed(ws);
  if ((content == 0 || PhaticOnly(ws, ctx)) && !endorsed) return Nothing("acknowledgement");
  // "I know", "I see", "I guess so", "Me probably": an answer or a nod,
  // nothing of its own.
  if (ws.size() <= 3 && w0 == "i" &&
      In(w1, {"know", "see", "guess", "agree", "mean", "understand", "get", "suppose"}) &&
      std::all_of(ws.begin() + 2, ws.end(), [](const Word& w) {
        return In(w.lower, {"so", "it", "that", "right", "too"});
      })) {
    return Nothing("acknowledgement");
  }
  if (ws.size() <= 2 && w0 == "me") return Nothing("short answer");
  // A reaction to what was just said ("That's character development").
  if ((In(w0, Demonstrative()) && !first_person && !StatementNotReaction(ws)) || Appraisal(ws)) {
    return Nothing("reaction");
  }
  // What a person says of themselves ("I'm vegetarian") and a choice made
  // ("Porto it is") are worth one word; anything else needs min_content.
  if (!endorsed &&
      content < (In(w0, FirstPersonSubject()) || ChoiceMade(ws) ? 1 : ctx.min_content)) {
    return Nothing("too little to remember");
  }
  return ReadBySubject(c, ctx);
}

}  // namespace

ClauseReading ReadClause(absl::string_view clause, const MessageContext& ctx) {
  std::string trimmed(absl::StripAsciiWhitespace(clause));
  if (trimmed.empty()) return Nothing("empty");
  // A question is evidence of interest, not a fact (its answer may be one).
  std::vector<Word> raw = Words(trimmed);
  if (ReactionToAThing(raw) || ReactionToNews(raw)) return Nothing("reaction");
  if (CheerOrThanks(raw)) return Nothing("cheer or thanks");
  std::vector<Word> words = DropHedges(std::move(raw));
  if (trimmed.back() == '?') {
    std::optional<ClauseReading> suggestion = Suggestion(trimmed, ctx);
    ClauseReading r = suggestion.has_value() ? *std::move(suggestion) : Nothing("question");
    // "Abi are you ok? you sounded tired": whom the question addresses,
    // the clauses after it address too.
    if (!words.empty()) {
      const Stripped c = Strip(std::move(words), ctx);
      if (c.addressee.speaker_id != ctx.addressee.speaker_id) r.addressed = c.addressee;
    }
    return r;
  }
  if (words.empty()) return Nothing("empty");
  const Stripped c = Strip(std::move(words), ctx);
  ClauseReading r = ReadStripped(c, ctx);
  if (c.addressee.speaker_id != ctx.addressee.speaker_id) r.addressed = c.addressee;
  return r;
}

std::vector<ClauseReading> ReadMessage(absl::string_view text, const MessageContext& message) {
  std::vector<ClauseReading> out;
  MessageContext ctx = message;
  const std::string clean = CleanText(text);
  ctx.own_circle = NamesOwnCircle(Words(clean));
  bool announced = false;  // "Booked!", "Confirmed." announce a decision
  for (const std::string& clause : SplitClauses(clean)) {
    std::vector<Word> ws = Words(clause);
    if (ws.size() == 1 && In(ws[0].lower, DecisionWords())) {
      announced = true;
      out.push_back(Nothing("decision announced"));
      continue;
    }
    // "Emeka. You are coming on Christmas Eve.": a member's name on its own
    // addresses what follows.
    if (const WriterRosterMember* m = ws.size() == 1 ? Member(ws[0], ctx) : nullptr;
        m != nullptr && m->speaker_id != ctx.speaker.speaker_id) {
      ctx.addressee = Speaker{m->speaker_id, NameOf(*m)};
      out.push_back(Nothing("address"));
      continue;
    }
    ClauseReading r = ReadClause(clause, ctx);
    // "Diane, I have been thinking. You don't need ...": whom a clause
    // addresses, the clauses after it address too.
    if (!r.addressed.speaker_id.empty()) ctx.addressee = r.addressed;
    if (announced && r.kind == ClauseReading::Kind::kSelf && !HasWord(ws, FirstPersonSubject())) {
      r.kind = ClauseReading::Kind::kGroupPlan;
      r.about = kGroupOwner;
      r.utype = "decision";
      r.why = "announced decision";
      r = StateDecided(std::move(r));
    }
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace speakermem::writer::offline
