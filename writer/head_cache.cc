#include "writer/head_cache.h"

#include <algorithm>
#include <cmath>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "storage/record_id.h"
#include "text/text.h"

namespace speakermem::writer {

using text::IsStopword;
using text::StemmedTokens;

namespace {

void InsertSorted(std::vector<uint64_t>* v, uint64_t n) {
  if (v->empty() || v->back() < n) {
    v->push_back(n);  // the common case: records arrive in id order
    return;
  }
  auto it = std::lower_bound(v->begin(), v->end(), n);
  if (it == v->end() || *it != n) v->insert(it, n);
}

void EraseSorted(std::vector<uint64_t>* v, uint64_t n) {
  auto it = std::lower_bound(v->begin(), v->end(), n);
  if (it != v->end() && *it == n) v->erase(it);
}

}  // namespace

void HeadCache::Put(const storage::Record& r) {
  const uint64_t n = storage::RecordNumber(r.record_id);
  if (heads.count(r.record_id) > 0) Erase(r.record_id);
  auto [it, fresh] = heads.insert_or_assign(r.record_id, r);
  keys.emplace(r.owner, r.layer, NormalizeContent(r.content));
  InsertSorted(&by_owner[r.owner], n);
  Entry& e = entries[n];
  e.record = &it->second;
  for (auto& tok : StemmedTokens(r.content)) {
    if (!IsStopword(tok)) e.tokens.push_back(std::move(tok));
  }
  for (const auto& tok : e.tokens) InsertSorted(&postings[tok], n);
}

void HeadCache::Erase(const std::string& id) {
  auto it = heads.find(id);
  if (it == heads.end()) return;
  const uint64_t n = storage::RecordNumber(id);
  keys.erase({it->second.owner, it->second.layer, NormalizeContent(it->second.content)});
  EraseSorted(&by_owner[it->second.owner], n);
  auto e = entries.find(n);
  if (e != entries.end()) {
    for (const auto& tok : e->second.tokens) {
      auto p = postings.find(tok);
      if (p != postings.end()) EraseSorted(&p->second, n);
    }
    entries.erase(e);
  }
  heads.erase(it);
}

absl::Status HeadCache::Refresh(storage::Store* store, const storage::ChannelRef& ch,
                                uint64_t counter) {
  if (next_record == counter) return absl::OkStatus();
  storage::RecordQuery q;
  q.limit = UINT32_MAX;  // heads only
  absl::StatusOr<std::vector<storage::Record>> records = store->ListRecords(ch, q);
  if (!records.ok()) return records.status();
  *this = HeadCache();
  for (const auto& r : *records) Put(r);
  next_record = counter;
  return absl::OkStatus();
}

void HeadCache::Fold(const storage::SegmentApply& apply, uint64_t before) {
  if (next_record != before) return;
  for (const auto& [old_id, new_id] : apply.superseded) Erase(old_id);
  for (const auto& r : apply.new_records) Put(r);
  next_record = std::max(apply.next_record, before);
}

std::vector<WriterHead> BoundHeads(const ValidationContext& ctx, const Segment& seg,
                                   const HeadCache* cache, const WriterOptions& options) {
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
  auto rank = [&](const storage::Record& r, const std::vector<std::string>& toks) {
    if (!r.active()) return;
    double overlap = 0;
    for (const auto& t : toks) overlap += seg_set.contains(t);
    double sim = toks.empty() ? 0 : overlap / static_cast<double>(toks.size());
    int tier = speakers.count(r.owner) || r.owner == kGroupOwner ? 0 : 1;
    ranked.push_back(Ranked{tier, sim, &r});
  };
  if (cache != nullptr) {
    // Rarest words first; words on more than a tenth of the heads say
    // little about which ones matter, and a few hundred candidates suffice.
    constexpr size_t kMaxCandidates = 400;
    std::vector<const std::vector<uint64_t>*> lists;
    const size_t common = std::max<size_t>(50, cache->heads.size() / 10);
    for (const auto& tok : seg_set) {
      if (IsStopword(tok)) continue;
      auto p = cache->postings.find(tok);
      if (p != cache->postings.end() && !p->second.empty() && p->second.size() <= common) {
        lists.push_back(&p->second);
      }
    }
    std::sort(lists.begin(), lists.end(),
              [](const auto* a, const auto* b) { return a->size() < b->size(); });
    absl::flat_hash_set<uint64_t> candidates;
    for (const auto* l : lists) {
      if (candidates.size() >= kMaxCandidates) break;
      candidates.insert(l->begin(), l->end());
    }
    std::vector<std::string> owners(speakers.begin(), speakers.end());
    owners.push_back(kGroupOwner);
    for (const auto& o : owners) {
      auto it = cache->by_owner.find(o);
      if (it == cache->by_owner.end()) continue;
      size_t n = 0;
      for (auto r = it->second.rbegin(); r != it->second.rend() && n < kRecent; ++r, ++n) {
        candidates.insert(*r);
      }
    }
    for (uint64_t n : candidates) {
      auto e = cache->entries.find(n);
      if (e != cache->entries.end()) rank(*e->second.record, e->second.tokens);
    }
  } else {
    for (const auto& [id, r] : ctx.heads()) rank(r, StemmedTokens(r.content));
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
