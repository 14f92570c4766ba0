#include "retrieval/vector_index.h"

#include <faiss/IndexFlat.h>
#include <faiss/IndexIDMap.h>
#include <faiss/IndexIVFFlat.h>
#include <faiss/impl/FaissException.h>
#include <faiss/impl/IDSelector.h>
#include <faiss/index_io.h>
#include <faiss/invlists/InvertedLists.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <shared_mutex>
#include <sstream>
#include <unordered_set>

#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/log.h"
#include "retrieval/blas_threads.h"

namespace speakermem::retrieval {
namespace {

using idx_t = faiss::Index::idx_t;

absl::Status FromFaiss(const std::exception& e, absl::string_view what) {
  return absl::InternalError(absl::StrCat("vector index ", what, ": ", e.what()));
}

constexpr char kMetaMagic[] = "speakermem-shard v1";

}  // namespace

std::string ShardFileStem(const storage::ChannelRef& channel) {
  // FNV-1a over "tenant\0channel": names of any length and alphabet map to
  // a short safe file name; the .meta file holds the real names.
  uint64_t h = 1469598103934665603ULL;
  auto mix = [&](const std::string& s) {
    for (unsigned char c : s) {
      h ^= c;
      h *= 1099511628211ULL;
    }
  };
  mix(channel.tenant);
  mix(std::string(1, '\0'));
  mix(channel.channel);
  return absl::StrFormat("%016x", h);
}

class VectorShard::Impl {
 public:
  Impl(size_t dim, const VectorIndexOptions& o) : dim_(dim), options_(o) { index_ = MakeFlat(); }

  std::unique_ptr<faiss::Index> MakeFlat() const {
    auto map =
        std::make_unique<faiss::IndexIDMap2>(new faiss::IndexFlatIP(static_cast<idx_t>(dim_)));
    map->own_fields = true;
    return map;
  }

  // Every (id, vector) of `index`. REQUIRES: no concurrent mutation.
  void Dump(const faiss::Index& index, std::vector<idx_t>* ids, std::vector<float>* data) const {
    if (const auto* map = dynamic_cast<const faiss::IndexIDMap2*>(&index)) {
      const auto* flat = dynamic_cast<const faiss::IndexFlat*>(map->index);
      ids->assign(map->id_map.begin(), map->id_map.end());
      data->assign(flat->get_xb(), flat->get_xb() + map->ntotal * dim_);
      return;
    }
    const auto* ivf = dynamic_cast<const faiss::IndexIVFFlat*>(&index);
    ids->clear();
    data->clear();
    for (size_t l = 0; l < ivf->nlist; ++l) {
      size_t n = ivf->invlists->list_size(l);
      if (n == 0) continue;
      faiss::InvertedLists::ScopedIds lids(ivf->invlists, l);
      faiss::InvertedLists::ScopedCodes codes(ivf->invlists, l);
      ids->insert(ids->end(), lids.get(), lids.get() + n);
      const float* f = reinterpret_cast<const float*>(codes.get());
      data->insert(data->end(), f, f + n * dim_);
    }
  }

  // A fresh IVF index trained on (a sample of) `data` and holding all of it.
  std::unique_ptr<faiss::Index> MakeIvf(const std::vector<idx_t>& ids,
                                        const std::vector<float>& data) const {
    const size_t n = ids.size();
    const size_t nlist =
        std::clamp<size_t>(static_cast<size_t>(std::sqrt(static_cast<double>(n))), 64, 4096);
    auto* quantizer = new faiss::IndexFlatIP(static_cast<idx_t>(dim_));
    auto ivf =
        std::make_unique<faiss::IndexIVFFlat>(quantizer, dim_, nlist, faiss::METRIC_INNER_PRODUCT);
    ivf->own_fields = true;
    ivf->cp.niter = 10;
    ivf->cp.seed = 1234;
    ivf->cp.max_points_per_centroid = 64;  // k-means on at most 64 x nlist points
    ivf->nprobe = std::min(options_.ivf_nprobe, nlist);
    ivf->train(static_cast<idx_t>(n), data.data());
    ivf->add_with_ids(static_cast<idx_t>(n), data.data(), ids.data());
    return ivf;
  }

  bool NeedsRetrain() const {
    const size_t live = ids_.size();
    if (trained_at_ == 0) return live > options_.ivf_threshold;
    return static_cast<double>(live) >
           options_.ivf_retrain_growth * static_cast<double>(trained_at_);
  }

  // Builds the IVF index beside the live one, then swaps it in.
  // REQUIRES: write_mu held (no other mutation runs).
  void Retrain() {
    std::vector<idx_t> ids;
    std::vector<float> data;
    {
      std::shared_lock<std::shared_mutex> lock(mu);
      Dump(*index_, &ids, &data);
    }
    auto started = std::chrono::steady_clock::now();
    std::unique_ptr<faiss::Index> fresh = MakeIvf(ids, data);
    {
      std::unique_lock<std::shared_mutex> lock(mu);
      index_ = std::move(fresh);
      trained_at_ = ids.size();
    }
    LOG_INFO("vector shard trained")
        .Int("vectors", static_cast<int64_t>(ids.size()))
        .Int("ms", static_cast<int64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                            std::chrono::steady_clock::now() - started)
                                            .count()));
  }

  std::mutex write_mu;           // serialises mutations (and saves)
  mutable std::shared_mutex mu;  // guards index_ against concurrent search
  const size_t dim_;
  const VectorIndexOptions options_;
  std::unique_ptr<faiss::Index> index_;
  std::unordered_set<idx_t> ids_;  // live ids; guarded by write_mu
  size_t trained_at_ = 0;          // 0: exact; guarded by write_mu (read under mu)
  mutable bool dirty_ = false;     // guarded by write_mu
};

VectorShard::VectorShard(size_t dimension, const VectorIndexOptions& options)
    : dim_(dimension), impl_(std::make_unique<Impl>(dimension, options)) {
  // One query is one thread: the server parallelises across requests, and
  // OpenMP teams inside a single-vector search only add overhead and
  // contention on small machines. The same for the BLAS that FAISS's inner
  // products call: OpenBLAS (Debian's usual libblas.so.3) starts a pool of
  // workers at load, at normal priority, that spin in sched_yield after every
  // call; on two cores they took 7% of the ingest profile, and the
  // embedder's background (SCHED_IDLE) thread handed them its work. With one
  // thread, a BLAS call runs on its caller's thread at its caller's priority.
  static std::once_flag once;
  std::call_once(once, [] {
    omp_set_num_threads(1);
    LimitBlasThreads(1);
  });
}

VectorShard::~VectorShard() = default;

absl::Status VectorShard::Add(const std::vector<uint64_t>& ids,
                              const std::vector<std::vector<float>>& vecs) {
  if (ids.size() != vecs.size())
    return absl::InvalidArgumentError("ids and vectors differ in count");
  std::vector<float> data;
  data.reserve(ids.size() * dim_);
  for (const auto& v : vecs) {
    if (v.size() != dim_) {
      return absl::InvalidArgumentError(
          absl::StrCat("vector of dimension ", v.size(), " in a shard of dimension ", dim_));
    }
    data.insert(data.end(), v.begin(), v.end());
  }
  std::lock_guard<std::mutex> write(impl_->write_mu);
  try {
    std::vector<idx_t> present;
    for (uint64_t id : ids) {
      if (impl_->ids_.count(static_cast<idx_t>(id))) present.push_back(static_cast<idx_t>(id));
    }
    std::vector<idx_t> xids(ids.begin(), ids.end());
    const auto n = static_cast<idx_t>(xids.size());
    // An IVF index assigns each vector to its list first, the bulk of an
    // add's work: done under the shared lock, beside searches, so a search
    // never waits on it (the embedder adds at background priority, and a
    // search queued behind its exclusive lock would wait for it to get the
    // CPU back). The index cannot change in between: write_mu is held.
    auto* ivf = dynamic_cast<faiss::IndexIVF*>(impl_->index_.get());
    std::vector<idx_t> lists;
    if (ivf != nullptr) {
      std::shared_lock<std::shared_mutex> lock(impl_->mu);
      lists.resize(xids.size());
      ivf->quantizer->assign(n, data.data(), lists.data());
    }
    {
      std::unique_lock<std::shared_mutex> lock(impl_->mu);
      if (!present.empty()) {
        faiss::IDSelectorBatch sel(present.size(), present.data());
        impl_->index_->remove_ids(sel);
      }
      if (ivf != nullptr) {
        ivf->add_core(n, data.data(), xids.data(), lists.data());
      } else {
        impl_->index_->add_with_ids(n, data.data(), xids.data());
      }
    }
    impl_->ids_.insert(xids.begin(), xids.end());
    impl_->dirty_ = true;
    if (impl_->NeedsRetrain()) impl_->Retrain();
  } catch (const std::exception& e) {
    return FromFaiss(e, "add");
  }
  return absl::OkStatus();
}

absl::Status VectorShard::Remove(const std::vector<uint64_t>& ids) {
  std::lock_guard<std::mutex> write(impl_->write_mu);
  std::vector<idx_t> present;
  for (uint64_t id : ids) {
    if (impl_->ids_.count(static_cast<idx_t>(id))) present.push_back(static_cast<idx_t>(id));
  }
  if (present.empty()) return absl::OkStatus();
  try {
    std::unique_lock<std::shared_mutex> lock(impl_->mu);
    faiss::IDSelectorBatch sel(present.size(), present.data());
    impl_->index_->remove_ids(sel);
  } catch (const std::exception& e) {
    return FromFaiss(e, "remove");
  }
  for (idx_t id : present) impl_->ids_.erase(id);
  impl_->dirty_ = true;
  // A shard that shrank far below its threshold goes back to exact search.
  if (impl_->trained_at_ != 0 && impl_->ids_.size() * 2 < impl_->options_.ivf_threshold) {
    try {
      std::vector<idx_t> all;
      std::vector<float> data;
      std::unique_lock<std::shared_mutex> lock(impl_->mu);
      impl_->Dump(*impl_->index_, &all, &data);
      impl_->index_ = impl_->MakeFlat();
      impl_->index_->add_with_ids(static_cast<idx_t>(all.size()), data.data(), all.data());
      impl_->trained_at_ = 0;
    } catch (const std::exception& e) {
      return FromFaiss(e, "rebuild");
    }
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
  const idx_t total = impl_->index_->ntotal;
  if (total == 0 || k == 0) return out;
  const idx_t want = std::min<idx_t>(total, static_cast<idx_t>(k));
  std::vector<float> dist(want);
  std::vector<idx_t> labels(want);
  try {
    impl_->index_->search(1, query.data(), want, dist.data(), labels.data());
  } catch (const std::exception& e) {
    return FromFaiss(e, "search");
  }
  for (idx_t i = 0; i < want; ++i) {
    if (labels[i] < 0) continue;
    out.push_back(ScoredSeq{static_cast<uint64_t>(labels[i]), dist[i]});
  }
  return out;
}

size_t VectorShard::size() const {
  std::shared_lock<std::shared_mutex> lock(impl_->mu);
  return static_cast<size_t>(impl_->index_->ntotal);
}

bool VectorShard::approximate() const {
  std::shared_lock<std::shared_mutex> lock(impl_->mu);
  return dynamic_cast<const faiss::IndexIVF*>(impl_->index_.get()) != nullptr;
}

std::set<uint64_t> VectorShard::Ids() const {
  std::lock_guard<std::mutex> write(impl_->write_mu);
  return std::set<uint64_t>(impl_->ids_.begin(), impl_->ids_.end());
}

bool VectorShard::dirty() const {
  std::lock_guard<std::mutex> write(impl_->write_mu);
  return impl_->dirty_;
}

absl::Status VectorShard::Save(const std::string& path) const {
  std::lock_guard<std::mutex> write(impl_->write_mu);
  const std::string tmp = path + ".tmp";
  try {
    std::shared_lock<std::shared_mutex> lock(impl_->mu);
    faiss::write_index(impl_->index_.get(), tmp.c_str());
  } catch (const std::exception& e) {
    return FromFaiss(e, "save");
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) return absl::InternalError(absl::StrCat("vector index save: ", path, ": ", ec.message()));
  impl_->dirty_ = false;
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<VectorShard>> VectorShard::Load(const std::string& path,
                                                               size_t dimension,
                                                               const VectorIndexOptions& options) {
  std::unique_ptr<faiss::Index> index;
  try {
    index.reset(faiss::read_index(path.c_str()));
  } catch (const std::exception& e) {
    return FromFaiss(e, absl::StrCat("load ", path));
  }
  if (dimension != 0 && static_cast<size_t>(index->d) != dimension) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": dimension ", index->d, ", expected ", dimension));
  }
  auto* map = dynamic_cast<faiss::IndexIDMap2*>(index.get());
  auto* ivf = dynamic_cast<faiss::IndexIVFFlat*>(index.get());
  if ((map == nullptr || dynamic_cast<faiss::IndexFlatIP*>(map->index) == nullptr) &&
      ivf == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": not a SpeakerMem vector shard"));
  }
  auto shard = std::make_unique<VectorShard>(static_cast<size_t>(index->d), options);
  Impl& impl = *shard->impl_;
  std::vector<idx_t> ids;
  std::vector<float> data;
  impl.Dump(*index, &ids, &data);
  impl.ids_.insert(ids.begin(), ids.end());
  if (ivf != nullptr) {
    ivf->nprobe = std::min(options.ivf_nprobe, ivf->nlist);
    impl.trained_at_ = std::max<size_t>(ids.size(), 1);
  }
  impl.index_ = std::move(index);
  return shard;
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

bool VectorIndex::Approximate(const storage::ChannelRef& channel) const {
  std::shared_ptr<VectorShard> shard = Find(channel);
  return shard != nullptr && shard->approximate();
}

std::set<uint64_t> VectorIndex::Ids(const storage::ChannelRef& channel) const {
  std::shared_ptr<VectorShard> shard = Find(channel);
  return shard == nullptr ? std::set<uint64_t>{} : shard->Ids();
}

void VectorIndex::Drop(const storage::ChannelRef& channel, const std::string& dir) {
  {
    absl::MutexLock lock(&mu_);
    shards_.erase(channel);
  }
  if (dir.empty()) return;
  std::error_code ec;
  const std::string stem = (std::filesystem::path(dir) / ShardFileStem(channel)).string();
  std::filesystem::remove(stem + ".faiss", ec);
  std::filesystem::remove(stem + ".meta", ec);
}

void VectorIndex::Clear() {
  absl::MutexLock lock(&mu_);
  shards_.clear();
}

absl::StatusOr<size_t> VectorIndex::Save(const std::string& dir,
                                         const std::string& fingerprint) const {
  std::map<storage::ChannelRef, std::shared_ptr<VectorShard>> shards;
  {
    absl::ReaderMutexLock lock(&mu_);
    shards = shards_;
  }
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return absl::InternalError(absl::StrCat("vector shards: ", dir, ": ", ec.message()));
  size_t written = 0;
  for (const auto& [ch, shard] : shards) {
    if (!shard->dirty()) continue;
    const std::string stem = (std::filesystem::path(dir) / ShardFileStem(ch)).string();
    {
      std::ofstream meta(stem + ".meta.tmp", std::ios::trunc);
      meta << kMetaMagic << "\n"
           << absl::BytesToHexString(fingerprint) << "\n"
           << absl::BytesToHexString(ch.tenant) << "\n"
           << absl::BytesToHexString(ch.channel) << "\n"
           << shard->dimension() << "\n";
      if (!meta.good())
        return absl::InternalError(absl::StrCat("vector shards: cannot write ", stem));
    }
    absl::Status s = shard->Save(stem + ".faiss");
    if (!s.ok()) return s;
    std::filesystem::rename(stem + ".meta.tmp", stem + ".meta", ec);
    if (ec) return absl::InternalError(absl::StrCat("vector shards: ", stem, ": ", ec.message()));
    ++written;
  }
  return written;
}

absl::StatusOr<std::vector<storage::ChannelRef>> VectorIndex::Load(const std::string& dir,
                                                                   const std::string& fingerprint) {
  std::vector<storage::ChannelRef> loaded;
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) return loaded;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    const std::filesystem::path path = entry.path();
    if (path.extension() != ".meta") {
      // Leftovers of an interrupted save; orphans are removed below.
      if (path.extension() == ".tmp") std::filesystem::remove(path, ec);
      continue;
    }
    const std::string stem = (path.parent_path() / path.stem()).string();
    auto discard = [&](absl::string_view why) {
      LOG_WARN("vector shard discarded; rebuilding it from the store")
          .Str("file", stem)
          .Str("why", why);
      std::filesystem::remove(stem + ".meta", ec);
      std::filesystem::remove(stem + ".faiss", ec);
    };
    std::ifstream in(path);
    std::string magic, fp_hex, tenant_hex, channel_hex, dim_text;
    std::getline(in, magic);
    std::getline(in, fp_hex);
    std::getline(in, tenant_hex);
    std::getline(in, channel_hex);
    std::getline(in, dim_text);
    size_t dim = 0;
    if (magic != kMetaMagic || !absl::SimpleAtoi(dim_text, &dim)) {
      discard("unreadable metadata");
      continue;
    }
    if (absl::HexStringToBytes(fp_hex) != fingerprint) {
      discard("another embedding model");
      continue;
    }
    storage::ChannelRef ch{absl::HexStringToBytes(tenant_hex), absl::HexStringToBytes(channel_hex)};
    absl::StatusOr<std::unique_ptr<VectorShard>> shard =
        VectorShard::Load(stem + ".faiss", dim, options_);
    if (!shard.ok()) {
      discard(shard.status().message());
      continue;
    }
    {
      absl::MutexLock lock(&mu_);
      shards_[ch] = std::shared_ptr<VectorShard>(std::move(*shard));
    }
    loaded.push_back(ch);
  }
  return loaded;
}

}  // namespace speakermem::retrieval
