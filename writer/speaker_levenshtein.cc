#include "writer/speaker_levenshtein.h"

#include <algorithm>
#include <array>
#include <limits>
#include <set>
#include <unordered_map>

#include "absl/strings/str_join.h"
#include "common/utf8.h"
#include "text/tokenizer.h"
#include "writer/writer_model.h"

namespace speakermem::writer {

using text::IsCjk;
namespace {

std::u32string Decode(absl::string_view s) {
  std::u32string out;
  size_t pos = 0;
  while (pos < s.size()) {
    int32_t cp = DecodeUtf8(s, &pos);
    out.push_back(static_cast<char32_t>(cp < 0 ? 0xFFFD : cp));
  }
  return out;
}

// A port of difflib.SequenceMatcher's matching for ratio().
class Matcher {
 public:
  Matcher(const std::u32string& a, const std::u32string& b) : a_(a), b_(b) {
    for (size_t j = 0; j < b_.size(); ++j) b2j_[b_[j]].push_back(static_cast<int>(j));
    // autojunk: popular elements of a long b do not start matches.
    if (b_.size() >= 200) {
      const size_t ntest = b_.size() / 100 + 1;
      for (auto it = b2j_.begin(); it != b2j_.end();) {
        it = it->second.size() > ntest ? b2j_.erase(it) : std::next(it);
      }
    }
  }

  size_t MatchedTotal() {
    size_t total = 0;
    std::vector<std::array<int, 4>> queue = {
        {0, static_cast<int>(a_.size()), 0, static_cast<int>(b_.size())}};
    while (!queue.empty()) {
      auto [alo, ahi, blo, bhi] = queue.back();
      queue.pop_back();
      auto [i, j, k] = LongestMatch(alo, ahi, blo, bhi);
      if (k == 0) continue;
      total += static_cast<size_t>(k);
      if (alo < i && blo < j) queue.push_back({alo, i, blo, j});
      if (i + k < ahi && j + k < bhi) queue.push_back({i + k, ahi, j + k, bhi});
    }
    return total;
  }

 private:
  std::tuple<int, int, int> LongestMatch(int alo, int ahi, int blo, int bhi) const {
    int besti = alo, bestj = blo, bestsize = 0;
    std::unordered_map<int, int> j2len, newj2len;
    static const std::vector<int> kNothing;
    for (int i = alo; i < ahi; ++i) {
      newj2len.clear();
      auto found = b2j_.find(a_[i]);
      const std::vector<int>& js = found == b2j_.end() ? kNothing : found->second;
      for (int j : js) {
        if (j < blo) continue;
        if (j >= bhi) break;
        auto prev = j2len.find(j - 1);
        int k = (prev == j2len.end() ? 0 : prev->second) + 1;
        newj2len[j] = k;
        if (k > bestsize) {
          besti = i - k + 1;
          bestj = j - k + 1;
          bestsize = k;
        }
      }
      std::swap(j2len, newj2len);
    }
    // No junk function, so every element may extend a match (popular ones
    // included, as in difflib).
    while (besti > alo && bestj > blo && a_[besti - 1] == b_[bestj - 1]) {
      --besti, --bestj, ++bestsize;
    }
    while (besti + bestsize < ahi && bestj + bestsize < bhi &&
           a_[besti + bestsize] == b_[bestj + bestsize]) {
      ++bestsize;
    }
    return {besti, bestj, bestsize};
  }

  const std::u32string& a_;
  const std::u32string& b_;
  std::unordered_map<char32_t, std::vector<int>> b2j_;
};

std::string NormalizeLayerName(const std::string& layer) {
  std::string n = NormalizeLayer(layer);
  return n.empty() ? layer : n;
}

}  // namespace

std::vector<std::string> NormalizedTokens(absl::string_view text) {
  std::vector<std::string> out;
  std::string cur;
  size_t pos = 0;
  while (pos < text.size()) {
    int32_t cp = DecodeUtf8(text, &pos);
    if (cp >= 'A' && cp <= 'Z') cp += 32;
    if ((cp >= 'a' && cp <= 'z') || (cp >= '0' && cp <= '9')) {
      cur.push_back(static_cast<char>(cp));
      continue;
    }
    if (!cur.empty()) {
      out.push_back(std::move(cur));
      cur.clear();
    }
    if (cp > 0 && IsCjk(cp)) {
      std::string t;
      AppendUtf8(cp, &t);
      out.push_back(std::move(t));
    }
  }
  if (!cur.empty()) out.push_back(std::move(cur));
  return out;
}

double SequenceMatchRatio(const std::u32string& a, const std::u32string& b) {
  if (a.empty() && b.empty()) return 1.0;
  Matcher m(a, b);
  return 2.0 * static_cast<double>(m.MatchedTotal()) / static_cast<double>(a.size() + b.size());
}

double SequenceMatchRatio(absl::string_view a, absl::string_view b) {
  return SequenceMatchRatio(Decode(a), Decode(b));
}

double TokenSetF1(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  std::set<std::string> sa(a.begin(), a.end()), sb(b.begin(), b.end());
  if (sa.empty() || sb.empty()) return 0;
  size_t inter = 0;
  for (const auto& t : sa) inter += sb.count(t);
  if (inter == 0) return 0;
  double p = static_cast<double>(inter) / sa.size();
  double r = static_cast<double>(inter) / sb.size();
  return 2 * p * r / (p + r);
}

double SoftMatch(absl::string_view pred, absl::string_view ref) {
  std::vector<std::string> tp = NormalizedTokens(pred), tr = NormalizedTokens(ref);
  return 0.60 * TokenSetF1(tp, tr) +
         0.40 * SequenceMatchRatio(absl::StrJoin(tp, " "), absl::StrJoin(tr, " "));
}

double MaxWeightMatching(const std::vector<std::vector<double>>& weights, std::vector<int>* match) {
  const int rows = static_cast<int>(weights.size());
  const int cols = rows == 0 ? 0 : static_cast<int>(weights[0].size());
  const int n = std::max(rows, cols);
  if (match != nullptr) match->assign(rows, -1);
  if (n == 0) return 0;
  double maxw = 0;
  for (const auto& r : weights) {
    for (double w : r) maxw = std::max(maxw, w);
  }
  // Hungarian algorithm (potentials), minimising cost = maxw - weight on a
  // square matrix padded with zero-weight cells.
  auto cost = [&](int i, int j) {
    double w = (i < rows && j < cols) ? weights[i][j] : 0.0;
    return maxw - w;
  };
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<double> u(n + 1, 0), v(n + 1, 0);
  std::vector<int> p(n + 1, 0), way(n + 1, 0);
  for (int i = 1; i <= n; ++i) {
    p[0] = i;
    int j0 = 0;
    std::vector<double> minv(n + 1, inf);
    std::vector<bool> used(n + 1, false);
    do {
      used[j0] = true;
      int i0 = p[j0], j1 = 0;
      double delta = inf;
      for (int j = 1; j <= n; ++j) {
        if (used[j]) continue;
        double cur = cost(i0 - 1, j - 1) - u[i0] - v[j];
        if (cur < minv[j]) {
          minv[j] = cur;
          way[j] = j0;
        }
        if (minv[j] < delta) {
          delta = minv[j];
          j1 = j;
        }
      }
      for (int j = 0; j <= n; ++j) {
        if (used[j]) {
          u[p[j]] += delta;
          v[j] -= delta;
        } else {
          minv[j] -= delta;
        }
      }
      j0 = j1;
    } while (p[j0] != 0);
    do {
      int j1 = way[j0];
      p[j0] = p[j1];
      j0 = j1;
    } while (j0 != 0);
  }
  double total = 0;
  for (int j = 1; j <= n; ++j) {
    int i = p[j] - 1, c = j - 1;
    if (i < rows && c < cols && weights[i][c] > 0) {
      total += weights[i][c];
      if (match != nullptr) (*match)[i] = c;
    }
  }
  return total;
}

namespace {

// One owner bucket aligned: the total matched weight, and each predicted
// entry's match (0 when unpaired).
double AlignBucket(const std::vector<const StateEntry*>& ps,
                   const std::vector<const StateEntry*>& rs, std::vector<double>* each) {
  std::vector<std::vector<double>> w(ps.size(), std::vector<double>(rs.size(), 0.0));
  for (size_t i = 0; i < ps.size(); ++i) {
    for (size_t j = 0; j < rs.size(); ++j) {
      // Coordinate gate: owner (the bucket), source and layer must agree.
      if (ps[i]->source != rs[j]->source ||
          NormalizeLayerName(ps[i]->layer) != NormalizeLayerName(rs[j]->layer)) {
        continue;
      }
      w[i][j] = SoftMatch(ps[i]->content, rs[j]->content);
    }
  }
  std::vector<int> match;
  const double total = MaxWeightMatching(w, &match);
  each->assign(ps.size(), 0.0);
  for (size_t i = 0; i < ps.size(); ++i) {
    if (match[i] >= 0) (*each)[i] = w[i][static_cast<size_t>(match[i])];
  }
  return total;
}

using Buckets = std::map<std::string, std::vector<const StateEntry*>>;
Buckets ByOwner(const std::vector<StateEntry>& entries) {
  Buckets b;
  for (const auto& e : entries) b[e.owner].push_back(&e);
  return b;
}

}  // namespace

std::vector<double> AlignedMatches(const std::vector<StateEntry>& pred,
                                   const std::vector<StateEntry>& ref) {
  Buckets pb = ByOwner(pred), rb = ByOwner(ref);
  std::map<const StateEntry*, double> got;
  for (const auto& [owner, ps] : pb) {
    std::vector<double> each;
    AlignBucket(ps, rb[owner], &each);
    for (size_t i = 0; i < ps.size(); ++i) got[ps[i]] = each[i];
  }
  std::vector<double> out;
  out.reserve(pred.size());
  for (const auto& e : pred) out.push_back(got[&e]);
  return out;
}

SpeakerLevenshteinResult SpeakerLevenshtein(const std::vector<StateEntry>& pred,
                                            const std::vector<StateEntry>& ref) {
  SpeakerLevenshteinResult res;
  Buckets pb = ByOwner(pred), rb = ByOwner(ref);
  std::set<std::string> owners;
  for (const auto& [o, v] : pb) owners.insert(o);
  for (const auto& [o, v] : rb) owners.insert(o);
  if (owners.empty()) {
    res.score = res.macro = res.worst = 1.0;
    return res;
  }
  double sum = 0, worst = 1.0;
  for (const auto& owner : owners) {
    const auto& ps = pb[owner];
    const auto& rs = rb[owner];
    std::vector<double> each;
    const double matched = AlignBucket(ps, rs, &each);
    double f = ps.empty() && rs.empty() ? 1.0 : 2.0 * matched / (ps.size() + rs.size());
    res.per_owner[owner] = f;
    sum += f;
    worst = std::min(worst, f);
  }
  res.macro = sum / static_cast<double>(owners.size());
  res.worst = worst;
  res.score = 0.80 * res.macro + 0.20 * res.worst;
  return res;
}

double ChainScore(const std::vector<ChainEdge>& pred, const std::vector<ChainEdge>& ref) {
  if (pred.empty() && ref.empty()) return 1;
  if (pred.empty() || ref.empty()) return 0;
  std::vector<std::vector<double>> w(pred.size(), std::vector<double>(ref.size(), 0.0));
  for (size_t i = 0; i < pred.size(); ++i) {
    for (size_t j = 0; j < ref.size(); ++j) {
      if (pred[i].owner != ref[j].owner ||
          NormalizeLayer(pred[i].layer) != NormalizeLayer(ref[j].layer)) {
        continue;
      }
      w[i][j] = 0.50 * SoftMatch(pred[i].old_content, ref[j].old_content) +
                0.50 * SoftMatch(pred[i].new_content, ref[j].new_content);
    }
  }
  double matched = MaxWeightMatching(w);
  return 2.0 * matched / static_cast<double>(pred.size() + ref.size());
}

double MemoryReward(double speaker_levenshtein, double chain) {
  return 0.80 * speaker_levenshtein + 0.20 * chain;
}

}  // namespace speakermem::writer
