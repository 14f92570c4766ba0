#include "eval/metrics.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <random>
#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/str_split.h"
#include "writer/speaker_levenshtein.h"
#include "writer/writer_model.h"

namespace speakermem::eval {

std::vector<std::string> AnswerTokenSet(absl::string_view text) {
  std::string s = absl::AsciiStrToLower(text);
  // Strip surrounding whitespace, then trailing periods (and any whitespace
  // they exposed).
  absl::string_view v = absl::StripAsciiWhitespace(s);
  while (!v.empty() &&
         (v.back() == '.' || absl::ascii_isspace(static_cast<unsigned char>(v.back())))) {
    v.remove_suffix(1);
  }
  std::set<std::string> set;
  for (absl::string_view t : absl::StrSplit(v, absl::ByAnyChar(" \t\n\r\f\v"), absl::SkipEmpty())) {
    set.insert(std::string(t));
  }
  return std::vector<std::string>(set.begin(), set.end());
}

double TokenF1(absl::string_view prediction, absl::string_view reference) {
  std::vector<std::string> a = AnswerTokenSet(prediction);
  std::vector<std::string> g = AnswerTokenSet(reference);
  if (a.empty() || g.empty()) return 0;
  std::vector<std::string> both;
  std::set_intersection(a.begin(), a.end(), g.begin(), g.end(), std::back_inserter(both));
  if (both.empty()) return 0;
  double p = static_cast<double>(both.size()) / static_cast<double>(a.size());
  double r = static_cast<double>(both.size()) / static_cast<double>(g.size());
  return 2 * p * r / (p + r);
}

double EvidenceRecall(const std::vector<std::string>& evidence,
                      const std::vector<std::string>& retrieved) {
  std::set<std::string> want(evidence.begin(), evidence.end());
  if (want.empty()) return 0;
  std::set<std::string> got(retrieved.begin(), retrieved.end());
  size_t found = 0;
  for (const auto& id : want) found += got.count(id);
  return static_cast<double>(found) / static_cast<double>(want.size());
}

bool EvidenceHit(const std::vector<std::string>& evidence,
                 const std::vector<std::string>& retrieved) {
  std::set<std::string> got(retrieved.begin(), retrieved.end());
  return std::any_of(evidence.begin(), evidence.end(),
                     [&](const std::string& id) { return got.count(id) > 0; });
}

namespace {

double Percentile(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0;
  double pos = q * static_cast<double>(sorted.size() - 1);
  size_t lo = static_cast<size_t>(std::floor(pos));
  size_t hi = std::min(sorted.size() - 1, lo + 1);
  double frac = pos - static_cast<double>(lo);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * frac;
}

}  // namespace

ConfidenceInterval BootstrapMeanCI(const std::vector<double>& units, size_t resamples,
                                   uint64_t seed, double level) {
  if (units.empty() || resamples == 0) return {};
  std::mt19937_64 rng(seed);
  const uint64_t n = units.size();
  std::vector<double> means;
  means.reserve(resamples);
  for (size_t r = 0; r < resamples; ++r) {
    double sum = 0;
    // Unbiased index draws without std::uniform_int_distribution, whose
    // algorithm differs between standard libraries: rejection sampling on
    // the raw 64-bit output keeps the result identical everywhere.
    const uint64_t limit = UINT64_MAX - UINT64_MAX % n;
    for (uint64_t i = 0; i < n; ++i) {
      uint64_t x;
      do {
        x = rng();
      } while (x >= limit);
      sum += units[x % n];
    }
    means.push_back(sum / static_cast<double>(n));
  }
  std::sort(means.begin(), means.end());
  return {Percentile(means, (1 - level) / 2), Percentile(means, (1 + level) / 2)};
}

MeanQN ComputeMeanQN(const std::map<std::string, std::vector<double>>& scores, size_t resamples,
                     uint64_t seed) {
  MeanQN out;
  double all = 0;
  std::vector<double> network_means;
  for (const auto& [network, items] : scores) {
    if (items.empty()) continue;
    double sum = 0;
    for (double s : items) sum += s;
    all += sum;
    out.questions += items.size();
    network_means.push_back(sum / static_cast<double>(items.size()));
  }
  out.networks = network_means.size();
  if (out.questions == 0) return out;
  out.mean_q = all / static_cast<double>(out.questions);
  double sum_n = 0;
  for (double m : network_means) sum_n += m;
  out.mean_n = sum_n / static_cast<double>(network_means.size());
  out.ci_n = BootstrapMeanCI(network_means, resamples, seed);
  return out;
}

namespace {

// "B", "(B)", "B.", "B)", "Answer: B", "b" -> 'B'; 0 when no single letter.
char OptionLetter(absl::string_view answer, size_t options) {
  std::string s = absl::AsciiStrToUpper(absl::StripAsciiWhitespace(answer));
  for (const char* prefix : {"ANSWER:", "ANSWER IS", "OPTION"}) {
    if (s.rfind(prefix, 0) == 0)
      s = std::string(absl::StripAsciiWhitespace(s.substr(strlen(prefix))));
  }
  // "C: text", "C. text", "C) text": the letter leads.
  if (s.size() >= 2 && s[0] >= 'A' && s[0] < 'A' + static_cast<int>(options) &&
      (s[1] == ':' || s[1] == '.' || s[1] == ')') && (s.size() == 2 || s[2] == ' ')) {
    return s[0];
  }
  std::string letters;
  for (char c : s) {
    if (c == '(' || c == ')' || c == '.' || c == ':' || c == ' ') continue;
    letters.push_back(c);
  }
  if (letters.size() == 1 && letters[0] >= 'A' && letters[0] < 'A' + static_cast<int>(options)) {
    return letters[0];
  }
  return 0;
}

}  // namespace

double MultipleChoiceScore(absl::string_view answer, const std::vector<std::string>& options,
                           absl::string_view correct) {
  if (correct.empty()) return 0;
  const char want = absl::ascii_toupper(static_cast<unsigned char>(correct.front()));
  if (char c = OptionLetter(answer, options.size())) return c == want ? 1 : 0;
  // The full text of exactly one option.
  std::string a = absl::AsciiStrToLower(absl::StripAsciiWhitespace(answer));
  while (!a.empty() && a.back() == '.') a.pop_back();
  int picked = -1, count = 0;
  for (size_t i = 0; i < options.size(); ++i) {
    std::string o = absl::AsciiStrToLower(absl::StripAsciiWhitespace(options[i]));
    // Options may carry their letter: "B. text", "B) text", "B: text".
    if (o.size() > 3 && o[0] >= 'a' && o[0] <= 'z' && (o[1] == '.' || o[1] == ')' || o[1] == ':') &&
        o[2] == ' ') {
      o = o.substr(3);
    }
    while (!o.empty() && o.back() == '.') o.pop_back();
    if (!o.empty() && a.find(o) != std::string::npos) {
      picked = static_cast<int>(i);
      ++count;
    }
  }
  return count == 1 && 'A' + picked == want ? 1 : 0;
}

}  // namespace speakermem::eval
