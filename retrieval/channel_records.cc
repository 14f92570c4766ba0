// The channel's record index behind the System 2 rows: the index shared with
// the Writer (recordindex/), brought up to date with every record's vector.
#include <algorithm>

#include "common/status_macros.h"
#include "retrieval/pipeline.h"
#include "retrieval/pipeline_internal.h"
#include "storage/record_id.h"

namespace speakermem::retrieval {

absl::StatusOr<recordindex::IndexView> QueryPipeline::Records(const storage::ChannelRef& ch,
                                                              StageCall* call) {
  return indexes_->Current(
      ch, [this, &ch, call](const std::vector<storage::Record>& records,
                            std::vector<recordindex::ChannelIndexes::Vector>* out) {
        return AttachVectors(ch, records, out, call);
      });
}

// The vectors of `records`: known ones from the cache, the others embedded
// in batches and kept in the store. Records still in the embedder's queue
// are embedded here once (on the embedder's own thread when warming); the
// embedder then skips them (KnowsRecordVector), so each record is embedded
// once.
absl::Status QueryPipeline::AttachVectors(
    const storage::ChannelRef& ch, const std::vector<storage::Record>& records,
    std::vector<std::shared_ptr<const std::vector<float>>>* out, StageCall* call) {
  const size_t n = records.size();
  out->assign(n, nullptr);
  std::vector<size_t> missing;
  {
    std::lock_guard<std::mutex> lock(cache_mu_);
    for (size_t i = 0; i < n; ++i) {
      auto it = record_vectors_.find({ch, records[i].record_id});
      if (it != record_vectors_.end()) {
        (*out)[i] = it->second;
      } else {
        missing.push_back(i);
      }
    }
  }
  for (size_t off = 0; off < missing.size(); off += 256) {
    std::vector<std::string> texts;
    std::vector<uint64_t> ids;
    size_t end = std::min(missing.size(), off + 256);
    for (size_t j = off; j < end; ++j) {
      texts.push_back(records[missing[j]].content);
      ids.push_back(storage::RecordNumber(records[missing[j]].record_id));
    }
    SM_ASSIGN_OR_RETURN(std::vector<std::vector<float>> v, stages_->embed->Embed(texts, call));
    (void)store_->PutVectors(ch, storage::Store::VectorKind::kRecord, ids, v);
    std::lock_guard<std::mutex> lock(cache_mu_);
    for (size_t j = off; j < end; ++j) {
      auto shared = std::make_shared<const std::vector<float>>(std::move(v[j - off]));
      (*out)[missing[j]] = shared;
      record_vectors_[{ch, records[missing[j]].record_id}] = shared;
    }
  }
  return absl::OkStatus();
}

}  // namespace speakermem::retrieval
