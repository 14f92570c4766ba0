// The channel's record index behind the System 2 rows: built once from the
// store, then brought up to date by appending what the Writer wrote since,
// in place. Queries read it under a shared lock; one refresher at a time
// reads the store and embeds outside any lock, then appends under the
// exclusive lock for as long as indexing the new records takes. (A copy of
// the whole index per refresh made every query of a channel the Writer was
// writing into cost as much as the channel.)
#include <algorithm>

#include "common/status_macros.h"
#include "retrieval/pipeline.h"
#include "retrieval/pipeline_internal.h"
#include "storage/record_id.h"
#include "text/text.h"

namespace speakermem::retrieval {

using text::IsStopword;
using text::StemmedTokens;

using internal::ChannelRecords;
using internal::RecordSnapshot;

namespace {

void Unlink(std::vector<size_t>* v, size_t i) {
  v->erase(std::remove(v->begin(), v->end(), i), v->end());
}

}  // namespace

absl::StatusOr<QueryPipeline::RecordsView> QueryPipeline::Records(const storage::ChannelRef& ch,
                                                                  StageCall* call) {
  // Taken before reading the state: a later ticket saw a later state.
  const uint64_t ticket = ++build_ticket_;
  SM_ASSIGN_OR_RETURN(storage::WriterState state, store_->GetWriterState(ch));
  std::shared_ptr<ChannelRecords> index;
  {
    std::lock_guard<std::mutex> lock(cache_mu_);
    auto it = snapshots_.find(ch);
    if (it != snapshots_.end()) index = it->second;
  }
  if (index != nullptr) {
    std::unique_lock<std::mutex> refresh(index->refresh_mu);
    // Only refreshers write the index, and this is the one: it may be read
    // here without `mu`.
    if (index->snap.next_record < state.next_record) {
      SM_ASSIGN_OR_RETURN(std::optional<std::vector<storage::Record>> fresh,
                          NewerRecords(ch, index->snap, state));
      if (fresh.has_value()) {
        std::vector<std::shared_ptr<const std::vector<float>>> vecs;
        SM_RETURN_IF_ERROR(AttachVectors(ch, *fresh, &vecs, call));
        std::unique_lock<std::shared_mutex> write(index->mu);
        RecordSnapshot& snap = index->snap;
        const size_t first_new = snap.records.size();
        for (size_t i = 0; i < fresh->size(); ++i) {
          snap.records.push_back(std::move((*fresh)[i]));
          snap.vectors.push_back(std::move(vecs[i]));
        }
        snap.next_record = state.next_record;
        IndexRecords(first_new, &snap);
        ApplyChainLinks(first_new, &snap);
      } else {
        index = nullptr;  // rewritten under it: read everything again
      }
    }
    if (index != nullptr) return RecordsView(std::move(index));
  }
  auto built = std::make_shared<ChannelRecords>();
  built->ticket = ticket;
  RecordSnapshot& snap = built->snap;
  snap.next_record = state.next_record;
  storage::RecordQuery q;
  q.include_superseded = true;
  q.limit = UINT32_MAX;
  SM_ASSIGN_OR_RETURN(snap.records, store_->ListRecords(ch, q));
  SM_RETURN_IF_ERROR(AttachVectors(ch, snap.records, &snap.vectors, call));
  IndexRecords(0, &snap);
  {
    std::lock_guard<std::mutex> lock(cache_mu_);
    // Stored unless Forget came after the ticket, or a later build is there.
    auto floor = min_ticket_.find(ch);
    if (floor == min_ticket_.end() || ticket > floor->second) {
      auto& slot = snapshots_[ch];
      if (slot == nullptr || slot->ticket < ticket) slot = built;
    }
  }
  return RecordsView(std::move(built));
}

// Records are append-only per channel: when the index's last record is
// still there unchanged, the records after it (whose chain links all point
// at known records); otherwise (re-derivation) none: the caller reads
// everything.
absl::StatusOr<std::optional<std::vector<storage::Record>>> QueryPipeline::NewerRecords(
    const storage::ChannelRef& ch, const RecordSnapshot& prev, const storage::WriterState& state) {
  if (prev.next_record >= state.next_record || prev.records.empty()) return std::nullopt;
  const storage::Record& last = prev.records.back();
  absl::StatusOr<storage::Record> now = store_->GetRecord(ch, last.record_id);
  if (!now.ok() || now->content != last.content || now->writer_pos != last.writer_pos) {
    return std::nullopt;
  }
  storage::RecordQuery q;
  q.include_superseded = true;
  q.limit = UINT32_MAX;
  q.after_id = last.record_id;
  SM_ASSIGN_OR_RETURN(std::vector<storage::Record> fresh, store_->ListRecords(ch, q));
  for (const auto& r : fresh) {
    for (const auto& old : r.supersedes) {
      bool known = prev.by_id.count(old) > 0 ||
                   std::any_of(fresh.begin(), fresh.end(),
                               [&](const storage::Record& f) { return f.record_id == old; });
      if (!known) return std::nullopt;
    }
  }
  return fresh;
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

// Tokens and indexes (by id, owner, source, word) of the records from
// `first_new` on.
void QueryPipeline::IndexRecords(size_t first_new, RecordSnapshot* snap) {
  const size_t n = snap->records.size();
  for (size_t i = first_new; i < n; ++i) {
    const storage::Record& r = snap->records[i];
    std::vector<std::string> toks = StemmedTokens(r.content);
    std::sort(toks.begin(), toks.end());
    toks.erase(std::unique(toks.begin(), toks.end()), toks.end());
    std::vector<uint32_t> ids;
    for (const auto& tkn : toks) {
      auto [it, fresh] =
          snap->token_id.try_emplace(tkn, static_cast<uint32_t>(snap->token_id.size()));
      ids.push_back(it->second);
    }
    std::sort(ids.begin(), ids.end());
    snap->token_ids.push_back(std::move(ids));
    snap->tokens.push_back(std::move(toks));
    snap->by_id[r.record_id] = i;
    snap->nodes_by_owner[r.owner].push_back(i);
    for (const auto& tkn : snap->tokens.back()) {
      if (!IsStopword(tkn)) snap->node_postings[tkn].push_back(i);
    }
    if (r.active()) {
      snap->heads_by_owner[r.owner].push_back(i);
      snap->heads_by_source[r.source].push_back(i);
      for (const auto& tkn : snap->tokens.back()) {
        if (!IsStopword(tkn)) snap->postings[tkn].push_back(i);
      }
    }
  }
}

// The new records' chain links: their predecessors stop being heads.
void QueryPipeline::ApplyChainLinks(size_t first_new, RecordSnapshot* snap) {
  const size_t n = snap->records.size();
  for (size_t i = first_new; i < n; ++i) {
    for (const auto& old_id : snap->records[i].supersedes) {
      size_t o = snap->by_id.at(old_id);
      storage::Record& old = snap->records[o];
      if (!old.active()) continue;
      old.superseded_by = snap->records[i].record_id;
      Unlink(&snap->heads_by_owner[old.owner], o);
      Unlink(&snap->heads_by_source[old.source], o);
      for (const auto& tkn : snap->tokens[o]) {
        auto p = snap->postings.find(tkn);
        if (p != snap->postings.end()) Unlink(&p->second, o);
      }
    }
  }
}

}  // namespace speakermem::retrieval
