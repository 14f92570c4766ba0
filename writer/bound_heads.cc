#include "writer/bound_heads.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <string>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "text/text.h"

namespace speakermem::writer {

using text::IsStopword;
using text::StemmedTokens;

std::vector<WriterHead> BoundHeads(const ValidationContext& ctx, const Segment& seg,
                                   const recordindex::RecordIndex* index,
                                   const WriterOptions& options) {
  std::set<std::string> speakers;
  std::string text;
  for (const auto& m : seg.messages) {
    speakers.insert(m.speaker_id);
    absl::StrAppend(&text, m.text, " ");
  }
  std::vector<std::string> seg_tokens = StemmedTokens(text);
  absl::flat_hash_set<std::string> seg_set(seg_tokens.begin(), seg_tokens.end());
  // Candidates: heads sharing a word with the segment, plus the most recent
  // heads of its speakers and of GROUP.
  constexpr size_t kRecent = 32;
  struct Ranked {
    int tier;  // 0: a segment speaker's or GROUP's; 1: others
    double sim;
    const storage::Record* r;
  };
  std::vector<Ranked> ranked;
  // Overlap of a head's words with the segment's, over the head's words.
  auto rank = [&](const storage::Record& r, const std::vector<std::string>& toks) {
    if (!r.active()) return;
    double overlap = 0;
    for (const auto& t : toks) overlap += seg_set.contains(t);
    double sim = toks.empty() ? 0 : overlap / static_cast<double>(toks.size());
    int tier = speakers.count(r.owner) || r.owner == kGroupOwner ? 0 : 1;
    ranked.push_back(Ranked{tier, sim, &r});
  };
  if (index != nullptr) {
    // Rarest words first; words on more than a tenth of the heads say
    // little about which ones matter, and a few hundred candidates suffice.
    constexpr size_t kMaxCandidates = 400;
    std::vector<const std::vector<size_t>*> lists;
    const size_t common = std::max<size_t>(50, index->head_count / 10);
    for (const auto& tok : seg_set) {
      if (IsStopword(tok)) continue;
      auto p = index->postings.find(tok);
      if (p != index->postings.end() && !p->second.empty() && p->second.size() <= common) {
        lists.push_back(&p->second);
      }
    }
    std::sort(lists.begin(), lists.end(),
              [](const auto* a, const auto* b) { return a->size() < b->size(); });
    absl::flat_hash_set<size_t> candidates;
    for (const auto* l : lists) {
      if (candidates.size() >= kMaxCandidates) break;
      candidates.insert(l->begin(), l->end());
    }
    std::vector<std::string> owners(speakers.begin(), speakers.end());
    owners.push_back(kGroupOwner);
    for (const auto& o : owners) {
      auto it = index->heads_by_owner.find(o);
      if (it == index->heads_by_owner.end()) continue;
      size_t n = 0;
      for (auto r = it->second.rbegin(); r != it->second.rend() && n < kRecent; ++r, ++n) {
        candidates.insert(*r);
      }
    }
    // A candidate's content words as said, repeats counted (the index keeps
    // each word once).
    for (size_t i : candidates) {
      std::vector<std::string> words;
      for (auto& t : StemmedTokens(index->records[i].content)) {
        if (!IsStopword(t)) words.push_back(std::move(t));
      }
      rank(index->records[i], words);
    }
  } else {
    for (const auto& [id, r] : ctx.records) rank(r, StemmedTokens(r.content));
  }
  std::sort(ranked.begin(), ranked.end(), [](const Ranked& a, const Ranked& b) {
    if (a.tier != b.tier) return a.tier < b.tier;
    if (a.sim != b.sim) return a.sim > b.sim;
    return a.r->record_id > b.r->record_id;  // newer first
  });
  // A segment shorter than the window gets its share of the heads and their
  // budget (at least a quarter): a small segment does not resend everything.
  const double share = std::clamp(static_cast<double>(seg.messages.size()) /
                                      static_cast<double>(std::max<size_t>(1, options.window)),
                                  0.25, 1.0);
  std::vector<WriterHead> out;
  size_t tokens = 0;
  for (const auto& x : ranked) {
    if (out.size() >= std::ceil(share * static_cast<double>(options.max_heads))) break;
    size_t cost = llm::EstimateTokens(x.r->content) + 8;
    if (tokens + cost > share * static_cast<double>(options.head_token_budget)) continue;
    tokens += cost;
    const storage::Record& r = *x.r;
    out.push_back(
        WriterHead{r.record_id, r.layer, r.owner, r.source, r.utype, r.content, r.valid_at_ms});
  }
  return out;
}

}  // namespace speakermem::writer
