// The paper's evaluation metrics (Appendix, Eqs. 10-12 and the Writer
// rewards), each a pure function so it can be unit-tested on hand-computed
// examples.
#ifndef SPEAKERMEM_EVAL_METRICS_H_
#define SPEAKERMEM_EVAL_METRICS_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "writer/speaker_levenshtein.h"

namespace speakermem::eval {

// token-F1 as the paper's supplementary implementation defines it: both
// strings lower-cased, surrounding whitespace and trailing periods stripped,
// runs of whitespace collapsed, split on whitespace, duplicates removed;
// F1 of the two token sets, 0 when either set or their intersection is
// empty.
double TokenF1(absl::string_view prediction, absl::string_view reference);
// The token set TokenF1 compares (exposed for tests and reports).
std::vector<std::string> AnswerTokenSet(absl::string_view text);

// Evidence recall of one question: the share of `evidence` ids found in
// `retrieved` (duplicates in either count once). 0 for empty evidence.
double EvidenceRecall(const std::vector<std::string>& evidence,
                      const std::vector<std::string>& retrieved);
// Whether any evidence id was retrieved.
bool EvidenceHit(const std::vector<std::string>& evidence,
                 const std::vector<std::string>& retrieved);

struct ConfidenceInterval {
  double lo = 0;
  double hi = 0;
};

// Percentile bootstrap CI of the mean of `units`: `resamples` resamples
// with replacement (std::mt19937_64 seeded with `seed`, so reproducible),
// the (1-level)/2 and (1+level)/2 percentiles of the resampled means
// (linear interpolation between order statistics). {0,0} when empty.
ConfidenceInterval BootstrapMeanCI(const std::vector<double>& units, size_t resamples = 10000,
                                   uint64_t seed = 20260101, double level = 0.95);

// SocialMem aggregate scores: MeanQ weighs every question equally, MeanN
// first averages within each network and then across networks; the CI is
// over the network means (Eq. 12).
struct MeanQN {
  double mean_q = 0;
  double mean_n = 0;
  ConfidenceInterval ci_n;
  size_t questions = 0;
  size_t networks = 0;
};
// `scores`: network id -> item scores in [0, 1]. Networks without items
// are not counted.
MeanQN ComputeMeanQN(const std::map<std::string, std::vector<double>>& scores,
                     size_t resamples = 10000, uint64_t seed = 20260101);

// Multiple-choice scoring: 1 when the answer picks `correct` (an option
// letter such as "B") and no other option, else 0. The answer may give the
// letter ("B", "(B)", "B." or "Answer: B") or the option's full text.
double MultipleChoiceScore(absl::string_view answer, const std::vector<std::string>& options,
                           absl::string_view correct);

// ChainEdge, ChainScore and MemoryReward: writer/speaker_levenshtein.h.

}  // namespace speakermem::eval

#endif  // SPEAKERMEM_EVAL_METRICS_H_
