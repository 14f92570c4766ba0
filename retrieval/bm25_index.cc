#include "retrieval/bm25_index.h"

#include <algorithm>
#include <cmath>
#include <mutex>

#include "text/analyzer.h"
#include "text/tokenizer.h"

namespace speakermem::retrieval {

using text::IndexTokens;
using text::SnowballStem;

namespace {

constexpr char kStemMark = '\x01';

// Context is added by a pass over the whole channel once at least one
// document in kDenseShare is scored (Bm25Index::AddContextDense).
constexpr size_t kDenseShare = 4;

float Idf(size_t n, size_t df) {
  return std::log(1.0f + (static_cast<float>(n) - static_cast<float>(df) + 0.5f) /
                             (static_cast<float>(df) + 0.5f));
}

// The k best of `docs` that pass `keep`, best first, by `better` (a strict
// total order): a bounded heap, so most documents cost one comparison.
template <typename Keep, typename Better>
std::vector<uint32_t> BestOf(const std::vector<uint32_t>& docs, size_t k, Keep keep,
                             Better better) {
  std::vector<uint32_t> heap;  // the worst kept on top
  if (k == 0) return heap;
  heap.reserve(std::min(k, docs.size()));
  for (uint32_t doc : docs) {
    if (heap.size() == k && !better(doc, heap.front())) continue;
    if (!keep(doc)) continue;
    if (heap.size() == k) {
      std::pop_heap(heap.begin(), heap.end(), better);
      heap.back() = doc;
    } else {
      heap.push_back(doc);
    }
    std::push_heap(heap.begin(), heap.end(), better);
  }
  std::sort_heap(heap.begin(), heap.end(), better);
  return heap;
}

}  // namespace

uint32_t Bm25Index::Intern(absl::string_view term) {
  if (auto it = term_ids_.find(term); it != term_ids_.end()) return it->second;
  const uint32_t id = static_cast<uint32_t>(postings_.size());
  term_ids_.emplace(std::string(term), id);
  postings_.emplace_back();
  term_is_stem_.push_back(!term.empty() && term[0] == kStemMark);
  stem_of_.push_back(kNoStem);
  return id;
}

bool Bm25Index::Contains(uint64_t seq) const {
  if (by_seq_.empty() || seq > by_seq_.back().first) return false;
  auto it = std::lower_bound(by_seq_.begin(), by_seq_.end(), std::make_pair(seq, 0u));
  return it != by_seq_.end() && it->first == seq;
}

void Bm25Index::Add(const storage::Message& m) {
  if (Contains(m.seq)) return;
  const uint32_t doc = static_cast<uint32_t>(seqs_.size());
  // Each token counts for its word and its stem; term frequencies by
  // counting runs of the sorted term ids.
  std::vector<uint32_t>& terms = scratch_terms_;
  terms.clear();
  uint32_t length = 0;
  // The tokens IndexTokens keeps: a stopword is known by its term's mark.
  text::ForEachToken(m.text, [&](absl::string_view t) {
    const uint32_t word = Intern(t);
    // A word is classified and stemmed once, when it is first seen.
    if (stem_of_[word] == kNoStem) {
      stem_of_[word] = text::IsIndexStopword(t)
                           ? kNotIndexed
                           : Intern(std::string(1, kStemMark) + SnowballStem(t));
    }
    if (stem_of_[word] == kNotIndexed) return;
    terms.push_back(word);
    terms.push_back(stem_of_[word]);
    ++length;
  });
  std::sort(terms.begin(), terms.end());
  for (size_t i = 0; i < terms.size();) {
    size_t j = i;
    while (j < terms.size() && terms[j] == terms[i]) ++j;
    const auto count = static_cast<uint32_t>(j - i);
    postings_[terms[i]].push_back(Posting{doc, count});
    forward_.push_back(Posting{terms[i], count});
    i = j;
  }
  forward_end_.push_back(static_cast<uint32_t>(forward_.size()));
  seqs_.push_back(m.seq);
  lengths_.push_back(length);
  timestamps_.push_back(m.timestamp_ms);
  uint32_t sid = 0;
  if (!m.speaker_id.empty()) {
    auto [it, inserted] =
        speaker_ids_.try_emplace(m.speaker_id, static_cast<uint32_t>(speaker_ids_.size() + 1));
    sid = it->second;
  }
  speakers_.push_back(sid);
  if (docs_of_speaker_.size() <= sid) docs_of_speaker_.resize(sid + 1);
  docs_of_speaker_[sid].push_back(doc);
  auto [sess, unused] =
      session_ids_.try_emplace(m.session, static_cast<uint32_t>(session_ids_.size()));
  sessions_.push_back(sess->second);
  // Appends in the common case; an out-of-order seq is inserted in place.
  if (by_seq_.empty() || by_seq_.back().first < m.seq) {
    by_seq_.emplace_back(m.seq, doc);
  } else {
    in_seq_order_ = false;
    auto pos = std::upper_bound(by_seq_.begin(), by_seq_.end(), std::make_pair(m.seq, doc));
    by_seq_.insert(pos, {m.seq, doc});
  }
  total_length_ += length;
}

Bm25Index::Weights Bm25Index::QueryWeights(absl::string_view text, bool stem) const {
  Weights w;
  for (const auto& t : IndexTokens(text)) {
    auto it = term_ids_.find(stem ? std::string(1, kStemMark) + SnowballStem(t) : t);
    if (it == term_ids_.end()) continue;
    auto same =
        std::find_if(w.begin(), w.end(), [&](const auto& p) { return p.first == it->second; });
    if (same == w.end()) {
      w.emplace_back(it->second, 1.0);
    } else {
      same->second += 1.0;
    }
  }
  return w;
}

void Bm25Index::Score(const Weights& weights, const std::vector<uint32_t>& speakers,
                      double speaker_weight, uint32_t first_doc, std::vector<float>* scores,
                      std::vector<uint32_t>* touched) const {
  const size_t n = seqs_.size();
  const float avgdl = static_cast<float>(total_length_) / static_cast<float>(n);
  const float k1 = params_.k1, b = params_.b;
  auto add = [&](uint32_t doc, float v) {
    if ((*scores)[doc] == 0.0f) touched->push_back(doc);
    (*scores)[doc] += v;
  };
  for (const auto& [term, qw] : weights) {
    const auto& plist = postings_[term];
    const float idf = Idf(n, plist.size());
    // Postings are in document order: skip straight to first_doc.
    auto from = std::lower_bound(plist.begin(), plist.end(), first_doc,
                                 [](const Posting& p, uint32_t d) { return p.id < d; });
    for (auto it = from; it != plist.end(); ++it) {
      const Posting& p = *it;
      const float tf = static_cast<float>(p.tf);
      const float norm = k1 * (1.0f - b + b * static_cast<float>(lengths_[p.id]) / avgdl);
      add(p.id, static_cast<float>(qw) * idf * tf * (k1 + 1.0f) / (tf + norm));
    }
  }
  // The speaker field holds one term per message: tf 1, length 1, so its
  // BM25F contribution is the speaker's idf.
  if (speaker_weight <= 0) return;
  for (uint32_t sid : speakers) {
    const auto& docs = docs_of_speaker_[sid];
    const float v = static_cast<float>(speaker_weight) * Idf(n, docs.size());
    for (auto it = std::lower_bound(docs.begin(), docs.end(), first_doc); it != docs.end(); ++it) {
      add(*it, v);
    }
  }
}

Bm25Index::Weights Bm25Index::Feedback(const Weights& weights, const std::vector<float>& scores,
                                       const std::vector<uint32_t>& touched,
                                       const LexicalQuery& q) const {
  const LexicalParams& p = q.params;
  auto better = [&](uint32_t a, uint32_t b) {
    return scores[a] != scores[b] ? scores[a] > scores[b] : seqs_[a] < seqs_[b];
  };
  const bool all = Unfiltered(q);
  std::vector<uint32_t> top = BestOf(
      touched, p.prf_docs,
      [&](uint32_t doc) { return scores[doc] > 0 && (all || Admits(doc, q, {})); }, better);
  double z = 0;
  for (uint32_t doc : top) z += scores[doc];
  if (z <= 0) return weights;
  // Relevance model: P(term | feedback docs), each document weighted by its
  // share of the first round's score, terms by tf/len x idf.
  const size_t n = seqs_.size();
  absl::flat_hash_map<uint32_t, double> model;
  for (uint32_t doc : top) {
    const double len = std::max<uint32_t>(1, lengths_[doc]);
    for (uint32_t f = doc == 0 ? 0 : forward_end_[doc - 1]; f < forward_end_[doc]; ++f) {
      const Posting& t = forward_[f];
      if (term_is_stem_[t.id] != p.stem) continue;
      model[t.id] += scores[doc] / z * t.tf / len * Idf(n, postings_[t.id].size());
    }
  }
  std::vector<std::pair<uint32_t, double>> terms(model.begin(), model.end());
  std::sort(terms.begin(), terms.end(), [](const auto& a, const auto& b) {
    return a.second != b.second ? a.second > b.second : a.first < b.first;
  });
  if (terms.size() > p.prf_terms) terms.resize(p.prf_terms);
  double mass = 0, qn = 0;
  for (const auto& t : terms) mass += t.second;
  for (const auto& w : weights) qn += w.second;
  if (mass <= 0 || qn <= 0) return weights;
  // Interpolated and scaled back to the query's own weight.
  absl::flat_hash_map<uint32_t, double> mixed;
  for (const auto& [term, w] : weights) mixed[term] += (1 - p.prf_weight) * w;
  for (const auto& [term, w] : terms) mixed[term] += p.prf_weight * qn * w / mass;
  Weights out(mixed.begin(), mixed.end());
  std::sort(out.begin(), out.end());
  return out;
}

size_t Bm25Index::OrderOf(uint32_t doc) const {
  if (in_seq_order_) return doc;
  auto it = std::lower_bound(by_seq_.begin(), by_seq_.end(), std::make_pair(seqs_[doc], 0u));
  return static_cast<size_t>(it - by_seq_.begin());
}

void Bm25Index::AddContext(const LexicalQuery& q, std::vector<float>* scores,
                           std::vector<uint32_t>* touched) const {
  const LexicalParams& p = q.params;
  // All zero between calls: only the entries reached are set, and reset at
  // the end (a channel's size is not paid for on every query).
  thread_local std::vector<float> inherited;
  if (inherited.size() < seqs_.size()) inherited.resize(seqs_.size(), 0.0f);
  thread_local std::vector<uint32_t> reached;
  reached.clear();
  const bool all = Unfiltered(q);
  for (uint32_t doc : *touched) {
    const float s = (*scores)[doc];
    if (s <= 0 || !(all || Admits(doc, q, {}))) continue;
    const size_t at = OrderOf(doc);
    float carried = s;
    for (uint32_t d = 1; d <= p.context_window;
         ++d, carried *= static_cast<float>(p.context_decay)) {
      for (size_t pos : {at - d, at + d}) {  // at - d wraps past 0: out of range
        if (pos >= by_seq_.size()) continue;
        const uint32_t other = by_seq_[pos].second;
        if (sessions_[other] != sessions_[doc]) continue;
        if (inherited[other] == 0.0f) reached.push_back(other);
        inherited[other] = std::max(inherited[other], carried);
      }
    }
  }
  for (uint32_t doc : reached) {
    if ((*scores)[doc] == 0.0f) touched->push_back(doc);
    (*scores)[doc] += static_cast<float>(p.context_weight) * inherited[doc];
    inherited[doc] = 0.0f;
  }
}

void Bm25Index::AddContextDense(const LexicalQuery& q, std::vector<float>* scores,
                                std::vector<uint32_t>* touched) const {
  const LexicalParams& p = q.params;
  const size_t n = seqs_.size();
  float* s = scores->data();
  const bool all = Unfiltered(q);
  thread_local std::vector<float> inherited;
  inherited.assign(n, 0.0f);
  // Documents are in seq order (in_seq_order_): doc i is the i-th message.
  for (size_t doc = 0; doc < n; ++doc) {
    if (s[doc] <= 0 || !(all || Admits(static_cast<uint32_t>(doc), q, {}))) continue;
    float carried = s[doc];
    for (uint32_t d = 1; d <= p.context_window;
         ++d, carried *= static_cast<float>(p.context_decay)) {
      for (size_t pos : {doc - d, doc + d}) {  // doc - d wraps past 0: out of range
        if (pos >= n || sessions_[pos] != sessions_[doc]) continue;
        inherited[pos] = std::max(inherited[pos], carried);
      }
    }
  }
  touched->clear();
  const auto weight = static_cast<float>(p.context_weight);
  for (size_t doc = 0; doc < n; ++doc) {
    if (inherited[doc] != 0.0f) s[doc] += weight * inherited[doc];
    if (s[doc] != 0.0f) touched->push_back(static_cast<uint32_t>(doc));
  }
}

bool Bm25Index::Unfiltered(const LexicalQuery& q) {
  return q.after_seq == 0 && q.start_ms == 0 && q.end_ms == 0;
}

bool Bm25Index::Admits(uint32_t doc, const LexicalQuery& q,
                       const std::vector<uint32_t>& only) const {
  const int64_t ts = timestamps_[doc];
  if (seqs_[doc] <= q.after_seq && q.after_seq != 0) return false;
  if (q.start_ms != 0 && ts < q.start_ms) return false;
  if (q.end_ms != 0 && ts >= q.end_ms) return false;
  return only.empty() || std::find(only.begin(), only.end(), speakers_[doc]) != only.end();
}

std::vector<uint32_t> Bm25Index::SpeakerIds(const std::vector<std::string>& names) const {
  std::vector<uint32_t> ids;
  for (const auto& sp : names) {
    auto it = speaker_ids_.find(sp);
    if (it != speaker_ids_.end()) ids.push_back(it->second);
  }
  return ids;
}

bool Bm25Index::ScoreQuery(const LexicalQuery& q, std::vector<float>* scores,
                           std::vector<uint32_t>* touched,
                           std::vector<ScoredSeq>* term_best) const {
  const size_t n = seqs_.size();
  if (n == 0) return false;
  const std::vector<uint32_t> named = SpeakerIds(q.named_speakers);
  const LexicalParams& p = q.params;
  Weights weights = QueryWeights(q.text, p.stem);
  if (weights.empty() && (named.empty() || p.speaker_weight <= 0)) return false;
  // `scores` is all zero on entry (the callers reset what they touched).
  if (scores->size() < n) scores->resize(n, 0.0f);
  touched->clear();
  // Only messages after after_seq can count: when documents arrived in seq
  // order they are a suffix of the document ids (the unwritten tail of a
  // live channel), and scoring starts there instead of at the beginning.
  uint32_t first_doc = 0;
  if (q.after_seq != 0 && in_seq_order_) {
    first_doc = static_cast<uint32_t>(
        std::upper_bound(by_seq_.begin(), by_seq_.end(), std::make_pair(q.after_seq, UINT32_MAX)) -
        by_seq_.begin());
  }
  if (term_best == nullptr) {
    Score(weights, named, p.speaker_weight, first_doc, scores, touched);
  } else {  // the same sums, read between the terms and the speaker field
    Score(weights, {}, 0, first_doc, scores, touched);
    // By speaker number (a handful): a slot each, score 0 while empty.
    term_best->assign(docs_of_speaker_.size(), ScoredSeq{});
    const bool all = Unfiltered(q);
    for (uint32_t doc : *touched) {
      const ScoredSeq hit{seqs_[doc], (*scores)[doc]};
      ScoredSeq& best = (*term_best)[speakers_[doc]];
      if (hit.score > 0 && Beats(hit, best) && (all || Admits(doc, q, {}))) best = hit;
    }
    Score({}, named, p.speaker_weight, first_doc, scores, touched);
  }
  if (p.prf_weight > 0 && !weights.empty()) {
    // The expanded query keeps (1 - prf_weight) of each query term and the
    // whole speaker field: scale the first round's scores and add the rest
    // (the speaker field's prf_weight share and the feedback terms) instead
    // of scoring the query's terms again.
    Weights expanded = Feedback(weights, *scores, *touched, q);
    Weights added;
    for (const auto& [term, w] : expanded) {
      auto own = std::find_if(weights.begin(), weights.end(),
                              [&](const auto& w0) { return w0.first == term; });
      const double kept = own != weights.end() ? (1 - p.prf_weight) * own->second : 0.0;
      if (w - kept > 0) added.emplace_back(term, w - kept);
    }
    if (expanded != weights) {
      const float keep = static_cast<float>(1 - p.prf_weight);
      for (uint32_t doc : *touched) (*scores)[doc] *= keep;
      Score(added, named, p.prf_weight * p.speaker_weight, first_doc, scores, touched);
    }
  }
  if (p.context_weight > 0 && p.context_window > 0) {
    // When most of the channel is scored already (a named speaker's field
    // touches every message they wrote), one pass over the channel in seq
    // order is cheaper than following the touched list; same result.
    if (in_seq_order_ && touched->size() >= n / kDenseShare) {
      AddContextDense(q, scores, touched);
    } else {
      AddContext(q, scores, touched);
    }
  }
  return true;
}

bool Bm25Index::Beats(ScoredSeq hit, ScoredSeq best) {
  return hit.score > best.score || (hit.score == best.score && hit.seq < best.seq);
}

std::map<std::string, ScoredSeq> Bm25Index::ByName(const std::vector<ScoredSeq>& best) const {
  std::map<std::string, ScoredSeq> out;
  for (const auto& [name, sid] : speaker_ids_) {
    if (sid < best.size() && best[sid].score > 0) out.emplace(name, best[sid]);
  }
  return out;
}

std::vector<ScoredSeq> Bm25Index::Search(const LexicalQuery& q) const { return Search(q, nullptr); }

std::vector<ScoredSeq> Bm25Index::Search(const LexicalQuery& q,
                                         std::map<std::string, ScoredSeq>* best_per_speaker) const {
  std::vector<ScoredSeq> out;
  if (best_per_speaker != nullptr) best_per_speaker->clear();
  if (q.k == 0) return out;
  const std::vector<uint32_t> only = SpeakerIds(q.only_speakers);
  if (!q.only_speakers.empty() && only.empty()) return out;
  thread_local std::vector<float> scores;
  thread_local std::vector<uint32_t> touched;
  thread_local std::vector<ScoredSeq> term_best;
  term_best.clear();
  const bool scored =
      ScoreQuery(q, &scores, &touched, best_per_speaker != nullptr ? &term_best : nullptr);
  if (best_per_speaker != nullptr) *best_per_speaker = ByName(term_best);
  if (!scored) return out;
  // Every scored document is a candidate (on a large channel a common word
  // or a named speaker touches most of it): the k best are kept as they
  // come, the others cost one comparison each.
  auto better = [&](uint32_t a, uint32_t b) {
    return scores[a] != scores[b] ? scores[a] > scores[b] : seqs_[a] < seqs_[b];
  };
  const bool all = Unfiltered(q) && only.empty();
  std::vector<uint32_t> best = BestOf(
      touched, q.k, [&](uint32_t doc) { return scores[doc] > 0 && (all || Admits(doc, q, only)); },
      better);
  out.reserve(best.size());
  for (uint32_t doc : best) out.push_back(ScoredSeq{seqs_[doc], scores[doc]});
  for (uint32_t doc : touched) scores[doc] = 0.0f;
  return out;
}

std::map<std::string, ScoredSeq> Bm25Index::BestPerSpeaker(const LexicalQuery& q) const {
  std::map<std::string, ScoredSeq> out;
  const std::vector<uint32_t> only = SpeakerIds(q.only_speakers);
  if (only.empty()) return out;
  thread_local std::vector<float> scores;
  thread_local std::vector<uint32_t> touched;
  if (!ScoreQuery(q, &scores, &touched)) return out;
  std::vector<ScoredSeq> best(docs_of_speaker_.size());  // by speaker number, score 0: none
  for (uint32_t doc : touched) {
    const ScoredSeq hit{seqs_[doc], scores[doc]};
    scores[doc] = 0.0f;
    if (hit.score > 0 && Beats(hit, best[speakers_[doc]]) && Admits(doc, q, only)) {
      best[speakers_[doc]] = hit;
    }
  }
  for (const auto& name : q.only_speakers) {
    auto id = speaker_ids_.find(name);
    if (id != speaker_ids_.end() && best[id->second].score > 0) out.emplace(name, best[id->second]);
  }
  return out;
}

LexicalIndex::Shard* LexicalIndex::GetOrCreate(const storage::ChannelRef& channel) {
  {
    absl::ReaderMutexLock lock(&mu_);
    auto it = shards_.find(channel);
    if (it != shards_.end()) return it->second.get();
  }
  absl::MutexLock lock(&mu_);
  auto& slot = shards_[channel];
  if (!slot) slot = std::make_unique<Shard>(params_);
  return slot.get();
}

const LexicalIndex::Shard* LexicalIndex::Find(const storage::ChannelRef& channel) const {
  absl::ReaderMutexLock lock(&mu_);
  auto it = shards_.find(channel);
  return it == shards_.end() ? nullptr : it->second.get();
}

void LexicalIndex::Add(const storage::ChannelRef& channel, const storage::Message& message) {
  Shard* shard = GetOrCreate(channel);
  std::unique_lock<std::shared_mutex> lock(shard->mu);
  shard->index->Add(message);
}

void LexicalIndex::AddBatch(const storage::ChannelRef& channel,
                            const std::vector<storage::Message>& messages) {
  Shard* shard = GetOrCreate(channel);
  std::unique_lock<std::shared_mutex> lock(shard->mu);
  for (const auto& m : messages) {
    if (m.seq != 0) shard->index->Add(m);
  }
}

std::map<std::string, ScoredSeq> LexicalIndex::BestPerSpeaker(const storage::ChannelRef& channel,
                                                              const LexicalQuery& query) const {
  const Shard* shard = Find(channel);
  if (shard == nullptr) return {};
  std::shared_lock<std::shared_mutex> lock(shard->mu);
  return shard->index->BestPerSpeaker(query);
}

std::vector<ScoredSeq> LexicalIndex::Search(
    const storage::ChannelRef& channel, const LexicalQuery& query,
    std::map<std::string, ScoredSeq>* best_per_speaker) const {
  if (best_per_speaker != nullptr) best_per_speaker->clear();
  const Shard* shard = Find(channel);
  if (shard == nullptr) return {};
  std::shared_lock<std::shared_mutex> lock(shard->mu);
  return shard->index->Search(query, best_per_speaker);
}

void LexicalIndex::Replace(const storage::ChannelRef& channel,
                           const std::vector<storage::Message>& messages) {
  auto fresh = std::make_unique<Bm25Index>(params_);
  for (const auto& m : messages) {
    if (m.seq != 0) fresh->Add(m);
  }
  Shard* shard = GetOrCreate(channel);
  std::unique_lock<std::shared_mutex> lock(shard->mu);
  shard->index = std::move(fresh);
}

void LexicalIndex::Drop(const storage::ChannelRef& channel) {
  // Shards are never freed while the index lives (searches hold raw
  // pointers without the map lock): an emptied index stands in.
  Shard* shard = GetOrCreate(channel);
  std::unique_lock<std::shared_mutex> lock(shard->mu);
  shard->index = std::make_unique<Bm25Index>(params_);
}

size_t LexicalIndex::ChannelCount() const {
  absl::ReaderMutexLock lock(&mu_);
  return shards_.size();
}

}  // namespace speakermem::retrieval
