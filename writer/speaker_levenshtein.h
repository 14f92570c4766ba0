// SpeakerLevenshtein (paper, Appendix E): how close a predicted derived
// state is to a reference one, owner by owner. Despite the name it uses no
// edit distance: records match softly (0.60 token-F1 + 0.40 difflib
// sequence-match ratio on normalised tokens) only when owner, source and
// layer agree, one-to-one by maximum-weight (Hungarian) alignment within each
// owner bucket (GROUP is a bucket of its own); the score is 0.80 x the macro
// average of the per-owner soft F1 + 0.20 x the worst owner's.
#ifndef SPEAKERMEM_WRITER_SPEAKER_LEVENSHTEIN_H_
#define SPEAKERMEM_WRITER_SPEAKER_LEVENSHTEIN_H_

#include <map>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace speakermem::writer {

struct StateEntry {
  std::string owner;
  std::string source;
  std::string layer;  // code or paper name; compared after normalisation
  std::string content;
};

// Lower-cased [a-z0-9]+ spans and single CJK characters, in order.
std::vector<std::string> NormalizedTokens(absl::string_view text);

// Python's difflib.SequenceMatcher(None, a, b).ratio() on code points,
// autojunk heuristic included (for b of 200+ elements, elements occurring
// more than 1% + 1 times are not used to start matches).
double SequenceMatchRatio(const std::u32string& a, const std::u32string& b);
// Same on UTF-8 text (decoded to code points).
double SequenceMatchRatio(absl::string_view a, absl::string_view b);

// Token-set F1 of two token lists; 0 when either set or the overlap is empty.
double TokenSetF1(const std::vector<std::string>& a, const std::vector<std::string>& b);

// The soft content match of two contents: 0.60 token-F1 + 0.40 ratio of the
// normalised tokens joined with single spaces.
double SoftMatch(absl::string_view pred, absl::string_view ref);

// Maximum-weight one-to-one assignment; returns the total weight and fills
// `match` (row -> column or -1). Weights must be >= 0.
double MaxWeightMatching(const std::vector<std::vector<double>>& weights,
                         std::vector<int>* match = nullptr);

struct SpeakerLevenshteinResult {
  double score = 0;
  double macro = 0;
  double worst = 0;
  std::map<std::string, double> per_owner;  // soft F1 per owner bucket
};

// The soft match each entry of `pred` gets in the alignment the score uses
// (owner bucket, source and layer gates, one-to-one maximum weight); 0 for
// an entry left unpaired. Index i is pred[i].
std::vector<double> AlignedMatches(const std::vector<StateEntry>& pred,
                                   const std::vector<StateEntry>& ref);

// Scores `pred` against `ref`. Both empty: score 1. Owners are the union of
// both states' owners.
SpeakerLevenshteinResult SpeakerLevenshtein(const std::vector<StateEntry>& pred,
                                            const std::vector<StateEntry>& ref);

// An UPDATE edge of a derived state: the old and the new content of one
// record chain step, with the coordinates that gate a match.
struct ChainEdge {
  std::string owner;
  std::string layer;
  std::string old_content;
  std::string new_content;
};
// The chain score: predicted and reference edges match only when owner and
// layer agree, with weight 0.50 x SoftMatch(old) + 0.50 x SoftMatch(new);
// one-to-one maximum-weight alignment; soft F1 = 2M / (|P| + |R|). 1 when
// both have no edges.
double ChainScore(const std::vector<ChainEdge>& pred, const std::vector<ChainEdge>& ref);

// The memory reward: 0.80 x SpeakerLevenshtein + 0.20 x chain score.
double MemoryReward(double speaker_levenshtein, double chain);

}  // namespace speakermem::writer

#endif  // SPEAKERMEM_WRITER_SPEAKER_LEVENSHTEIN_H_
