// Shared helpers of the benchmarks: a synthetic multi-party corpus and
// latency summaries.
#ifndef SPEAKERMEM_BENCH_BENCH_UTIL_H_
#define SPEAKERMEM_BENCH_BENCH_UTIL_H_

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace speakermem::bench {

// Zipf-distributed words over a fixed synthetic vocabulary, so posting lists
// have the skew of real chat (a few very common words, a long tail).
class Corpus {
 public:
  explicit Corpus(uint64_t seed, size_t vocabulary = 20000) : rng_(seed) {
    static const char* kSyll[] = {"ka", "lo", "mi", "ra", "te", "su", "no", "vi", "pe", "do",
                                  "an", "er", "is", "ul", "om", "ba", "ci", "fu", "ge", "ho"};
    for (size_t i = 0; i < vocabulary; ++i) {
      std::string w;
      size_t x = i + 1;
      while (x > 0) {
        w += kSyll[x % 20];
        x /= 20;
      }
      words_.push_back(w);
    }
    double sum = 0;
    for (size_t i = 0; i < vocabulary; ++i) {
      sum += 1.0 / std::pow(static_cast<double>(i + 1), 1.05);
      cdf_.push_back(sum);
    }
    for (double& c : cdf_) c /= sum;
  }

  std::string Word() {
    double u = std::uniform_real_distribution<double>(0, 1)(rng_);
    size_t i = static_cast<size_t>(std::lower_bound(cdf_.begin(), cdf_.end(), u) - cdf_.begin());
    return words_[std::min(i, words_.size() - 1)];
  }

  std::string Sentence(int min_words, int max_words) {
    int n = std::uniform_int_distribution<int>(min_words, max_words)(rng_);
    std::string s;
    for (int i = 0; i < n; ++i) {
      if (i) s += ' ';
      s += Word();
    }
    return s;
  }

  std::mt19937_64& rng() { return rng_; }

 private:
  std::mt19937_64 rng_;
  std::vector<std::string> words_;
  std::vector<double> cdf_;
};

struct Latency {
  double p50_ms = 0, p99_ms = 0, mean_ms = 0, max_ms = 0;
};

inline Latency Summarize(std::vector<double> ms) {
  Latency l;
  if (ms.empty()) return l;
  std::sort(ms.begin(), ms.end());
  auto pct = [&](double p) {
    size_t i = static_cast<size_t>(std::ceil(p * static_cast<double>(ms.size()))) - 1;
    return ms[std::min(i, ms.size() - 1)];
  };
  l.p50_ms = pct(0.50);
  l.p99_ms = pct(0.99);
  l.max_ms = ms.back();
  double sum = 0;
  for (double v : ms) sum += v;
  l.mean_ms = sum / static_cast<double>(ms.size());
  return l;
}

// A flag's target: a count, an int or a text.
using FlagTarget = std::variant<size_t*, int*, std::string*>;

// Parses "--name value" pairs into their targets (the table, in order, is
// every benchmark's flag list); --help prints the flags with their
// defaults. Exits with a message on an unknown flag, a missing value or a
// bad number.
inline void ParseFlags(int argc, char** argv,
                       const std::vector<std::pair<std::string, FlagTarget>>& flags) {
  auto show = [](const FlagTarget& t) {
    if (auto* z = std::get_if<size_t*>(&t)) return std::to_string(**z);
    if (auto* n = std::get_if<int*>(&t)) return std::to_string(**n);
    return "\"" + *std::get<std::string*>(t) + "\"";
  };
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--help") {
      std::printf("usage: %s", argv[0]);
      for (const auto& [name, target] : flags) std::printf(" [%s N]", name.c_str());
      std::printf("\n");
      for (const auto& [name, target] : flags) {
        std::printf("  %-20s default %s\n", name.c_str(), show(target).c_str());
      }
      std::exit(0);
    }
    auto it =
        std::find_if(flags.begin(), flags.end(), [&](const auto& f) { return f.first == argv[i]; });
    if (it == flags.end() || i + 1 >= argc) {
      std::fprintf(stderr, "%s: unknown flag or missing value: %s (--help lists them)\n", argv[0],
                   argv[i]);
      std::exit(2);
    }
    const std::string value = argv[++i];
    try {
      if (auto* z = std::get_if<size_t*>(&it->second)) {
        if (value.empty() || value[0] == '-') throw std::invalid_argument("negative");
        **z = std::stoul(value);
      } else if (auto* n = std::get_if<int*>(&it->second)) {
        **n = std::stoi(value);
      } else {
        *std::get<std::string*>(it->second) = value;
      }
    } catch (const std::exception&) {
      std::fprintf(stderr, "%s: bad value for %s: %s\n", argv[0], argv[i - 1], argv[i]);
      std::exit(2);
    }
  }
}

inline double SecondsSince(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

}  // namespace speakermem::bench

#endif  // SPEAKERMEM_BENCH_BENCH_UTIL_H_
