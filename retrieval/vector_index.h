// Dense vector shards (FAISS), one per channel, held in memory and saved to
// disk as a cache. The vectors column family is the source of truth: a
// shard file that is missing, of another embedding model or unreadable is
// rebuilt from it, and one that is behind is brought level at start.
//
// Exact inner-product search (IndexFlatIP) up to
// VectorIndexOptions::ivf_threshold vectors; above it an inverted-file index
// (IVF-Flat, inner product) trained on the shard's own vectors, retrained as
// the shard grows. Both remove ids natively, so a deleted vector is gone at
// once. Training happens beside the live index: searches keep running on the
// old one until the new one is swapped in. FAISS exceptions stop here and
// become absl::Status.
#ifndef SPEAKERMEM_RETRIEVAL_VECTOR_INDEX_H_
#define SPEAKERMEM_RETRIEVAL_VECTOR_INDEX_H_

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "retrieval/bm25_index.h"
#include "storage/types.h"

namespace speakermem::retrieval {

struct VectorIndexOptions {
  // Shards with more live vectors than this switch from exact search to
  // IVF-Flat. Exact search reads every vector (100,000 x 256 floats is
  // ~100 MB per query, ~20 ms on one core here). Default: 20000.
  size_t ivf_threshold = 20000;
  // An IVF shard is retrained (more lists) when it has grown this many
  // times past the size it was trained at. Default: 4.
  double ivf_retrain_growth = 4.0;
  // Inverted lists probed per search; lists are ~sqrt(n) (64 to 4096), so
  // 32 of ~320 lists at 100,000 vectors reads ~10% of them. Default: 32.
  size_t ivf_nprobe = 32;
};

// One shard. Safe for concurrent use: searches share a lock; a mutation
// holds a writer lock (FAISS forbids mutating while searching) only while it
// changes the live index.
class VectorShard {
 public:
  VectorShard(size_t dimension, const VectorIndexOptions& options);
  ~VectorShard();

  // Adds vectors (L2-normalised, `dimension` floats each) under `ids`; an id
  // already present is replaced. INVALID_ARGUMENT on a dimension mismatch.
  absl::Status Add(const std::vector<uint64_t>& ids, const std::vector<std::vector<float>>& vecs);
  // Removes ids (absent ones are ignored).
  absl::Status Remove(const std::vector<uint64_t>& ids);
  // The k nearest by inner product, best first.
  absl::StatusOr<std::vector<ScoredSeq>> Search(const std::vector<float>& query, size_t k) const;

  size_t size() const;
  size_t dimension() const { return dim_; }
  bool approximate() const;
  // The ids held.
  std::set<uint64_t> Ids() const;
  // Whether it changed since it was loaded or last saved.
  bool dirty() const;

  // Writes the shard to `path` (atomically: a temporary file renamed).
  absl::Status Save(const std::string& path) const;
  // Reads a shard written by Save. INVALID_ARGUMENT when it is not a shard
  // of `dimension`, INTERNAL when unreadable.
  static absl::StatusOr<std::unique_ptr<VectorShard>> Load(const std::string& path,
                                                           size_t dimension,
                                                           const VectorIndexOptions& options);

 private:
  class Impl;
  const size_t dim_;
  std::unique_ptr<Impl> impl_;
};

// The shards of all channels. Safe for concurrent use.
class VectorIndex {
 public:
  explicit VectorIndex(VectorIndexOptions options = {}) : options_(options) {}

  absl::Status Add(const storage::ChannelRef& channel, const std::vector<uint64_t>& ids,
                   const std::vector<std::vector<float>>& vecs);
  absl::Status Remove(const storage::ChannelRef& channel, const std::vector<uint64_t>& ids);
  // Empty for a channel without vectors.
  absl::StatusOr<std::vector<ScoredSeq>> Search(const storage::ChannelRef& channel,
                                                const std::vector<float>& query, size_t k) const;
  size_t Size(const storage::ChannelRef& channel) const;
  bool Approximate(const storage::ChannelRef& channel) const;
  std::set<uint64_t> Ids(const storage::ChannelRef& channel) const;
  // Drops one channel's shard (its file too, when saved under `dir`).
  void Drop(const storage::ChannelRef& channel, const std::string& dir = "");
  // Drops every shard (e.g. after the embedding model changed dimension).
  void Clear();

  // Saves every changed shard under `dir`, tagged with the embedding
  // model's `fingerprint`; returns how many were written.
  absl::StatusOr<size_t> Save(const std::string& dir, const std::string& fingerprint) const;
  // Loads the shards saved under `dir` with this `fingerprint` and
  // `dimension` (0: any); files of another model or unreadable ones are
  // deleted (their channels are rebuilt from the store). Returns the
  // channels loaded.
  absl::StatusOr<std::vector<storage::ChannelRef>> Load(const std::string& dir,
                                                        const std::string& fingerprint);

 private:
  std::shared_ptr<VectorShard> Find(const storage::ChannelRef& channel) const;

  const VectorIndexOptions options_;
  mutable absl::Mutex mu_;
  std::map<storage::ChannelRef, std::shared_ptr<VectorShard>> shards_ ABSL_GUARDED_BY(mu_);
};

// The file name (without extension) of a channel's shard.
std::string ShardFileStem(const storage::ChannelRef& channel);

}  // namespace speakermem::retrieval

#endif  // SPEAKERMEM_RETRIEVAL_VECTOR_INDEX_H_
