#include "retrieval/bm25_index.h"

#include <algorithm>
#include <cmath>
#include <mutex>

#include "retrieval/tokenizer.h"

namespace speakermem::retrieval {

void Bm25Index::Add(uint64_t seq, int64_t timestamp_ms, absl::string_view text,
                    absl::string_view speaker) {
  if (doc_of_seq_.contains(seq)) return;
  const uint32_t doc = static_cast<uint32_t>(seqs_.size());
  std::vector<std::string> tokens = Tokenize(text);
  absl::flat_hash_map<uint32_t, uint32_t> tf;
  for (auto& t : tokens) {
    auto [it, inserted] = term_ids_.try_emplace(std::move(t), postings_.size());
    if (inserted) postings_.emplace_back();
    ++tf[it->second];
  }
  for (const auto& [term, count] : tf) postings_[term].push_back(Posting{doc, count});
  seqs_.push_back(seq);
  lengths_.push_back(static_cast<uint32_t>(tokens.size()));
  timestamps_.push_back(timestamp_ms);
  uint32_t sid = 0;
  if (!speaker.empty()) {
    auto [it, inserted] = speaker_ids_.try_emplace(std::string(speaker),
                                                   static_cast<uint32_t>(speaker_ids_.size() + 1));
    sid = it->second;
  }
  speakers_.push_back(sid);
  doc_of_seq_[seq] = doc;
  total_length_ += tokens.size();
}

std::vector<ScoredSeq> Bm25Index::Search(const std::vector<std::string>& terms,
                                         size_t k, int64_t start_ms, int64_t end_ms,
                                         const std::vector<std::string>* speakers) const {
  std::vector<ScoredSeq> out;
  const size_t n = seqs_.size();
  if (n == 0 || k == 0) return out;
  std::vector<uint32_t> term_list;
  for (const auto& t : terms) {
    auto it = term_ids_.find(t);
    if (it == term_ids_.end()) continue;
    if (std::find(term_list.begin(), term_list.end(), it->second) == term_list.end()) {
      term_list.push_back(it->second);
    }
  }
  if (term_list.empty()) return out;
  std::vector<uint32_t> allowed;
  if (speakers != nullptr) {
    for (const auto& sp : *speakers) {
      auto it = speaker_ids_.find(sp);
      if (it != speaker_ids_.end()) allowed.push_back(it->second);
    }
    if (allowed.empty()) return out;
  }

  thread_local std::vector<float> scores;
  thread_local std::vector<uint32_t> touched;
  scores.assign(n, 0.0f);
  touched.clear();
  const float avgdl = static_cast<float>(total_length_) / static_cast<float>(n);
  const float k1 = params_.k1, b = params_.b;
  for (uint32_t term : term_list) {
    const auto& plist = postings_[term];
    const float df = static_cast<float>(plist.size());
    const float idf = std::log(1.0f + (static_cast<float>(n) - df + 0.5f) / (df + 0.5f));
    for (const Posting& p : plist) {
      const float tf = static_cast<float>(p.tf);
      const float norm = k1 * (1.0f - b + b * static_cast<float>(lengths_[p.doc]) / avgdl);
      if (scores[p.doc] == 0.0f) touched.push_back(p.doc);
      scores[p.doc] += idf * tf * (k1 + 1.0f) / (tf + norm);
    }
  }
  out.reserve(touched.size());
  for (uint32_t doc : touched) {
    const int64_t ts = timestamps_[doc];
    if (start_ms != 0 && ts < start_ms) continue;
    if (end_ms != 0 && ts >= end_ms) continue;
    if (speakers != nullptr &&
        std::find(allowed.begin(), allowed.end(), speakers_[doc]) == allowed.end()) {
      continue;
    }
    out.push_back(ScoredSeq{seqs_[doc], scores[doc]});
  }
  auto better = [](const ScoredSeq& a, const ScoredSeq& b) {
    return a.score != b.score ? a.score > b.score : a.seq < b.seq;
  };
  if (out.size() > k) {
    std::nth_element(out.begin(), out.begin() + k, out.end(), better);
    out.resize(k);
  }
  std::sort(out.begin(), out.end(), better);
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

void LexicalIndex::Add(const storage::ChannelRef& channel, uint64_t seq,
                       int64_t timestamp_ms, absl::string_view text, absl::string_view speaker) {
  Shard* shard = GetOrCreate(channel);
  std::unique_lock<std::shared_mutex> lock(shard->mu);
  shard->index->Add(seq, timestamp_ms, text, speaker);
}

void LexicalIndex::AddBatch(const storage::ChannelRef& channel,
                            const std::vector<storage::Message>& messages) {
  Shard* shard = GetOrCreate(channel);
  std::unique_lock<std::shared_mutex> lock(shard->mu);
  for (const auto& m : messages) {
    if (m.seq != 0) shard->index->Add(m.seq, m.timestamp_ms, m.text, m.speaker_id);
  }
}

std::vector<ScoredSeq> LexicalIndex::Search(const storage::ChannelRef& channel,
                                            absl::string_view query, size_t k,
                                            int64_t start_ms, int64_t end_ms,
                                            const std::vector<std::string>* speakers) const {
  const Shard* shard = Find(channel);
  if (shard == nullptr) return {};
  std::vector<std::string> terms = Tokenize(query);
  std::shared_lock<std::shared_mutex> lock(shard->mu);
  return shard->index->Search(terms, k, start_ms, end_ms, speakers);
}

void LexicalIndex::Replace(const storage::ChannelRef& channel,
                           const std::vector<storage::Message>& messages) {
  auto fresh = std::make_unique<Bm25Index>(params_);
  for (const auto& m : messages) {
    if (m.seq != 0) fresh->Add(m.seq, m.timestamp_ms, m.text, m.speaker_id);
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
