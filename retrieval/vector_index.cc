#include "retrieval/vector_index.h"

#include <faiss/IndexFlat.h>
#include <faiss/IndexHNSW.h>
#include <faiss/IndexIDMap.h>
#include <faiss/impl/AuxIndexStructures.h>
#include <faiss/impl/FaissException.h>
#include <faiss/impl/IDSelector.h>

#include <omp.h>

#include <algorithm>
#include <mutex>
#include <shared_mutex>
#include <unordered_set>

#include "absl/strings/str_cat.h"

namespace speakermem::retrieval {
namespace {

using idx_t = faiss::Index::idx_t;

absl::Status FromFaiss(const faiss::FaissException& e, absl::string_view what) {
  return absl::InternalError(absl::StrCat("vector index ", what, ": ", e.what()));
}

}  // namespace

class VectorShard::Impl {
 public:
  Impl(size_t dim, const VectorIndexOptions& o) : dim_(dim), options_(o) { Reset(false); }

  // REQUIRES: mu held exclusively.
  void Reset(bool hnsw) {
    hnsw_ = hnsw;
    if (hnsw) {
      auto* h = new faiss::IndexHNSWFlat(static_cast<int>(dim_), options_.hnsw_m,
                                         faiss::METRIC_INNER_PRODUCT);
      h->hnsw.efSearch = options_.hnsw_ef_search;
      inner_.reset(h);
    } else {
      inner_.reset(new faiss::IndexFlatIP(static_cast<idx_t>(dim_)));
    }
    map_ = std::make_unique<faiss::IndexIDMap2>(inner_.get());
    tombstones_.clear();
  }

  // Moves every live vector into a fresh index of the right kind.
  // REQUIRES: mu held exclusively.
  void Rebuild(bool hnsw) {
    std::vector<idx_t> ids;
    std::vector<float> data;
    for (idx_t i = 0; i < map_->ntotal; ++i) {
      idx_t id = map_->id_map[i];
      if (tombstones_.count(id)) continue;
      ids.push_back(id);
      size_t off = data.size();
      data.resize(off + dim_);
      map_->reconstruct(id, data.data() + off);
    }
    Reset(hnsw);
    if (!ids.empty()) map_->add_with_ids(static_cast<idx_t>(ids.size()), data.data(), ids.data());
  }

  size_t Live() const { return static_cast<size_t>(map_->ntotal) - tombstones_.size(); }

  mutable std::shared_mutex mu;
  const size_t dim_;
  const VectorIndexOptions options_;
  bool hnsw_ = false;
  std::unique_ptr<faiss::Index> inner_;
  std::unique_ptr<faiss::IndexIDMap2> map_;  // owns nothing; wraps inner_
  std::unordered_set<idx_t> tombstones_;     // HNSW only
};

VectorShard::VectorShard(size_t dimension, const VectorIndexOptions& options)
    : dim_(dimension), impl_(std::make_unique<Impl>(dimension, options)) {
  // One query is one thread: the server parallelises across requests, and
  // OpenMP teams inside a single-vector search only add overhead and
  // contention on small machines.
  static std::once_flag once;
  std::call_once(once, [] { omp_set_num_threads(1); });
}

VectorShard::~VectorShard() = default;

absl::Status VectorShard::Add(const std::vector<uint64_t>& ids,
                              const std::vector<std::vector<float>>& vecs) {
  if (ids.size() != vecs.size()) return absl::InvalidArgumentError("ids and vectors differ in count");
  std::vector<float> data;
  data.reserve(ids.size() * dim_);
  for (const auto& v : vecs) {
    if (v.size() != dim_) {
      return absl::InvalidArgumentError(
          absl::StrCat("vector of dimension ", v.size(), " in a shard of dimension ", dim_));
    }
    data.insert(data.end(), v.begin(), v.end());
  }
  std::unique_lock<std::shared_mutex> lock(impl_->mu);
  try {
    // Replace ids already present.
    std::vector<idx_t> present;
    for (uint64_t id : ids) {
      idx_t i = static_cast<idx_t>(id);
      if (impl_->map_->rev_map.count(i)) present.push_back(i);
    }
    if (!present.empty()) {
      lock.unlock();
      std::vector<uint64_t> rm(present.begin(), present.end());
      absl::Status s = Remove(rm);
      if (!s.ok()) return s;
      lock.lock();
      if (impl_->hnsw_) impl_->Rebuild(true);  // tombstoned ids cannot be re-added
    }
    std::vector<idx_t> xids(ids.begin(), ids.end());
    impl_->map_->add_with_ids(static_cast<idx_t>(xids.size()), data.data(), xids.data());
    if (!impl_->hnsw_ && impl_->Live() > impl_->options_.hnsw_threshold) impl_->Rebuild(true);
  } catch (const faiss::FaissException& e) {
    return FromFaiss(e, "add");
  }
  return absl::OkStatus();
}

absl::Status VectorShard::Remove(const std::vector<uint64_t>& ids) {
  std::unique_lock<std::shared_mutex> lock(impl_->mu);
  try {
    if (impl_->hnsw_) {
      for (uint64_t id : ids) {
        idx_t i = static_cast<idx_t>(id);
        if (impl_->map_->rev_map.count(i)) impl_->tombstones_.insert(i);
      }
      const double ratio = impl_->map_->ntotal == 0
                               ? 0
                               : static_cast<double>(impl_->tombstones_.size()) /
                                     static_cast<double>(impl_->map_->ntotal);
      if (ratio > impl_->options_.rebuild_tombstone_ratio) {
        impl_->Rebuild(impl_->Live() > impl_->options_.hnsw_threshold);
      }
    } else {
      std::vector<idx_t> xids(ids.begin(), ids.end());
      faiss::IDSelectorArray sel(xids.size(), xids.data());
      impl_->map_->remove_ids(sel);
    }
  } catch (const faiss::FaissException& e) {
    return FromFaiss(e, "remove");
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<ScoredSeq>> VectorShard::Search(const std::vector<float>& query,
                                                           size_t k) const {
  if (query.size() != dim_) {
    return absl::InvalidArgumentError(
        absl::StrCat("query of dimension ", query.size(), " in a shard of dimension ", dim_));
  }
  std::shared_lock<std::shared_mutex> lock(impl_->mu);
  std::vector<ScoredSeq> out;
  const idx_t total = impl_->map_->ntotal;
  if (total == 0 || k == 0) return out;
  const idx_t want = std::min<idx_t>(total, static_cast<idx_t>(k + impl_->tombstones_.size()));
  std::vector<float> dist(want);
  std::vector<idx_t> labels(want);
  try {
    impl_->map_->search(1, query.data(), want, dist.data(), labels.data());
  } catch (const faiss::FaissException& e) {
    return FromFaiss(e, "search");
  }
  for (idx_t i = 0; i < want && out.size() < k; ++i) {
    if (labels[i] < 0 || impl_->tombstones_.count(labels[i])) continue;
    out.push_back(ScoredSeq{static_cast<uint64_t>(labels[i]), dist[i]});
  }
  return out;
}

size_t VectorShard::size() const {
  std::shared_lock<std::shared_mutex> lock(impl_->mu);
  return impl_->Live();
}

bool VectorShard::approximate() const {
  std::shared_lock<std::shared_mutex> lock(impl_->mu);
  return impl_->hnsw_;
}

std::shared_ptr<VectorShard> VectorIndex::Find(const storage::ChannelRef& channel) const {
  absl::ReaderMutexLock lock(&mu_);
  auto it = shards_.find(channel);
  return it == shards_.end() ? nullptr : it->second;
}

absl::Status VectorIndex::Add(const storage::ChannelRef& channel, const std::vector<uint64_t>& ids,
                              const std::vector<std::vector<float>>& vecs) {
  if (ids.empty()) return absl::OkStatus();
  std::shared_ptr<VectorShard> shard = Find(channel);
  if (shard == nullptr) {
    absl::MutexLock lock(&mu_);
    auto& slot = shards_[channel];
    if (!slot) slot = std::make_shared<VectorShard>(vecs.front().size(), options_);
    shard = slot;
  }
  return shard->Add(ids, vecs);
}

absl::Status VectorIndex::Remove(const storage::ChannelRef& channel,
                                 const std::vector<uint64_t>& ids) {
  std::shared_ptr<VectorShard> shard = Find(channel);
  return shard == nullptr ? absl::OkStatus() : shard->Remove(ids);
}

absl::StatusOr<std::vector<ScoredSeq>> VectorIndex::Search(const storage::ChannelRef& channel,
                                                           const std::vector<float>& query,
                                                           size_t k) const {
  std::shared_ptr<VectorShard> shard = Find(channel);
  if (shard == nullptr) return std::vector<ScoredSeq>{};
  return shard->Search(query, k);
}

size_t VectorIndex::Size(const storage::ChannelRef& channel) const {
  std::shared_ptr<VectorShard> shard = Find(channel);
  return shard == nullptr ? 0 : shard->size();
}

void VectorIndex::Clear() {
  absl::MutexLock lock(&mu_);
  shards_.clear();
}

}  // namespace speakermem::retrieval
