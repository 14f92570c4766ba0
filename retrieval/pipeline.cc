#include "retrieval/pipeline.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cmath>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "retrieval/text.h"
#include "retrieval/tokenizer.h"

namespace speakermem::retrieval {
namespace {

using Clock = std::chrono::steady_clock;

// Reciprocal rank fusion constant (Cormack et al. 2009).
constexpr double kRrfK = 60.0;

double Ms(Clock::time_point since) {
  return std::chrono::duration<double, std::milli>(Clock::now() - since).count();
}

void Trace(PipelineResult* out, const std::string& stage, Clock::time_point start,
           const StageCall& call, std::string note = "") {
  StageTrace t;
  t.stage = stage;
  t.latency_ms = Ms(start);
  t.model_calls = call.model_calls;
  t.tokens_in = call.usage.tokens_in;
  t.tokens_out = call.usage.tokens_out;
  t.note = note.empty() ? call.note : note;
  if (call.fell_back && note.empty()) t.note = call.note;
  out->trace.push_back(std::move(t));
}

bool InRange(int64_t ts, int64_t start, int64_t end) {
  return (start == 0 || ts >= start) && (end == 0 || ts < end);
}

double Dot(const std::vector<float>& a, const std::vector<float>& b) {
  double s = 0;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) s += a[i] * b[i];
  return s;
}

}  // namespace

uint64_t RecordNumber(const std::string& record_id) {
  uint64_t n = 0;
  if (record_id.size() < 2 || record_id[0] != 'r' || !absl::SimpleAtoi(record_id.substr(1), &n)) {
    return 0;
  }
  return n;
}

LexicalParams RecallParams::DefaultLexicalParams() {
  LexicalParams p;
  p.stem = true;
  p.speaker_weight = 6.0;
  p.context_weight = 0.5;
  p.context_window = 2;
  p.context_decay = 0.7;
  p.prf_weight = 0.2;
  return p;
}

QueryPipeline::QueryPipeline(storage::Store* store, const LexicalIndex* lexical,
                             const VectorIndex* vectors, const QueryStages* stages,
                             RecallParams recall)
    : store_(store), lexical_(lexical), vectors_(vectors), stages_(stages), recall_(recall) {}

void QueryPipeline::AddRecordVector(const storage::ChannelRef& channel,
                                    const std::string& record_id, std::vector<float> v) {
  std::lock_guard<std::mutex> lock(cache_mu_);
  record_vectors_[{channel, record_id}] = std::make_shared<const std::vector<float>>(std::move(v));
}

void QueryPipeline::Forget(const storage::ChannelRef& channel) {
  std::lock_guard<std::mutex> lock(cache_mu_);
  snapshots_.erase(channel);
  auto it = record_vectors_.lower_bound({channel, std::string()});
  while (it != record_vectors_.end() && it->first.first == channel) it = record_vectors_.erase(it);
  // A build that began before now must not store what it read.
  min_ticket_[channel] = ++build_ticket_;
}

void QueryPipeline::Warm(const storage::ChannelRef& channel) {
  StageCall call;
  (void)Records(channel, &call);
}

absl::StatusOr<std::vector<ScoredSeq>> QueryPipeline::Recall(
    const PipelineRequest& req, const Projection& p, const std::vector<std::string>& row_ids,
    PipelineResult* out) {
  // row_ids: speaker ids of the projected people.
  const RecallParams& rp = req.recall ? *req.recall : recall_;
  const bool textbook = req.mode == RecallMode::kBm25;
  // Hybrid recall ranks more than the pool so that neighbours Expand adds
  // arrive with a score of their own.
  const size_t n = textbook ? req.budgets.s1_recall_n : 4 * size_t{req.budgets.s1_recall_n};
  std::vector<ScoredSeq> bm25, dense;
  if (req.mode != RecallMode::kDense) {
    auto t = Clock::now();
    LexicalQuery q;
    q.text = req.question;
    if (req.stages && p.issue != req.question) absl::StrAppend(&q.text, " ", p.issue);
    q.k = n;
    q.start_ms = req.start_ms;
    q.end_ms = req.end_ms;
    if (!textbook) {
      q.params = rp.lexical;
      if (req.stages) q.named_speakers = row_ids;
    }
    bm25 = lexical_->Search(req.channel, q);
    Trace(out, "s1_bm25", t, StageCall{},
          absl::StrCat(bm25.size(), " hits", textbook ? " (textbook)" : ""));
  }
  if (textbook) return bm25;
  const double dense_weight = req.mode == RecallMode::kDense ? 1.0
                              : stages_->embed->offline() ? rp.dense_weight_offline
                                                          : rp.dense_weight_model;
  if (dense_weight > 0) {
    auto t = Clock::now();
    StageCall call;
    SM_ASSIGN_OR_RETURN(std::vector<std::vector<float>> q, stages_->embed->Embed({req.question}, &call));
    // Time filtering happens after the fetch; ask for more to make up.
    size_t want = req.start_ms || req.end_ms ? 3 * n : n;
    SM_ASSIGN_OR_RETURN(dense, vectors_->Search(req.channel, q.front(), want));
    Trace(out, "s1_dense", t, call, absl::StrCat(dense.size(), " hits"));
  }
  if (req.mode == RecallMode::kDense) return dense;
  // Weighted reciprocal rank fusion of the two lists.
  std::unordered_map<uint64_t, double> fused;
  for (size_t i = 0; i < bm25.size(); ++i) fused[bm25[i].seq] += 1.0 / (kRrfK + i + 1);
  for (size_t i = 0; i < dense.size(); ++i) fused[dense[i].seq] += dense_weight / (kRrfK + i + 1);
  std::vector<ScoredSeq> out_list;
  for (const auto& [seq, s] : fused) out_list.push_back(ScoredSeq{seq, static_cast<float>(s)});
  std::sort(out_list.begin(), out_list.end(), [](const ScoredSeq& a, const ScoredSeq& b) {
    return a.score != b.score ? a.score > b.score : a.seq < b.seq;
  });
  return out_list;
}

absl::Status QueryPipeline::Expand(const PipelineRequest& req, const std::vector<size_t>& anchors,
                                   std::vector<storage::Message>* pool) {
  const uint64_t w = req.budgets.expand_window;
  std::set<uint64_t> have;
  for (const auto& m : *pool) have.insert(m.seq);
  std::vector<storage::Message> anchor_msgs;
  for (size_t idx : anchors) {
    if (idx < pool->size()) anchor_msgs.push_back((*pool)[idx]);
  }
  for (const storage::Message& anchor : anchor_msgs) {
    std::vector<uint64_t> seqs;
    for (uint64_t d = 1; d <= w; ++d) {
      if (anchor.seq > d) seqs.push_back(anchor.seq - d);
      seqs.push_back(anchor.seq + d);
    }
    SM_ASSIGN_OR_RETURN(std::vector<storage::Message> around,
                        store_->GetMessagesBySeq(req.channel, seqs));
    for (auto& m : around) {
      if (m.session != anchor.session || !InRange(m.timestamp_ms, req.start_ms, req.end_ms)) continue;
      if (have.insert(m.seq).second) pool->push_back(std::move(m));
    }
  }
  return absl::OkStatus();
}

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
  auto snap = incremental ? std::make_shared<RecordSnapshot>(*prev) : std::make_shared<RecordSnapshot>();
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
  if (floor != min_ticket_.end() && snap->ticket <= floor->second) return std::shared_ptr<const RecordSnapshot>(snap);
  auto& slot = snapshots_[ch];
  if (slot == nullptr || slot->ticket < snap->ticket) slot = snap;
  return std::shared_ptr<const RecordSnapshot>(snap);
}

absl::Status QueryPipeline::SystemTwo(const PipelineRequest& req,
                                      const std::vector<RosterMember>& roster,
                                      PipelineResult* out) {
  auto t = Clock::now();
  StageCall call;
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
  std::unordered_map<size_t, double> scored;
  auto score = [&](size_t i) {
    auto memo = scored.find(i);
    if (memo != scored.end()) return memo->second;
    const std::vector<std::string>& toks = snap->tokens[i];  // sorted, unique
    double lex = 0;
    for (const auto& tkn : issue_set) lex += std::binary_search(toks.begin(), toks.end(), tkn);
    lex = issue_set.empty() ? 0 : lex / static_cast<double>(issue_set.size());
    const auto& vec = snap->vectors[i];
    double v = 0.5 * (vec ? Dot(*vec, issue_v.front()) : 0.0) + 0.5 * lex;
    scored.emplace(i, v);
    return v;
  };
  static const std::vector<size_t> kNone;
  auto bucket = [&](const std::map<std::string, std::vector<size_t>>& m, const std::string& key)
      -> const std::vector<size_t>& {
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
  std::vector<const std::vector<size_t>*> lists;
  for (const auto& tkn : issue_set) {
    auto it = snap->postings.find(tkn);
    if (it != snap->postings.end()) lists.push_back(&it->second);
  }
  std::sort(lists.begin(), lists.end(),
            [](const auto* a, const auto* b) { return a->size() < b->size(); });
  std::unordered_set<size_t> lexical_hits;
  for (const auto* l : lists) {
    for (auto it = l->rbegin(); it != l->rend() && lexical_hits.size() < kMaxLexicalHits; ++it) {
      lexical_hits.insert(*it);
    }
  }
  // The hits by the bucket they fall in, so a row looks only at its own.
  std::unordered_map<std::string, std::vector<size_t>> hits_by_owner, hits_by_source;
  for (size_t i : lexical_hits) {
    hits_by_owner[records[i].owner].push_back(i);
    hits_by_source[records[i].source].push_back(i);
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
  for (const auto& row : rows) {
    S2Row s2;
    s2.row = row;
    std::vector<std::pair<double, const storage::Record*>> owned, sourced;
    // "A's view of B": only A's records about B in B's row.
    const bool constrained = !p.source.empty() && row == p.owner;
    for (size_t i : candidates(bucket(snap->heads_by_owner, row), hits_by_owner, row)) {
      const storage::Record& r = records[i];
      if (!InRange(r.valid_at_ms, req.start_ms, req.end_ms)) continue;
      if (constrained && r.source != p.source) continue;
      owned.emplace_back(score(i), &r);
    }
    if (row != kRowGroup) {
      // Source-k: what this person said about someone else (group records
      // have their own row).
      for (size_t i : candidates(bucket(snap->heads_by_source, row), hits_by_source, row)) {
        const storage::Record& r = records[i];
        if (r.owner == row || r.owner == kRowGroup) continue;
        if (!InRange(r.valid_at_ms, req.start_ms, req.end_ms)) continue;
        sourced.emplace_back(score(i), &r);
      }
    }
    auto by_score = [](const auto& a, const auto& b) {
      return a.first != b.first ? a.first > b.first : a.second->record_id > b.second->record_id;
    };
    std::sort(owned.begin(), owned.end(), by_score);
    std::sort(sourced.begin(), sourced.end(), by_score);
    for (size_t i = 0; i < owned.size() && i < req.budgets.s2_k; ++i) {
      const storage::Record* head = owned[i].second;
      if (full) {
        // The whole chain, oldest first, ending at the head.
        std::vector<const storage::Record*> chain = {head};
        while (!chain.front()->supersedes.empty() && chain.size() < 1000) {
          auto it = snap->by_id.find(chain.front()->supersedes.front());
          if (it == snap->by_id.end()) break;
          chain.insert(chain.begin(), &records[it->second]);
        }
        for (const auto* c : chain) {
          s2.records.push_back(*c);
          s2.scores.push_back(owned[i].first);
        }
      } else {
        s2.records.push_back(*head);
        s2.scores.push_back(owned[i].first);
      }
    }
    for (size_t i = 0; i < sourced.size() && i < req.budgets.s2_source_k; ++i) {
      s2.sourced.push_back(*sourced[i].second);
    }
    if (s2.records.empty() && row != kRowGroup) {
      // The person's best verbatim message on the issue.
      LexicalQuery q;
      q.text = req.question + " " + p.issue;
      q.k = 1;
      q.start_ms = req.start_ms;
      q.end_ms = req.end_ms;
      q.only_speakers = {row};
      q.params.stem = true;
      std::vector<ScoredSeq> best = lexical_->Search(req.channel, q);
      if (!best.empty()) {
        SM_ASSIGN_OR_RETURN(std::vector<storage::Message> m,
                            store_->GetMessagesBySeq(req.channel, {best.front().seq}));
        if (!m.empty()) s2.fallback = m.front();
      }
    }
    s2.empty = s2.records.empty() && s2.sourced.empty() && !s2.fallback.has_value();
    out->s2.push_back(std::move(s2));
  }
  Trace(out, "s2_rows", t, call, absl::StrCat(rows.size(), " rows, ", full ? "full" : "head"));
  return absl::OkStatus();
}

absl::Status QueryPipeline::MeasureFreshness(const storage::ChannelRef& channel,
                                             const storage::ChannelInfo& info,
                                             Freshness* f) {
  SM_ASSIGN_OR_RETURN(storage::WriterState state, store_->GetWriterState(channel));
  f->newest_seq = info.last_seq;
  f->derived_through_seq = std::min(state.cursor_seq, info.last_seq);
  f->lag_messages = f->newest_seq - f->derived_through_seq;
  if (f->lag_messages == 0) return absl::OkStatus();
  SM_ASSIGN_OR_RETURN(std::vector<storage::Message> ends,
                      store_->GetMessagesBySeq(channel, {f->derived_through_seq + 1, f->newest_seq}));
  int64_t oldest = INT64_MAX, newest = INT64_MIN;
  for (const auto& m : ends) {
    oldest = std::min(oldest, m.timestamp_ms);
    newest = std::max(newest, m.timestamp_ms);
  }
  if (!ends.empty()) f->lag_ms = std::max<int64_t>(0, newest - oldest);
  return absl::OkStatus();
}

absl::StatusOr<PipelineResult> QueryPipeline::Run(const PipelineRequest& req) {
  if (req.question.empty()) return absl::InvalidArgumentError("question: must not be empty");
  if (req.budgets.s1_top_k == 0) return absl::InvalidArgumentError("budgets.s1_top_k: must be > 0");
  SM_ASSIGN_OR_RETURN(storage::ChannelInfo info, store_->GetChannelInfo(req.channel));
  PipelineResult out;
  SM_RETURN_IF_ERROR(MeasureFreshness(req.channel, info, &out.freshness));
  const uint64_t cursor = out.freshness.derived_through_seq;

  // 1. Project.
  SM_ASSIGN_OR_RETURN(std::vector<storage::RosterEntry> roster_entries,
                      store_->GetRoster(req.channel));
  std::vector<RosterMember> roster;
  for (const auto& e : roster_entries) roster.push_back(RosterMember{e.speaker_id, e.aliases});
  if (req.stages) {
    auto t = Clock::now();
    StageCall call;
    SM_ASSIGN_OR_RETURN(out.projection, stages_->project->Project({req.question, req.asker, roster}, &call));
    Trace(&out, "project", t, call);
  } else {
    out.projection.rows = {kRowAll};
    out.projection.issue = req.question;
  }
  if (req.tense) out.projection.tense = *req.tense;
  std::set<std::string> people;
  for (const auto& r : out.projection.rows) {
    if (r != kRowAll && r != kRowGroup) people.insert(r);
  }
  std::vector<std::string> row_ids(people.begin(), people.end());
  // How selective naming these people is: the share of the channel's
  // messages they did not write. In a two-person chat naming one of them
  // says little about where the evidence is; in a group it says a lot.
  uint64_t all_msgs = 0, their_msgs = 0;
  for (const auto& e : roster_entries) {
    all_msgs += e.message_count;
    if (people.count(e.speaker_id)) their_msgs += e.message_count;
  }
  const double selectivity =
      all_msgs == 0 ? 0 : 1.0 - static_cast<double>(their_msgs) / static_cast<double>(all_msgs);


  // 2. System 1 recall: the pool is the best s1_recall_n in range.
  SM_ASSIGN_OR_RETURN(std::vector<ScoredSeq> recalled, Recall(req, out.projection, row_ids, &out));
  std::unordered_map<uint64_t, double> recall_score;
  for (const auto& h : recalled) recall_score[h.seq] = h.score;
  const size_t pool_n = req.budgets.s1_recall_n;
  const bool ranged = req.start_ms != 0 || req.end_ms != 0;
  std::vector<uint64_t> seqs;
  for (const auto& h : recalled) {
    if (!ranged && seqs.size() >= pool_n) break;
    seqs.push_back(h.seq);
  }
  SM_ASSIGN_OR_RETURN(std::vector<storage::Message> fetched,
                      store_->GetMessagesBySeq(req.channel, seqs));
  std::vector<storage::Message> pool;
  for (auto& m : fetched) {
    if (!InRange(m.timestamp_ms, req.start_ms, req.end_ms)) continue;
    if (pool.size() >= pool_n) break;
    pool.push_back(std::move(m));
  }

  // The unwritten tail is always a candidate: its messages that match the
  // question join the pool even below the recall cut (they are newer than
  // every record, so memory cannot stand in for them).
  if (out.freshness.lag_messages > 0 && req.mode == RecallMode::kHybrid && req.stages) {
    std::set<uint64_t> have;
    for (const auto& m : pool) have.insert(m.seq);
    LexicalQuery tail;
    tail.text = req.question;
    tail.k = pool_n;
    tail.start_ms = req.start_ms;
    tail.end_ms = req.end_ms;
    tail.after_seq = cursor;
    tail.params = (req.recall ? *req.recall : recall_).lexical;
    tail.named_speakers = row_ids;
    std::vector<uint64_t> extra;
    for (const auto& h : lexical_->Search(req.channel, tail)) {
      if (!have.count(h.seq)) extra.push_back(h.seq);
    }
    SM_ASSIGN_OR_RETURN(std::vector<storage::Message> more,
                        store_->GetMessagesBySeq(req.channel, extra));
    for (auto& m : more) pool.push_back(std::move(m));
  }

  // 3. Select, Expand (then select again over the grown pool),
  // Sufficiency/ASK; only then top-k.
  const RecallParams& rp = req.recall ? *req.recall : recall_;
  std::vector<size_t> order(pool.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::set<uint64_t> expanded;
  auto select = [&](size_t max_anchors) -> absl::StatusOr<SelectOutput> {
    auto t = Clock::now();
    StageCall call;
    SelectInput in;
    in.question = req.question;
    in.projection = out.projection;
    in.max_anchors = max_anchors;
    in.row_selectivity = selectivity;
    for (const auto& m : pool) {
      auto it = recall_score.find(m.seq);
      in.candidates.push_back(Candidate{m.message_id, m.speaker, m.speaker_id, m.text,
                                        m.timestamp_ms,
                                        it == recall_score.end() ? 0.0 : it->second});
    }
    SM_ASSIGN_OR_RETURN(SelectOutput sel, stages_->select->Select(in, &call));
    Trace(&out, "select", t, call, max_anchors == 0 ? "re-select" : "");
    return sel;
  };
  if (req.stages && rp.select && req.mode == RecallMode::kHybrid && !pool.empty()) {
    for (int round = 0; round < (req.budgets.ask ? 2 : 1); ++round) {
      SM_ASSIGN_OR_RETURN(SelectOutput sel,
                          select(req.budgets.expand ? req.budgets.expand_anchors : 0));
      order = sel.ranking;
      if (req.budgets.expand && !sel.anchors.empty()) {
        auto te = Clock::now();
        size_t before = pool.size();
        SM_RETURN_IF_ERROR(Expand(req, sel.anchors, &pool));
        for (size_t i = before; i < pool.size(); ++i) expanded.insert(pool[i].seq);
        Trace(&out, "expand", te, StageCall{},
              absl::StrCat(sel.anchors.size(), " anchors, ", pool.size() - before, " added"));
        if (pool.size() > before) {
          // The neighbours compete with the pool for the top-k.
          SM_ASSIGN_OR_RETURN(SelectOutput again, select(0));
          order = again.ranking;
        }
      }
      if (!req.budgets.ask || round == 1) break;
      auto ts = Clock::now();
      StageCall scall;
      SufficiencyInput sin;
      sin.question = req.question;
      for (size_t i = 0; i < order.size() && i < req.budgets.s1_top_k; ++i) {
        const auto& m = pool[order[i]];
        sin.evidence.push_back(Candidate{m.message_id, m.speaker, m.speaker_id, m.text,
                                         m.timestamp_ms, 0});
      }
      SM_ASSIGN_OR_RETURN(SufficiencyOutput suff, stages_->sufficiency->Judge(sin, &scall));
      Trace(&out, "sufficiency", ts, scall);
      if (suff.sufficient || suff.search_term.empty()) break;
      // ASK: one more search, merged into the pool, then select again.
      std::set<uint64_t> have;
      for (const auto& m : pool) have.insert(m.seq);
      LexicalQuery ask;
      ask.text = suff.search_term;
      ask.k = req.budgets.s1_recall_n / 2;
      ask.start_ms = req.start_ms;
      ask.end_ms = req.end_ms;
      ask.params = rp.lexical;
      std::vector<uint64_t> extra;
      for (const auto& h : lexical_->Search(req.channel, ask)) {
        if (!have.count(h.seq)) extra.push_back(h.seq);
        if (!recall_score.count(h.seq)) recall_score[h.seq] = 0;
      }
      SM_ASSIGN_OR_RETURN(std::vector<storage::Message> more,
                          store_->GetMessagesBySeq(req.channel, extra));
      for (auto& m : more) pool.push_back(std::move(m));
    }
  }

  // 4. Top-k.
  const size_t k = req.budgets.s1_top_k;
  for (size_t rank = 0; rank < order.size() && out.s1.size() < k; ++rank) {
    const storage::Message& m = pool[order[rank]];
    RetrievedMessage rm;
    rm.message = m;
    rm.newer_than_memory = m.seq > cursor;
    auto it = recall_score.find(m.seq);
    rm.score = it == recall_score.end() ? 0 : it->second;
    rm.why = expanded.count(m.seq) ? absl::StrCat("expanded, rank ", rank + 1)
                                      : absl::StrCat(req.mode == RecallMode::kBm25    ? "bm25"
                                                     : req.mode == RecallMode::kDense ? "dense"
                                                                                       : "hybrid",
                                                     req.stages ? " + select" : "", ", rank ",
                                                     rank + 1);
    out.s1.push_back(std::move(rm));
  }

  // 5. System 2 rows.
  if (req.stages && req.system2) SM_RETURN_IF_ERROR(SystemTwo(req, roster, &out));

  // 6. Compose and answer.
  if (req.answer) {
    auto t = Clock::now();
    StageCall call;
    AnswerInput in;
    in.question = req.question;
    in.projection = out.projection;
    in.options = req.options;
    for (const auto& rm : out.s1) {
      const auto& m = rm.message;
      in.evidence.push_back(EvidenceItem{m.message_id, "S1", m.speaker, m.speaker_id, "", "",
                                         m.timestamp_ms, m.text, rm.score,
                                         rm.newer_than_memory});
    }
    for (const auto& row : out.s2) {
      for (const auto& r : row.records) {
        in.evidence.push_back(EvidenceItem{r.record_id, row.row, r.source, r.source, r.owner,
                                           r.layer, r.valid_at_ms, r.content, 0});
      }
      for (const auto& r : row.sourced) {
        in.evidence.push_back(EvidenceItem{r.record_id, row.row, r.source, r.source, r.owner,
                                           r.layer, r.valid_at_ms, r.content, 0});
      }
    }
    SM_ASSIGN_OR_RETURN(AnswerOutput a, stages_->answer->Answer(in, &call));
    out.answer = std::move(a);
    Trace(&out, "answer", t, call);
  }
  return out;
}

}  // namespace speakermem::retrieval
