// System 2 rows of the query pipeline (DESIGN 3, step 4): the channel's
// record snapshot and the rows cut from it.
#include <algorithm>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "retrieval/pipeline.h"
#include "retrieval/pipeline_internal.h"
#include "retrieval/text.h"

namespace speakermem::retrieval {

using internal::Clock;
using internal::Dot;
using internal::InRange;
using internal::Trace;

namespace {

void Unlink(std::vector<size_t>* v, size_t i) {
  v->erase(std::remove(v->begin(), v->end(), i), v->end());
}

}  // namespace

absl::StatusOr<std::shared_ptr<const QueryPipeline::RecordSnapshot>> QueryPipeline::Records(
    const storage::ChannelRef& ch, StageCall* call) {
  // Taken before reading the state: a later ticket saw a later state.
  const uint64_t ticket = ++build_ticket_;
  SM_ASSIGN_OR_RETURN(storage::WriterState state, store_->GetWriterState(ch));
  std::shared_ptr<const RecordSnapshot> prev;
  {
    std::lock_guard<std::mutex> lock(cache_mu_);
    auto it = snapshots_.find(ch);
    if (it != snapshots_.end()) prev = it->second;
  }
  if (prev != nullptr && prev->next_record == state.next_record) return prev;

  // Records are append-only per channel: when the previous snapshot's last
  // record is still there unchanged, read only the newer ones and apply
  // their chain links; otherwise (re-derivation, first use) read all.
  std::vector<storage::Record> fresh;
  bool incremental = false;
  if (prev != nullptr && prev->next_record < state.next_record && !prev->records.empty()) {
    const storage::Record& last = prev->records.back();
    absl::StatusOr<storage::Record> now = store_->GetRecord(ch, last.record_id);
    if (now.ok() && now->content == last.content && now->writer_pos == last.writer_pos) {
      storage::RecordQuery q;
      q.include_superseded = true;
      q.limit = UINT32_MAX;
      q.after_id = last.record_id;
      SM_ASSIGN_OR_RETURN(fresh, store_->ListRecords(ch, q));
      incremental = true;
      for (const auto& r : fresh) {
        for (const auto& old : r.supersedes) {
          bool known = prev->by_id.count(old) > 0 ||
                       std::any_of(fresh.begin(), fresh.end(),
                                   [&](const storage::Record& f) { return f.record_id == old; });
          if (!known) incremental = false;
        }
      }
    }
  }
  auto snap =
      incremental ? std::make_shared<RecordSnapshot>(*prev) : std::make_shared<RecordSnapshot>();
  snap->next_record = state.next_record;
  snap->ticket = ticket;
  size_t first_new = 0;
  if (incremental) {
    first_new = snap->records.size();
    for (auto& r : fresh) snap->records.push_back(std::move(r));
  } else {
    storage::RecordQuery q;
    q.include_superseded = true;
    q.limit = UINT32_MAX;
    SM_ASSIGN_OR_RETURN(snap->records, store_->ListRecords(ch, q));
    snap->tokens.clear();
    snap->vectors.clear();
  }
  const size_t n = snap->records.size();
  snap->vectors.resize(n);
  std::vector<size_t> missing;
  {
    std::lock_guard<std::mutex> lock(cache_mu_);
    for (size_t i = first_new; i < n; ++i) {
      auto it = record_vectors_.find({ch, snap->records[i].record_id});
      if (it != record_vectors_.end()) {
        snap->vectors[i] = it->second;
      } else {
        missing.push_back(i);
      }
    }
  }
  // Embed the records not seen before in batches; keep them in the store.
  // Records still in the embedder's queue are embedded here once (on the
  // embedder's own thread when warming); the embedder then skips them
  // (KnowsRecordVector), so each record is embedded once.
  for (size_t off = 0; off < missing.size(); off += 256) {
    std::vector<std::string> texts;
    std::vector<uint64_t> ids;
    size_t end = std::min(missing.size(), off + 256);
    for (size_t j = off; j < end; ++j) {
      texts.push_back(snap->records[missing[j]].content);
      ids.push_back(RecordNumber(snap->records[missing[j]].record_id));
    }
    SM_ASSIGN_OR_RETURN(std::vector<std::vector<float>> v, stages_->embed->Embed(texts, call));
    (void)store_->PutVectors(ch, storage::Store::VectorKind::kRecord, ids, v);
    std::lock_guard<std::mutex> lock(cache_mu_);
    for (size_t j = off; j < end; ++j) {
      auto shared = std::make_shared<const std::vector<float>>(std::move(v[j - off]));
      snap->vectors[missing[j]] = shared;
      record_vectors_[{ch, snap->records[missing[j]].record_id}] = shared;
    }
  }
  for (size_t i = first_new; i < n; ++i) {
    const storage::Record& r = snap->records[i];
    std::vector<std::string> toks = StemmedTokens(r.content);
    std::sort(toks.begin(), toks.end());
    toks.erase(std::unique(toks.begin(), toks.end()), toks.end());
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
  if (incremental) {
    // The new records' chain links: their predecessors stop being heads.
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
  std::lock_guard<std::mutex> lock(cache_mu_);
  // A concurrent build (query or warm-up) may have stored a newer one.
  auto floor = min_ticket_.find(ch);
  if (floor != min_ticket_.end() && snap->ticket <= floor->second)
    return std::shared_ptr<const RecordSnapshot>(snap);
  auto& slot = snapshots_[ch];
  if (slot == nullptr || slot->ticket < snap->ticket) slot = snap;
  return std::shared_ptr<const RecordSnapshot>(snap);
}

absl::Status QueryPipeline::SystemTwo(const PipelineRequest& req,
                                      const std::vector<RosterMember>& roster,
                                      PipelineResult* out) {
  auto t = Clock::now();
  StageCall call;
  call.deadline = req.deadline;
  const Projection& p = out->projection;
  const bool full = p.tense == Tense::kFull;
  // Rows: ALL = every member, GROUP, names.
  std::vector<std::string> rows;
  auto add_row = [&](const std::string& r) {
    if (std::find(rows.begin(), rows.end(), r) == rows.end()) rows.push_back(r);
  };
  for (const auto& r : p.rows) {
    if (r == kRowAll) {
      for (const auto& m : roster) add_row(m.speaker_id);
    } else {
      add_row(r);
    }
  }
  SM_ASSIGN_OR_RETURN(std::shared_ptr<const RecordSnapshot> snap, Records(req.channel, &call));
  const std::vector<storage::Record>& records = snap->records;
  SM_ASSIGN_OR_RETURN(std::vector<std::vector<float>> issue_v,
                      stages_->embed->Embed({p.issue.empty() ? req.question : p.issue}, &call));
  std::vector<std::string> issue_tokens = StemmedTokens(p.issue + " " + req.question);
  std::set<std::string> issue_set;
  for (auto& tkn : issue_tokens) {
    if (!IsStopword(tkn)) issue_set.insert(tkn);
  }
  // Similarity of a record to the issue: half dense, half lexical overlap
  // (the share of issue words the record contains). Memoised: a record can
  // be a candidate of two rows (owner and source).
  // `toks` sorted (the snapshot's are sorted and unique); `vec` may be null.
  auto Similarity = [&](const std::vector<std::string>& toks, const std::vector<float>* vec) {
    double lex = 0;
    for (const auto& tkn : issue_set) lex += std::binary_search(toks.begin(), toks.end(), tkn);
    lex = issue_set.empty() ? 0 : lex / static_cast<double>(issue_set.size());
    return 0.5 * (vec ? Dot(*vec, issue_v.front()) : 0.0) + 0.5 * lex;
  };
  const RowParams& rp = req.rows ? *req.rows : rows_;
  // System 1 evidence by rank: the first counts fully, the last little.
  std::unordered_map<std::string, double> s1_weight;
  for (size_t k = 0; k < out->s1.size(); ++k) {
    s1_weight.emplace(out->s1[k].message.message_id,
                      1.0 - static_cast<double>(k) / static_cast<double>(std::max<size_t>(
                                                         out->s1.size(), req.budgets.s1_top_k)));
  }
  std::unordered_map<size_t, double> scored;
  auto score = [&](size_t i) {
    auto memo = scored.find(i);
    if (memo != scored.end()) return memo->second;
    double v = Similarity(snap->tokens[i], snap->vectors[i].get());
    double backed = 0;
    for (const auto& id : records[i].from_ids) {
      auto w = s1_weight.find(id);
      if (w != s1_weight.end()) backed = std::max(backed, w->second);
    }
    v *= 1.0 + rp.provenance_weight * backed;
    scored.emplace(i, v);
    return v;
  };
  static const std::vector<size_t> kNone;
  auto bucket = [&](const std::map<std::string, std::vector<size_t>>& m,
                    const std::string& key) -> const std::vector<size_t>& {
    auto it = m.find(key);
    return it == m.end() ? kNone : it->second;
  };
  // Candidates: heads sharing a word with the issue, plus each bucket's most
  // recent heads (so a purely semantic match among recent state still
  // counts); scoring stays proportional to those, not to the channel.
  constexpr size_t kRecentPerBucket = 64;
  // Rarest issue words first, the most recent heads of each, up to a
  // thousand heads: words on most heads say little about which ones matter,
  // and scoring stays bounded however large the channel grows.
  constexpr size_t kMaxLexicalHits = 1000;
  auto hits_in = [&](const std::unordered_map<std::string, std::vector<size_t>>& postings) {
    std::vector<const std::vector<size_t>*> lists;
    for (const auto& tkn : issue_set) {
      auto it = postings.find(tkn);
      if (it != postings.end()) lists.push_back(&it->second);
    }
    std::sort(lists.begin(), lists.end(),
              [](const auto* a, const auto* b) { return a->size() < b->size(); });
    std::unordered_set<size_t> hits;
    for (const auto* l : lists) {
      for (auto it = l->rbegin(); it != l->rend() && hits.size() < kMaxLexicalHits; ++it) {
        hits.insert(*it);
      }
    }
    return hits;
  };
  // The hits by the bucket they fall in, so a row looks only at its own.
  std::unordered_map<std::string, std::vector<size_t>> hits_by_owner, hits_by_source;
  for (size_t i : hits_in(snap->postings)) {
    hits_by_owner[records[i].owner].push_back(i);
    hits_by_source[records[i].source].push_back(i);
  }
  // Full tense: the same over every node, superseded ones too.
  std::unordered_map<std::string, std::vector<size_t>> node_hits_by_owner;
  if (full) {
    for (size_t i : hits_in(snap->node_postings)) node_hits_by_owner[records[i].owner].push_back(i);
  }
  auto candidates = [&](const std::vector<size_t>& bucket_ids,
                        const std::unordered_map<std::string, std::vector<size_t>>& hits,
                        const std::string& key) {
    std::vector<size_t> c;
    size_t from = bucket_ids.size() > kRecentPerBucket ? bucket_ids.size() - kRecentPerBucket : 0;
    for (size_t j = from; j < bucket_ids.size(); ++j) c.push_back(bucket_ids[j]);
    auto h = hits.find(key);
    if (from > 0 && h != hits.end()) {
      // Older heads with an issue word (the recent ones are in already).
      const size_t oldest_recent = bucket_ids[from];
      for (size_t i : h->second) {
        if (i < oldest_recent) c.push_back(i);
      }
    }
    return c;
  };
  const bool offline = stages_->embed->offline();
  const double record_floor = offline ? rp.record_floor_offline : rp.record_floor_model;
  const double fallback_floor = offline ? rp.fallback_floor_offline : rp.fallback_floor_model;
  // The chain a node belongs to, named by its current head.
  auto head_of = [&](size_t i) {
    for (int guard = 0; guard < 1000 && !records[i].superseded_by.empty(); ++guard) {
      auto it = snap->by_id.find(records[i].superseded_by);
      if (it == snap->by_id.end()) break;
      i = it->second;
    }
    return i;
  };
  auto chain_of = [&](size_t head) {
    std::vector<const storage::Record*> chain = {&records[head]};
    while (!chain.front()->supersedes.empty() && chain.size() < 1000) {
      auto it = snap->by_id.find(chain.front()->supersedes.front());
      if (it == snap->by_id.end()) break;
      chain.insert(chain.begin(), &records[it->second]);
    }
    return chain;
  };
  std::vector<size_t> fallback_rows;                       // rows with no record
  std::vector<std::pair<size_t, uint64_t>> fallback_seqs;  // (row index, seq)
  for (const auto& row : rows) {
    S2Row s2;
    s2.row = row;
    // Owned: the row's records above the floor. Head tense ranks current
    // heads; full tense ranks every node and a hit brings its whole chain.
    std::unordered_map<size_t, double> best_of_chain;  // head -> best node score
    // "A's view of B": only A's records about B in B's row.
    const bool constrained = !p.source.empty() && row == p.owner;
    const auto& owner_bucket =
        full ? bucket(snap->nodes_by_owner, row) : bucket(snap->heads_by_owner, row);
    for (size_t i : candidates(owner_bucket, full ? node_hits_by_owner : hits_by_owner, row)) {
      const storage::Record& r = records[i];
      if (!InRange(r.valid_at_ms, req.start_ms, req.end_ms)) continue;
      if (constrained && r.source != p.source) continue;
      const double sc = score(i);
      if (sc < record_floor) continue;
      const size_t head = full ? head_of(i) : i;
      auto [it, fresh] = best_of_chain.emplace(head, sc);
      if (!fresh) it->second = std::max(it->second, sc);
    }
    std::vector<std::pair<double, size_t>> owned;
    for (const auto& [head, sc] : best_of_chain) owned.emplace_back(sc, head);
    auto by_score = [&](const auto& a, const auto& b) {
      return a.first != b.first ? a.first > b.first
                                : records[a.second].record_id > records[b.second].record_id;
    };
    std::sort(owned.begin(), owned.end(), by_score);
    for (size_t k = 0; k < owned.size() && k < req.budgets.s2_k; ++k) {
      if (full) {
        for (const auto* c : chain_of(owned[k].second)) {  // oldest first, ending at the head
          s2.records.push_back(*c);
          s2.scores.push_back(owned[k].first);
        }
      } else {
        s2.records.push_back(records[owned[k].second]);
        s2.scores.push_back(owned[k].first);
      }
    }
    if (row != kRowGroup) {
      // Source-k: records this person voiced about someone else or for the
      // group (a decision they proposed), above the floor; they do not use
      // the row's budget.
      std::vector<std::pair<double, size_t>> sourced;
      for (size_t i : candidates(bucket(snap->heads_by_source, row), hits_by_source, row)) {
        const storage::Record& r = records[i];
        if (r.owner == row) continue;
        if (!InRange(r.valid_at_ms, req.start_ms, req.end_ms)) continue;
        const double sc = score(i);
        if (sc >= record_floor) sourced.emplace_back(sc, i);
      }
      std::sort(sourced.begin(), sourced.end(), by_score);
      for (size_t k = 0; k < sourced.size() && k < req.budgets.s2_source_k; ++k) {
        s2.sourced.push_back(records[sourced[k].second]);
      }
    }
    if (s2.records.empty() && row != kRowGroup) fallback_rows.push_back(out->s2.size());
    out->s2.push_back(std::move(s2));
  }
  // Rows without records: each person's best verbatim message on the issue
  // (one scoring pass for all of them) is a fallback candidate.
  if (!fallback_rows.empty()) {
    LexicalQuery q;
    q.text = req.question + " " + p.issue;
    q.start_ms = req.start_ms;
    q.end_ms = req.end_ms;
    q.params.stem = true;
    for (size_t r : fallback_rows) q.only_speakers.push_back(out->s2[r].row);
    std::map<std::string, ScoredSeq> best = lexical_->BestPerSpeaker(req.channel, q);
    for (size_t r : fallback_rows) {
      auto it = best.find(out->s2[r].row);
      if (it != best.end()) fallback_seqs.emplace_back(r, it->second.seq);
    }
  }
  // Fallbacks clear their own floor (the same similarity as records'), judged
  // with one embedding call.
  if (!fallback_seqs.empty()) {
    std::vector<uint64_t> seqs;
    for (const auto& [row, seq] : fallback_seqs) seqs.push_back(seq);
    SM_ASSIGN_OR_RETURN(std::vector<storage::Message> msgs,
                        store_->GetMessagesBySeq(req.channel, seqs));
    std::unordered_map<uint64_t, const storage::Message*> by_seq;
    std::vector<std::string> texts;
    for (const auto& m : msgs) {
      by_seq[m.seq] = &m;
      texts.push_back(m.text);
    }
    SM_ASSIGN_OR_RETURN(std::vector<std::vector<float>> vecs, stages_->embed->Embed(texts, &call));
    std::unordered_map<uint64_t, const std::vector<float>*> vec_of;
    for (size_t i = 0; i < msgs.size() && i < vecs.size(); ++i) vec_of[msgs[i].seq] = &vecs[i];
    for (const auto& [row, seq] : fallback_seqs) {
      auto m = by_seq.find(seq);
      if (m == by_seq.end()) continue;
      std::vector<std::string> toks = StemmedTokens(m->second->text);
      std::sort(toks.begin(), toks.end());
      const double sc = Similarity(toks, vec_of[seq]);
      if (sc < fallback_floor) continue;
      out->s2[row].fallback = *m->second;
      out->s2[row].fallback_score = sc;
    }
  }
  for (auto& row : out->s2) {
    row.empty = row.records.empty() && row.sourced.empty() && !row.fallback.has_value();
  }
  Trace(out, "s2_rows", t, call, absl::StrCat(rows.size(), " rows, ", full ? "full" : "head"));
  return absl::OkStatus();
}

}  // namespace speakermem::retrieval
