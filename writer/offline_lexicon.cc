#include "writer/offline_lexicon.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"

namespace speakermem::writer::offline {

// Discourse markers, interjections and reactions that open a clause and carry
// nothing of its matter.
const Set& Markers() {
  static const auto* s = new Set{
      "yeah",      "yes",        "yep",        "yup",       "ya",       "yea",       "no",
      "nah",       "nope",       "ok",         "okay",      "k",        "oh",        "ah",
      "aw",        "aww",        "well",       "so",        "anyway",   "anyways",   "honestly",
      "haha",      "hahaha",     "hah",        "ha",        "lol",      "lmao",      "omg",
      "wow",       "ugh",        "hmm",        "hm",        "fair",     "exactly",   "true",
      "right",     "sure",       "cool",       "nice",      "great",    "totally",   "absolutely",
      "agreed",    "ironically", "also",       "but",       "and",      "plus",      "oof",
      "whoa",      "yikes",      "damn",       "dang",      "welp",     "alright",   "hey",
      "hi",        "hello",      "thanks",     "thank",     "same",     "guilty",    "noted",
      "correct",   "indeed",     "definitely", "legend",    "classic",  "seriously", "literally",
      "basically", "tbh",        "ngl",        "btw",       "anyhow",   "look",      "listen",
      "guys",      "folks",      "everyone",   "all",       "um",       "uh",        "gosh",
      "wait",      "hmmm",       "bro",        "mate",      "dude",     "then",      "obviously",
      "course",    "of",         "maybe",      "perhaps",   "probably", "sorry",     "ooh",
      "oooh",      "perfect",    "lovely",     "brilliant", "amazing",  "awesome",   "excellent",
      "wonderful", "fab",        "fantastic"};
  return *s;
}

// Words that make up greetings, thanks, acknowledgements and reactions.
const Set& Phatic() {
  static const auto* s =
      new Set{"good",     "morning",   "afternoon",  "evening", "night",    "hi",
              "hello",    "hey",       "thanks",     "thank",   "welcome",  "bye",
              "cheers",   "everyone",  "everybody",  "guys",    "folks",    "lol",
              "haha",     "great",     "nice",       "cool",    "sure",     "yep",
              "yes",      "np",        "sounds",     "awesome", "congrats", "congratulations",
              "see",      "later",     "soon",       "gm",      "love",     "amazing",
              "perfect",  "brilliant", "lovely",     "fun",     "wow",      "omg",
              "legend",   "exactly",   "fair",       "point",   "true",     "agreed",
              "agree",    "totally",   "definitely", "ha",      "lmao",     "hahaha",
              "noted",    "deal",      "done",       "works",   "fine",     "okay",
              "ok",       "yay",       "woo",        "idea",    "glad",     "hear",
              "happy",    "miss",      "missed",     "xx",      "x",        "well",
              "enjoy",    "luck",      "worries",    "problem", "course",   "absolutely",
              "bad",      "shame",     "oh",         "no",      "sad",      "sorry",
              "ugh",      "hope",      "hopefully",  "indeed",  "right",    "darling",
              "darlings", "dear",      "dears",      "loves",   "lovelies", "fam",
              "team",     "friends",   "crew",       "gang",    "people"};
  return *s;
}

const Set& FirstPersonSubject() {
  static const auto* s = new Set{"i", "i'm", "im", "i've", "ive", "i'd", "i'll", "my", "me"};
  return *s;
}
const Set& SecondPersonSubject() {
  static const auto* s =
      new Set{"you", "you're", "youre", "you've", "you'll", "you'd", "your", "u", "ur"};
  return *s;
}
const Set& GroupSubject() {
  static const auto* s = new Set{"we",   "we're", "we'll", "we've",    "we'd",      "let's",
                                 "lets", "us",    "our",   "everyone", "everybody", "everyone's"};
  return *s;
}
const Set& ThirdPronoun() {
  static const auto* s =
      new Set{"he",      "she",   "they",   "he's", "she's", "they're", "they've",
              "they'll", "he'll", "she'll", "him",  "her",   "them"};
  return *s;
}
const Set& Demonstrative() {
  static const auto* s = new Set{"that",   "that's", "thats", "this", "sounds", "looks",
                                 "what's", "whats",  "it's",  "its",  "there's"};
  return *s;
}
const Set& QuestionOpeners() {
  static const auto* s = new Set{"what",  "who",    "where",   "when",  "why",   "how",
                                 "which", "anyone", "anybody", "whose", "wanna", "want"};
  return *s;
}
const Set& WhWords() {
  static const auto* s = new Set{"what", "who", "where", "when", "why", "how", "which"};
  return *s;
}
const Set& Auxiliaries() {
  static const auto* s = new Set{
      "do",     "does",  "did",  "are", "is",  "was", "were",  "can", "could", "would",  "will",
      "should", "shall", "have", "has", "had", "may", "might", "am",  "isn't", "aren't", "don't"};
  return *s;
}
const Set& InvertedSubjects() {
  static const auto* s =
      new Set{"you",      "we",       "i",       "they", "he", "she", "it",    "anyone",
              "everyone", "somebody", "someone", "a",    "an", "the", "this",  "that",
              "there",    "your",     "our",     "any",  "u",  "ya",  "people"};
  return *s;
}
const Set& PlanCues() {
  static const auto* s =
      new Set{"will",   "we'll",  "should", "shall", "need",     "needs",     "must",   "going",
              "gonna",  "let's",  "lets",   "plan",  "planning", "book",      "meet",   "decided",
              "decide", "agreed", "agree",  "vote",  "schedule", "scheduled", "booked", "moving",
              "move",   "moves",  "moved",  "pick",  "try",      "do",        "have",   "keep",
              "make",   "start",  "stick",  "go",    "get",      "bring",     "meeting"};
  return *s;
}
const Set& DecisionWords() {
  static const auto* s = new Set{"decided",   "decision",  "agreed",    "settled",     "booked",
                                 "confirmed", "scheduled", "final",     "finalised",   "finalized",
                                 "deadline",  "chosen",    "postponed", "rescheduled", "moves"};
  return *s;
}
const Set& NormWords() {
  static const auto* s = new Set{"always", "never",  "usually",  "rule",  "rules", "tradition",
                                 "norm",   "policy", "whenever", "every", "each",  "traditionally"};
  return *s;
}
const Set& StanceWords() {
  static const auto* s = new Set{
      "prefer", "prefers", "like",   "likes",     "love",     "loves",    "hate",    "hates",
      "rather", "think",   "thinks", "feel",      "feels",    "want",     "wants",   "enjoy",
      "enjoys", "believe", "vote",   "favourite", "favorite", "wish",     "worried", "excited",
      "happy",  "against", "hope",   "fan",       "dislike",  "dislikes", "mind",    "keen"};
  return *s;
}
const Set& ViewVerbs() {
  static const auto* s =
      new Set{"think",   "believe", "heard", "feel", "guess", "bet",    "suspect",
              "noticed", "reckon",  "know",  "hear", "saw",   "thought"};
  return *s;
}

const Set& AfterAddress() {
  static const auto* s =
      new Set{"we",     "we're",  "we'll", "we've", "that",    "that's",  "thats",
              "this",   "it",     "it's",  "its",   "there",   "there's", "thank",
              "thanks", "please", "the",   "they",  "they're", "a",       "an"};
  return *s;
}

const Set& SeveralAddressees() {
  static const auto* s = new Set{"two", "both", "all", "guys", "lot", "three", "lads", "people"};
  return *s;
}

const Set& ClauseOpeners() {
  static const auto* s =
      new Set{"that",     "if",     "when",    "because", "unless",  "until", "know",  "whenever",
              "once",     "while",  "since",   "before",  "after",   "so",    "knows", "think",
              "thinks",   "hope",   "hopes",   "guess",   "guesses", "bet",   "bets",  "believe",
              "believes", "reckon", "reckons", "glad",    "sorry",   "sure",  "proud", "happy",
              "what",     "where",  "how",     "why",     "who"};
  return *s;
}

// Kinship and endearment terms used to address someone ("Mum, ...") when no
// member of the roster goes by them.
const Set& Endearments() {
  static const auto* s =
      new Set{"love", "loves", "darling", "darlings", "dear", "dears", "sweetheart", "dearest"};
  return *s;
}
const Set& KinVocatives() {
  static const auto* s = new Set{
      "mum",      "mom",    "mummy", "mommy",  "mam",     "ma",      "mama", "dad", "daddy",
      "papa",     "pops",   "sis",   "sister", "bro",     "babe",    "baby", "hun", "darling",
      "darlings", "auntie", "aunty", "uncle",  "grandma", "grandpa", "nan",  "gran"};
  return *s;
}

// Common verbs in their base form: a clause opening with one is an
// imperative, advice or a request to the person addressed.
const Set& ThirdPersonVerbs() {
  static const auto* s =
      new Set{"is",    "was", "has",   "had",    "does",  "did",   "says",  "said",  "will",
              "would", "can", "could", "thinks", "wants", "knows", "loves", "likes", "needs"};
  return *s;
}
const Set& ClauseEnders() {
  static const auto* s =
      new Set{"it",    "this",    "that", "too",     "though", "again", "then",  "now",
              "today", "tonight", "yet",  "already", "anyway", "here",  "there", "me"};
  return *s;
}
const Set& TakesAPerson() {
  static const auto* s = new Set{
      "told",   "tell",    "ask",  "asked",  "thank",  "thanks",    "love",   "miss",    "met",
      "meet",   "saw",     "see",  "call",   "called", "text",      "texted", "invite",  "invited",
      "blame",  "trust",   "help", "helped", "join",   "owe",       "pay",    "paid",    "give",
      "gave",   "send",    "sent", "ping",   "follow", "tag",       "beat",   "ditched", "hug",
      "hugged", "backing", "back", "knows",  "know",   "including", "plus"};
  return *s;
}
const Set& DroppedIVerbs() {
  static const auto* s =
      new Set{"prefer", "hate", "hated", "need", "needed", "want", "wanted", "got", "had", "didn't",
              "can't", "won't", "couldn't", "haven't", "will", "forgot", "managed",
              // past verbs of what one did: "Lost my job", "Took a trip to Rome"
              "lost", "took", "started", "finished", "bought", "visited", "joined", "quit",
              "signed", "went"};
  return *s;
}
const Set& DroppedImVerbs() {
  static const auto* s = new Set{
      "going",    "heading", "asking",   "thinking", "trying",   "hoping", "looking",  "working",
      "planning", "leaning", "building", "getting",  "bringing", "doing",  "coming",   "taking",
      "waiting",  "reading", "watching", "cooking",  "figuring", "saving", "studying", "learning"};
  return *s;
}
const Set& ImperativeVerbs() {
  static const auto* s = new Set{
      "ask",      "bring",   "book",  "buy",   "call",    "calm",    "check", "choose",   "come",
      "consider", "decide",  "don't", "dont",  "drink",   "eat",     "enjoy", "find",     "forget",
      "get",      "give",    "go",    "grab",  "hold",    "ignore",  "join",  "keep",     "leave",
      "listen",   "look",    "make",  "pick",  "put",     "read",    "relax", "remember", "rest",
      "save",     "say",     "send",  "show",  "skip",    "sleep",   "sort",  "spend",    "stay",
      "stop",     "submit",  "take",  "tell",  "text",    "treat",   "trust", "try",      "use",
      "wait",     "watch",   "write", "be",    "believe", "breathe", "chill", "stick",    "share",
      "shout",    "message", "drop",  "swing", "pop",     "let"};
  return *s;
}

const Set& Hedges() {
  static const auto* s = new Set{"just",      "actually",  "honestly",   "really",    "genuinely",
                                 "literally", "basically", "totally",    "seriously", "obviously",
                                 "ngl",       "tbh",       "lol",        "haha",      "lmao",
                                 "though",    "tho",       "absolutely", "truly",     "kinda"};
  return *s;
}

// Words that may sit between a subject and its verb ("I actually enjoy").
bool IsAdverb(const std::string& w) {
  static const Set kAdverbs = {
      "actually",  "still",      "also",       "just",   "really",    "never",    "always",
      "already",   "definitely", "usually",    "often",  "sometimes", "honestly", "probably",
      "totally",   "mostly",     "only",       "even",   "kinda",     "finally",  "secretly",
      "literally", "basically",  "apparently", "now",    "then",      "def",      "defo",
      "clearly",   "absolutely", "barely",     "rarely", "seriously"};
  return kAdverbs.contains(w) || (w.size() > 4 && absl::EndsWith(w, "ly"));
}

// The verb form after a third-person subject ("have" -> "has").
std::string ThirdPersonVerb(const std::string& verb) {
  static const Set kKeep = {
      "can",      "could",     "will",   "would",  "shall",   "should",  "must",     "might",
      "may",      "did",       "was",    "had",    "used",    "can't",   "couldn't", "won't",
      "wouldn't", "shouldn't", "didn't", "wasn't", "hadn't",  "mustn't", "found",    "went",
      "said",     "made",      "got",    "saw",    "took",    "came",    "thought",  "left",
      "told",     "felt",      "knew",   "bought", "brought", "ran",     "won",      "lost",
      "met",      "sent",      "spent",  "kept",   "began",   "wrote",   "ate",      "gave",
      "heard",    "paid",      "put",    "read",   "set",     "sat",     "stood",    "understood",
      "forgot",   "chose",     "drove",  "flew",   "grew",    "to",      "not",      "never",
      "cannot",   "fell",      "held",   "led",    "meant",   "slept",   "spoke",    "broke",
      "woke",     "wore",      "swam",   "sang",   "drank",   "fought",  "caught",   "taught",
      "sold",     "built",     "lent",   "became", "forgave", "bit",     "hid",      "shook",
      "threw",    "drew",      "dug",    "stuck",  "struck",  "swore",   "tore",     "rode",
      "ought"};
  if (verb == "am" || verb == "are") return "is";
  if (verb == "gotta") return "has to";  // "I gotta tell you": "Jon has to tell ..."
  if (verb == "wanna") return "wants to";
  if (verb == "were") return "was";
  if (verb == "have") return "has";
  if (verb == "do") return "does";
  if (verb == "go") return "goes";
  if (verb == "don't") return "doesn't";
  if (verb == "haven't") return "hasn't";
  if (verb == "aren't") return "isn't";
  if (verb == "weren't") return "wasn't";
  if (kKeep.contains(verb) || verb.empty() || !absl::ascii_isalpha(verb[0])) return verb;
  if (verb.find_first_of("'-") != std::string::npos || IsAdverb(verb)) return verb;
  if (verb.size() >= 2 && (verb.back() == 's' || verb.back() == 'x' || verb.back() == 'o' ||
                           absl::EndsWith(verb, "sh") || absl::EndsWith(verb, "ch"))) {
    return verb + "es";
  }
  if (verb.size() >= 2 && verb.back() == 'y' &&
      std::string("aeiou").find(verb[verb.size() - 2]) == std::string::npos) {
    return verb.substr(0, verb.size() - 1) + "ies";
  }
  // "need", "feed" are present tense; "moved", "booked" past.
  if ((absl::EndsWith(verb, "ed") && !absl::EndsWith(verb, "eed")) || absl::EndsWith(verb, "ing")) {
    return verb;
  }
  return verb + "s";
}

bool IsTimeWord(const std::string& w) {
  static const Set kTime = {"monday",    "tuesday",  "wednesday", "thursday",  "friday",
                            "saturday",  "sunday",   "weekend",   "tonight",   "tomorrow",
                            "noon",      "midnight", "january",   "february",  "march",
                            "april",     "june",     "july",      "august",    "september",
                            "october",   "november", "december",  "morning",   "evening",
                            "afternoon", "mondays",  "fridays",   "saturdays", "sundays"};
  if (kTime.contains(w)) return true;
  // "7pm", "8:30am", "11:30"
  size_t digits = 0;
  while (digits < w.size() && (absl::ascii_isdigit(w[digits]) || w[digits] == ':')) ++digits;
  if (digits == 0) return false;
  std::string rest = w.substr(digits);
  return rest == "am" || rest == "pm" || (rest.empty() && w.find(':') != std::string::npos);
}

}  // namespace speakermem::writer::offline
