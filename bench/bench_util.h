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
#include <string>
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

// Parses "--name value" pairs into the matching setters; exits with a
// message on an unknown flag, a missing value or a bad number.
inline void ParseFlags(
    int argc, char** argv,
    const std::map<std::string, std::function<void(const std::string&)>>& flags) {
  for (int i = 1; i < argc; ++i) {
    auto it = flags.find(argv[i]);
    if (it == flags.end() || i + 1 >= argc) {
      std::fprintf(stderr, "%s: unknown flag or missing value: %s\n", argv[0], argv[i]);
      std::exit(2);
    }
    try {
      it->second(argv[++i]);
    } catch (const std::exception&) {
      std::fprintf(stderr, "%s: bad value for %s: %s\n", argv[0], argv[i - 1], argv[i]);
      std::exit(2);
    }
  }
}

inline size_t ToSize(const std::string& s) { return std::stoul(s); }

inline double SecondsSince(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

}  // namespace speakermem::bench

#endif  // SPEAKERMEM_BENCH_BENCH_UTIL_H_
