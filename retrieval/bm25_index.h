// Okapi BM25 over System 1 messages, held in memory and rebuilt from the
// store at start.
#ifndef SPEAKERMEM_RETRIEVAL_BM25_INDEX_H_
#define SPEAKERMEM_RETRIEVAL_BM25_INDEX_H_

#include <cstdint>
#include <map>
#include <memory>
#include <shared_mutex>
#include <string>
#include "absl/strings/string_view.h"
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "storage/types.h"

namespace speakermem::retrieval {

struct Bm25Params {
  // Term-frequency saturation. Default: 1.2.
  float k1 = 1.2f;
  // Length normalisation (0 = none, 1 = full). Default: 0.75.
  float b = 0.75f;
};

struct ScoredSeq {
  uint64_t seq = 0;
  float score = 0;
};

// One channel's inverted index. Not thread-safe: LexicalIndex guards it.
class Bm25Index {
 public:
  explicit Bm25Index(Bm25Params params = {}) : params_(params) {}

  // Adds a document, said by `speaker` (a speaker id; may be empty). A seq
  // added before is ignored.
  void Add(uint64_t seq, int64_t timestamp_ms, absl::string_view text,
           absl::string_view speaker = "");

  // The `k` best documents for `terms` (tokenized, duplicates allowed and
  // ignored), best first; ties by lower seq. Only documents with
  // start_ms <= timestamp < end_ms (0 = unbounded) count. IDF is
  // ln(1 + (N - df + 0.5) / (df + 0.5)), so it is never negative.
  // With `speakers` non-null, only documents said by one of them count.
  std::vector<ScoredSeq> Search(const std::vector<std::string>& terms, size_t k,
                                int64_t start_ms = 0, int64_t end_ms = 0,
                                const std::vector<std::string>* speakers = nullptr) const;

  size_t size() const { return seqs_.size(); }

 private:
  struct Posting {
    uint32_t doc;
    uint32_t tf;
  };

  const Bm25Params params_;
  absl::flat_hash_map<std::string, uint32_t> term_ids_;
  std::vector<std::vector<Posting>> postings_;
  std::vector<uint64_t> seqs_;
  std::vector<uint32_t> lengths_;
  std::vector<int64_t> timestamps_;
  std::vector<uint32_t> speakers_;  // interned; 0 = unknown
  absl::flat_hash_map<std::string, uint32_t> speaker_ids_;
  absl::flat_hash_map<uint64_t, uint32_t> doc_of_seq_;
  uint64_t total_length_ = 0;
};

// The lexical indexes of all channels. Safe for concurrent use: searches of
// one channel run in parallel; an Add excludes searches of that channel only.
class LexicalIndex {
 public:
  explicit LexicalIndex(Bm25Params params = {}) : params_(params) {}

  void Add(const storage::ChannelRef& channel, uint64_t seq, int64_t timestamp_ms,
           absl::string_view text, absl::string_view speaker = "");
  void AddBatch(const storage::ChannelRef& channel,
                const std::vector<storage::Message>& messages);

  // Tokenizes `query` and searches the channel; empty for an unknown channel.
  std::vector<ScoredSeq> Search(const storage::ChannelRef& channel,
                                absl::string_view query, size_t k,
                                int64_t start_ms = 0, int64_t end_ms = 0,
                                const std::vector<std::string>* speakers = nullptr) const;

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
