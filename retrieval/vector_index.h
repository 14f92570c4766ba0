// Dense vector shards (FAISS), one per channel and track, held in memory.
// The vectors column family is the source of truth; shards are rebuilt from
// it. Exact inner-product search (IndexFlatIP) up to
// VectorIndexOptions::hnsw_threshold vectors, HNSW above it. HNSW cannot
// remove ids: removals there are tombstones filtered at search time, and the
// shard is rebuilt when tombstones pass a share of its size. FAISS exceptions
// stop here and become absl::Status.
#ifndef SPEAKERMEM_RETRIEVAL_VECTOR_INDEX_H_
#define SPEAKERMEM_RETRIEVAL_VECTOR_INDEX_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "retrieval/bm25_index.h"
#include "storage/types.h"

namespace speakermem::retrieval {

struct VectorIndexOptions {
  // Shards with more vectors than this switch from exact search to HNSW.
  // Exact search over 100,000 256-d vectors costs a few ms on one core,
  // while FAISS HNSW inserts here cost ~1-3 ms per vector (20,000 take ~18 s
  // to build), too slow for the embedder to keep up below this size.
  // Default: 200000.
  size_t hnsw_threshold = 200000;
  // HNSW graph degree and search breadth. Defaults: 32, 128.
  int hnsw_m = 32;
  int hnsw_ef_search = 128;
  // Rebuild an HNSW shard when tombstones exceed this share of it. 0.2.
  double rebuild_tombstone_ratio = 0.2;
};

// One shard. Safe for concurrent use: searches share a lock, mutations
// (FAISS requires it) take it exclusively.
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

 private:
  class Impl;
  const size_t dim_;
  std::unique_ptr<Impl> impl_;
};

// The shards of all channels for one track (messages or records). Safe for
// concurrent use.
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
  // Drops every shard (e.g. after the embedding model changed dimension).
  void Clear();

 private:
  std::shared_ptr<VectorShard> Find(const storage::ChannelRef& channel) const;

  const VectorIndexOptions options_;
  mutable absl::Mutex mu_;
  std::map<storage::ChannelRef, std::shared_ptr<VectorShard>> shards_ ABSL_GUARDED_BY(mu_);
};

}  // namespace speakermem::retrieval

#endif  // SPEAKERMEM_RETRIEVAL_VECTOR_INDEX_H_
