// Okapi BM25 over System 1 messages, held in memory and rebuilt from the
// store at start.
#ifndef SPEAKERMEM_RETRIEVAL_BM25_INDEX_H_
#define SPEAKERMEM_RETRIEVAL_BM25_INDEX_H_

#include <cstdint>
#include <map>
#include <memory>
#include <shared_mutex>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "storage/types.h"

namespace speakermem::retrieval {

struct Bm25Params {
  // Term-frequency saturation. Default: 1.2.
  float k1 = 1.2f;
  // Length normalisation (0 = none, 1 = full). Default: 0.75.
  float b = 0.75f;
};

// What a search adds to textbook Okapi BM25. All off (the defaults) is the
// textbook ranker: surface terms, one field, no feedback, no context. The
// pipeline's values are chosen by leave-one-conversation-out evaluation
// (docs/retrieval.md); these defaults are not them.
struct LexicalParams {
  // Match Snowball stems instead of surface words ("adopting" finds
  // "adoption"). Default: false.
  bool stem = false;
  // BM25F weight of the speaker field: a message said by a speaker the query
  // names scores weight x idf(speaker), where the speaker's idf comes from
  // how many of the channel's messages they wrote (naming one of two people
  // says little, one of twenty a lot). 0 = off. Default: 0.
  double speaker_weight = 0;
  // Context: a message also scores context_weight x the best score of a
  // neighbour within context_window turns of the same session, that score
  // multiplied by context_decay per turn beyond the first (a reply is often
  // meaningless alone). 0 = off. Default: 0.
  double context_weight = 0;
  uint32_t context_window = 1;
  double context_decay = 1.0;
  // Pseudo-relevance feedback (RM3): the query is interpolated with the
  // prf_terms heaviest terms of the first round's prf_docs best messages,
  // with this weight, and scored again. 0 = off. Default: 0.
  double prf_weight = 0;
  uint32_t prf_docs = 5;
  uint32_t prf_terms = 10;
};

struct ScoredSeq {
  uint64_t seq = 0;
  float score = 0;
};

struct LexicalQuery {
  std::string text;  // analysed by the index
  size_t k = 10;
  int64_t start_ms = 0;  // inclusive; 0 = unbounded
  int64_t end_ms = 0;    // exclusive; 0 = unbounded
  // Only messages with a larger seq count (0: all).
  uint64_t after_seq = 0;
  // Non-empty: only messages said by one of these speaker ids count.
  std::vector<std::string> only_speakers;
  // Speaker ids the query names, matched against the speaker field.
  std::vector<std::string> named_speakers;
  LexicalParams params;
};

// One channel's inverted index. Not thread-safe: LexicalIndex guards it.
class Bm25Index {
 public:
  explicit Bm25Index(Bm25Params params = {}) : params_(params) {}

  // Adds a document. Messages may arrive out of seq order; neighbours
  // (LexicalParams context) are taken in seq order. A seq added before is
  // ignored.
  void Add(const storage::Message& message);

  // The `k` best documents for the query, best first; ties by lower seq.
  // Documents are analysed by IndexTokens; a query term counts once per
  // occurrence (Okapi with k3 = infinity). IDF is
  // ln(1 + (N - df + 0.5) / (df + 0.5)), so it is never negative. Only
  // documents with start_ms <= timestamp < end_ms count, and with
  // only_speakers non-empty only theirs.
  std::vector<ScoredSeq> Search(const LexicalQuery& query) const;
  // Search, and also every speaker's best document by the query's terms
  // alone (no speaker field, feedback or context), among the documents in
  // range: what BestPerSpeaker would return for the same text, stem and
  // range (only_speakers aside), at the cost of one pass over the documents
  // scored anyway. Keyed by the messages' speaker_id.
  std::vector<ScoredSeq> Search(const LexicalQuery& query,
                                std::map<std::string, ScoredSeq>* best_per_speaker) const;

  // Each of query.only_speakers' best document (what Search with that one
  // speaker and k 1 would return), from one scoring pass; speakers without
  // a matching document are absent. Keyed by speaker id.
  std::map<std::string, ScoredSeq> BestPerSpeaker(const LexicalQuery& query) const;

  size_t size() const { return seqs_.size(); }

 private:
  struct Posting {
    uint32_t id;  // document (postings) or term (forward lists)
    uint32_t tf;
  };
  using Weights = std::vector<std::pair<uint32_t, double>>;  // term id -> query weight

  uint32_t Intern(absl::string_view term);
  // True when a document of this seq was added.
  bool Contains(uint64_t seq) const;
  std::vector<uint32_t> SpeakerIds(const std::vector<std::string>& names) const;
  // Scores every document for `q` (BM25, speaker field, feedback, context)
  // into scores/touched; false when nothing can match.
  // With `term_best`, also each speaker's best document by the terms alone
  // (first round, in range), by speaker number (score 0: none).
  bool ScoreQuery(const LexicalQuery& q, std::vector<float>* scores, std::vector<uint32_t>* touched,
                  std::vector<ScoredSeq>* term_best = nullptr) const;
  // Whether `hit` beats `best` (a higher score; ties: the lower seq).
  static bool Beats(ScoredSeq hit, ScoredSeq best);
  // Bests by speaker number (score 0: none) by the messages' speaker_id.
  std::map<std::string, ScoredSeq> ByName(const std::vector<ScoredSeq>& best) const;
  Weights QueryWeights(absl::string_view text, bool stem) const;
  // Adds BM25 (+ speaker field) scores of `weights` into scores/touched,
  // for documents from `first_doc` on.
  void Score(const Weights& weights, const std::vector<uint32_t>& speakers, double speaker_weight,
             uint32_t first_doc, std::vector<float>* scores, std::vector<uint32_t>* touched) const;
  Weights Feedback(const Weights& weights, const std::vector<float>& scores,
                   const std::vector<uint32_t>& touched, const LexicalQuery& q) const;
  void AddContext(const LexicalQuery& q, std::vector<float>* scores,
                  std::vector<uint32_t>* touched) const;
  // AddContext by one pass over the channel (documents in seq order),
  // rebuilding `touched`: the same scores when much of it is touched.
  void AddContextDense(const LexicalQuery& q, std::vector<float>* scores,
                       std::vector<uint32_t>* touched) const;
  bool Admits(uint32_t doc, const LexicalQuery& q, const std::vector<uint32_t>& only) const;
  // True when the query admits every document by time and seq.
  static bool Unfiltered(const LexicalQuery& q);
  // Position of `doc` among the documents in seq order.
  size_t OrderOf(uint32_t doc) const;

  const Bm25Params params_;
  // Surface terms as they are, stems with a leading '\x01', in one space.
  absl::flat_hash_map<std::string, uint32_t> term_ids_;
  std::vector<std::vector<Posting>> postings_;
  std::vector<bool> term_is_stem_;
  // Per term: the id of its stem term (words only; kNoStem until known,
  // kNotIndexed for a stopword: a word seen is looked up once, not once as a
  // stopword and once as a term).
  static constexpr uint32_t kNoStem = UINT32_MAX;
  static constexpr uint32_t kNotIndexed = UINT32_MAX - 1;
  std::vector<uint32_t> stem_of_;
  // Per document, (term, tf) of both kinds: document d's are
  // forward_[forward_end_[d - 1], forward_end_[d]) (from 0 for the first).
  std::vector<Posting> forward_;
  std::vector<uint32_t> forward_end_;
  std::vector<uint64_t> seqs_;
  std::vector<uint32_t> lengths_;
  std::vector<int64_t> timestamps_;
  std::vector<uint32_t> speakers_;  // interned; 0 = unknown
  std::vector<uint32_t> sessions_;  // interned
  absl::flat_hash_map<std::string, uint32_t> speaker_ids_;
  absl::flat_hash_map<std::string, uint32_t> session_ids_;
  std::vector<std::vector<uint32_t>> docs_of_speaker_;  // by interned speaker
  std::vector<std::pair<uint64_t, uint32_t>> by_seq_;   // (seq, doc), sorted
  bool in_seq_order_ = true;  // every document so far arrived in seq order
  uint64_t total_length_ = 0;
  std::vector<uint32_t> scratch_terms_;  // Add's term ids, reused
};

// The lexical indexes of all channels. Safe for concurrent use: searches of
// one channel run in parallel; an Add excludes searches of that channel only.
class LexicalIndex {
 public:
  explicit LexicalIndex(Bm25Params params = {}) : params_(params) {}

  void Add(const storage::ChannelRef& channel, const storage::Message& message);
  void AddBatch(const storage::ChannelRef& channel, const std::vector<storage::Message>& messages);

  // Searches the channel (Bm25Index::Search, with `best_per_speaker` when
  // set); empty for an unknown channel.
  std::vector<ScoredSeq> Search(const storage::ChannelRef& channel, const LexicalQuery& query,
                                std::map<std::string, ScoredSeq>* best_per_speaker = nullptr) const;
  // Bm25Index::BestPerSpeaker of the channel; empty for an unknown channel.
  std::map<std::string, ScoredSeq> BestPerSpeaker(const storage::ChannelRef& channel,
                                                  const LexicalQuery& query) const;

  size_t ChannelCount() const;
  // Rebuilds a channel's index from `messages` (after deletions or edits),
  // swapping it in when built; searches meanwhile see the old one.
  void Replace(const storage::ChannelRef& channel, const std::vector<storage::Message>& messages);
  // Forgets a channel.
  void Drop(const storage::ChannelRef& channel);

 private:
  struct Shard {
    mutable std::shared_mutex mu;
    std::unique_ptr<Bm25Index> index;  // guarded by mu
    explicit Shard(Bm25Params p) : index(std::make_unique<Bm25Index>(p)) {}
  };
  Shard* GetOrCreate(const storage::ChannelRef& channel);
  const Shard* Find(const storage::ChannelRef& channel) const;

  const Bm25Params params_;
  mutable absl::Mutex mu_;
  std::map<storage::ChannelRef, std::unique_ptr<Shard>> shards_ ABSL_GUARDED_BY(mu_);
};

}  // namespace speakermem::retrieval

#endif  // SPEAKERMEM_RETRIEVAL_BM25_INDEX_H_
