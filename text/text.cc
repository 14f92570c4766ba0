#include "text/text.h"

#include <cstring>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "text/tokenizer.h"

namespace speakermem::text {

bool IsStopword(absl::string_view token) {
  static const auto* kStop = new absl::flat_hash_set<std::string>{
      "a",      "about",  "above",    "after",      "again",   "against", "all",   "am",
      "an",     "and",    "any",      "are",        "as",      "at",      "be",    "because",
      "been",   "before", "being",    "below",      "between", "both",    "but",   "by",
      "can",    "could",  "did",      "do",         "does",    "doing",   "down",  "during",
      "each",   "few",    "for",      "from",       "further", "had",     "has",   "have",
      "having", "he",     "her",      "here",       "hers",    "herself", "him",   "himself",
      "his",    "how",    "i",        "if",         "in",      "into",    "is",    "it",
      "its",    "itself", "just",     "me",         "more",    "most",    "my",    "myself",
      "nor",    "now",    "of",       "off",        "on",      "once",    "only",  "or",
      "other",  "our",    "ours",     "ourselves",  "out",     "over",    "own",   "same",
      "she",    "should", "so",       "some",       "such",    "than",    "that",  "the",
      "their",  "theirs", "them",     "themselves", "then",    "there",   "these", "they",
      "this",   "those",  "through",  "to",         "too",     "under",   "until", "up",
      "very",   "was",    "we",       "were",       "what",    "when",    "where", "which",
      "while",  "who",    "whom",     "why",        "will",    "with",    "would", "you",
      "your",   "yours",  "yourself", "yourselves", "s",       "t",       "d",     "ll",
      "m",      "re",     "ve",       "don",        "didn",    "doesn",   "isn",   "wasn",
      "won",    "also",   "get",      "got",        "one",     "really",  "yeah",  "yes",
      "oh",     "ok",     "okay",     "let",        "us"};
  return kStop->contains(token);
}

std::vector<std::string> ContentTokens(absl::string_view text) {
  std::vector<std::string> out;
  for (auto& t : Tokenize(text)) {
    if (!IsStopword(t)) out.push_back(std::move(t));
  }
  return out;
}

std::string Stem(const std::string& t) {
  auto ends = [&](const char* suf) {
    size_t n = std::strlen(suf);
    return t.size() > n && t.compare(t.size() - n, n, suf) == 0;
  };
  if (t.size() > 4 && ends("ies")) return t.substr(0, t.size() - 3) + "y";
  if (t.size() > 5 && ends("ing")) return t.substr(0, t.size() - 3);
  if (t.size() > 4 && ends("ed")) return t.substr(0, t.size() - 2);
  if (t.size() > 4 && (ends("ches") || ends("shes") || ends("sses") || ends("xes"))) {
    return t.substr(0, t.size() - 2);
  }
  if (t.size() > 3 && ends("s") && !ends("ss") && !ends("us") && !ends("is")) {
    return t.substr(0, t.size() - 1);
  }
  return t;
}

std::vector<std::string> StemmedTokens(absl::string_view text) {
  std::vector<std::string> out = Tokenize(text);
  for (auto& t : out) t = Stem(t);
  return out;
}

int FindTokenRun(const std::vector<std::string>& haystack, const std::vector<std::string>& needle) {
  if (needle.empty() || needle.size() > haystack.size()) return -1;
  for (size_t i = 0; i + needle.size() <= haystack.size(); ++i) {
    bool match = true;
    for (size_t j = 0; j < needle.size() && match; ++j) match = haystack[i + j] == needle[j];
    if (match) return static_cast<int>(i);
  }
  return -1;
}

uint64_t Fnv1a64(absl::string_view s, uint64_t seed) {
  uint64_t h = 1469598103934665603ull ^ (seed * 1099511628211ull);
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

std::string NormalizeContent(absl::string_view content) {
  std::string out;
  bool space = false;
  for (unsigned char c : content) {
    if (absl::ascii_isalnum(c) || c >= 0x80) {
      if (space && !out.empty()) out.push_back(' ');
      out.push_back(static_cast<char>(absl::ascii_tolower(c)));
      space = false;
    } else {
      space = true;
    }
  }
  return out;
}

}  // namespace speakermem::text
