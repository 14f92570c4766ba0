#include "retrieval/pipeline.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "retrieval/compose.h"
#include "retrieval/pipeline_internal.h"
#include "text/text.h"
#include "text/tokenizer.h"

namespace speakermem::retrieval {

using internal::Clock;
using internal::InRange;
using internal::Trace;

namespace {

// Reciprocal rank fusion constant (Cormack et al. 2009).
constexpr double kRrfK = 60.0;

}  // namespace

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
                             RecallParams recall, RowParams rows,
                             recordindex::ChannelIndexes* indexes)
    : store_(store),
      lexical_(lexical),
      vectors_(vectors),
      stages_(stages),
      recall_(recall),
      rows_(rows),
      own_indexes_(indexes == nullptr ? std::make_unique<recordindex::ChannelIndexes>(store)
                                      : nullptr),
      indexes_(indexes == nullptr ? own_indexes_.get() : indexes) {}

QueryPipeline::~QueryPipeline() = default;

void QueryPipeline::AddRecordVector(const storage::ChannelRef& channel,
                                    const std::string& record_id, std::vector<float> v) {
  std::lock_guard<std::mutex> lock(cache_mu_);
  record_vectors_[{channel, record_id}] = std::make_shared<const std::vector<float>>(std::move(v));
}

bool QueryPipeline::KnowsRecordVector(const storage::ChannelRef& channel,
                                      const std::string& record_id) {
  std::lock_guard<std::mutex> lock(cache_mu_);
  return record_vectors_.count({channel, record_id}) > 0;
}

void QueryPipeline::Forget(const storage::ChannelRef& channel) {
  indexes_->Forget(channel);
  std::lock_guard<std::mutex> lock(cache_mu_);
  auto it = record_vectors_.lower_bound({channel, std::string()});
  while (it != record_vectors_.end() && it->first.first == channel) it = record_vectors_.erase(it);
}

void QueryPipeline::Warm(const storage::ChannelRef& channel) {
  StageCall call;
  (void)Records(channel, &call);
}

absl::StatusOr<std::vector<ScoredSeq>> QueryPipeline::Recall(
    const PipelineRequest& req, const Projection& p, const std::vector<std::string>& row_ids,
    PipelineResult* out, std::map<std::string, ScoredSeq>* best_per_speaker) {
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
    bm25 = lexical_->Search(req.channel, q, best_per_speaker);
    Trace(out, "s1_bm25", t, StageCall{},
          absl::StrCat(bm25.size(), " hits", textbook ? " (textbook)" : ""));
  }
  if (textbook) return bm25;
  const double dense_weight = req.mode == RecallMode::kDense ? 1.0
                              : stages_->embed->offline()    ? rp.dense_weight_offline
                                                             : rp.dense_weight_model;
  if (dense_weight > 0) {
    auto t = Clock::now();
    StageCall call;
    call.deadline = req.deadline;
    SM_ASSIGN_OR_RETURN(std::vector<std::vector<float>> q,
                        stages_->embed->Embed({req.question}, &call));
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
      if (m.session != anchor.session || !InRange(m.timestamp_ms, req.start_ms, req.end_ms))
        continue;
      if (have.insert(m.seq).second) pool->push_back(std::move(m));
    }
  }
  return absl::OkStatus();
}

absl::Status QueryPipeline::MeasureFreshness(const storage::ChannelRef& channel,
                                             const storage::ChannelInfo& info, Freshness* f) {
  SM_ASSIGN_OR_RETURN(storage::WriterState state, store_->GetWriterState(channel));
  f->newest_seq = info.last_seq;
  f->derived_through_seq = std::min(state.cursor_seq, info.last_seq);
  f->lag_messages = f->newest_seq - f->derived_through_seq;
  if (f->lag_messages == 0) return absl::OkStatus();
  SM_ASSIGN_OR_RETURN(
      std::vector<storage::Message> ends,
      store_->GetMessagesBySeq(channel, {f->derived_through_seq + 1, f->newest_seq}));
  int64_t oldest = INT64_MAX, newest = INT64_MIN;
  for (const auto& m : ends) {
    oldest = std::min(oldest, m.timestamp_ms);
    newest = std::max(newest, m.timestamp_ms);
  }
  if (!ends.empty()) f->lag_ms = std::max<int64_t>(0, newest - oldest);
  return absl::OkStatus();
}

namespace {

// Between steps: stop once the caller has given up.
absl::Status InTime(const PipelineRequest& req, const char* next) {
  if (std::chrono::system_clock::now() < req.deadline) return absl::OkStatus();
  return absl::DeadlineExceededError(absl::StrCat("query: deadline passed before ", next));
}

absl::Status CheckRequest(const PipelineRequest& req) {
  if (absl::StripAsciiWhitespace(req.question).empty()) {
    return absl::InvalidArgumentError("question: must not be empty or only whitespace");
  }
  if (req.question.size() > kMaxQuestionBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("question: ", req.question.size(), " bytes, at most ", kMaxQuestionBytes));
  }
  if (req.budgets.s1_top_k == 0) return absl::InvalidArgumentError("budgets.s1_top_k: must be > 0");
  return absl::OkStatus();
}

}  // namespace

// The query as the paper defines it (DESIGN 3), one named step after another.
absl::StatusOr<PipelineResult> QueryPipeline::Run(const PipelineRequest& req) {
  SM_RETURN_IF_ERROR(CheckRequest(req));
  QueryState st(req, req.recall ? *req.recall : recall_);
  SM_RETURN_IF_ERROR(Begin(&st));
  SM_RETURN_IF_ERROR(InTime(req, "Project"));
  SM_RETURN_IF_ERROR(ProjectStep(&st));
  SM_RETURN_IF_ERROR(InTime(req, "recall"));
  SM_RETURN_IF_ERROR(RecallStep(&st));
  SM_RETURN_IF_ERROR(AddUnwrittenTail(&st));
  SM_RETURN_IF_ERROR(InTime(req, "Select"));
  SM_RETURN_IF_ERROR(SelectStep(&st));
  TopK(&st);
  SM_RETURN_IF_ERROR(InTime(req, "System 2 rows"));
  if (req.stages && req.system2) {
    SM_RETURN_IF_ERROR(
        SystemTwo(req, st.roster, st.best_per_speaker ? &*st.best_per_speaker : nullptr, &st.out));
  }
  SM_RETURN_IF_ERROR(InTime(req, "Answer"));
  SM_RETURN_IF_ERROR(ComposeAndAnswer(&st));
  return std::move(st.out);
}

// The channel's state and how far its memory lags.
absl::Status QueryPipeline::Begin(QueryState* st) {
  SM_ASSIGN_OR_RETURN(storage::ChannelInfo info, store_->GetChannelInfo(st->req.channel));
  SM_RETURN_IF_ERROR(MeasureFreshness(st->req.channel, info, &st->out.freshness));
  st->cursor = st->out.freshness.derived_through_seq;
  return absl::OkStatus();
}

// 1. Project: the rows (people, ALL, GROUP), the issue and the tense.
absl::Status QueryPipeline::ProjectStep(QueryState* st) {
  const PipelineRequest& req = st->req;
  SM_ASSIGN_OR_RETURN(std::vector<storage::RosterEntry> roster_entries,
                      store_->GetRoster(req.channel));
  for (const auto& e : roster_entries) st->roster.push_back(RosterMember{e.speaker_id, e.aliases});
  if (req.stages) {
    auto t = Clock::now();
    StageCall call;
    call.deadline = req.deadline;
    SM_ASSIGN_OR_RETURN(st->out.projection,
                        stages_->project->Project({req.question, req.asker, st->roster}, &call));
    Trace(&st->out, "project", t, call);
  } else {
    st->out.projection.rows = {kRowAll};
    st->out.projection.issue = req.question;
  }
  if (req.tense) st->out.projection.tense = *req.tense;
  std::set<std::string> people;
  for (const auto& r : st->out.projection.rows) {
    if (r != kRowAll && r != kRowGroup) people.insert(r);
  }
  // (How selective naming them is enters through the speaker field's idf.)
  st->row_ids.assign(people.begin(), people.end());
  return absl::OkStatus();
}

// 2. System 1 recall: the pool is the best s1_recall_n in range.
absl::Status QueryPipeline::RecallStep(QueryState* st) {
  const PipelineRequest& req = st->req;
  // System 2's fallbacks ask BM25 (stemmed, no other feature) for each
  // person's best message on the question and the issue: the terms hybrid
  // recall scores first when it stems, so it keeps those on the way.
  std::map<std::string, ScoredSeq> best;
  const bool keep_best = req.stages && req.system2 && req.mode == RecallMode::kHybrid &&
                         st->rp.lexical.stem && req.budgets.s1_recall_n > 0;
  SM_ASSIGN_OR_RETURN(
      std::vector<ScoredSeq> recalled,
      Recall(req, st->out.projection, st->row_ids, &st->out, keep_best ? &best : nullptr));
  if (keep_best) st->best_per_speaker = std::move(best);
  for (const auto& h : recalled) st->recall_score[h.seq] = h.score;
  const size_t pool_n = req.budgets.s1_recall_n;
  const bool ranged = req.start_ms != 0 || req.end_ms != 0;
  std::vector<uint64_t> seqs;
  for (const auto& h : recalled) {
    if (!ranged && seqs.size() >= pool_n) break;
    seqs.push_back(h.seq);
  }
  SM_ASSIGN_OR_RETURN(std::vector<storage::Message> fetched,
                      store_->GetMessagesBySeq(req.channel, seqs));
  for (auto& m : fetched) {
    if (!InRange(m.timestamp_ms, req.start_ms, req.end_ms)) continue;
    if (st->pool.size() >= pool_n) break;
    st->pool.push_back(std::move(m));
  }
  return absl::OkStatus();
}

// The unwritten tail is always a candidate: its messages that match the
// question join the pool even below the recall cut (they are newer than
// every record, so memory cannot stand in for them).
absl::Status QueryPipeline::AddUnwrittenTail(QueryState* st) {
  const PipelineRequest& req = st->req;
  if (st->out.freshness.lag_messages == 0 || req.mode != RecallMode::kHybrid || !req.stages) {
    return absl::OkStatus();
  }
  LexicalQuery tail;
  tail.text = req.question;
  tail.k = req.budgets.s1_recall_n;
  tail.start_ms = req.start_ms;
  tail.end_ms = req.end_ms;
  tail.after_seq = st->cursor;
  tail.params = st->rp.lexical;
  tail.named_speakers = st->row_ids;
  return AddToPool(st, tail, /*score_new=*/false);
}

// Appends the hits of `q` not in the pool yet; with `score_new`, hits
// without a recall score get 0 (so they rank as recalled).
absl::Status QueryPipeline::AddToPool(QueryState* st, const LexicalQuery& q, bool score_new) {
  std::set<uint64_t> have;
  for (const auto& m : st->pool) have.insert(m.seq);
  std::vector<uint64_t> extra;
  for (const auto& h : lexical_->Search(st->req.channel, q)) {
    if (!have.count(h.seq)) extra.push_back(h.seq);
    if (score_new && !st->recall_score.count(h.seq)) st->recall_score[h.seq] = 0;
  }
  SM_ASSIGN_OR_RETURN(std::vector<storage::Message> more,
                      store_->GetMessagesBySeq(st->req.channel, extra));
  for (auto& m : more) st->pool.push_back(std::move(m));
  return absl::OkStatus();
}

// Select over `subset` (indices into the pool); the output's indices are
// mapped back to the pool.
absl::StatusOr<SelectOutput> QueryPipeline::SelectOver(QueryState* st, size_t max_anchors,
                                                       const std::vector<size_t>& subset,
                                                       size_t ranked_before) {
  const PipelineRequest& req = st->req;
  auto t = Clock::now();
  StageCall call;
  call.deadline = req.deadline;
  SelectInput in;
  in.question = req.question;
  in.projection = st->out.projection;
  in.max_anchors = max_anchors;
  // Previews (stages.h): the first pass shows the recall head longer than
  // its tail; the re-select shows the candidates the first pass ranked as
  // a short reminder and the new neighbours longer.
  const bool first_pass = max_anchors > 0;
  in.max_chars = first_pass ? kSelectTailChars : kSelectNeighbourChars;
  in.max_chars_each.assign(
      std::min(first_pass ? kSelectHeadFactor * req.budgets.s1_top_k : ranked_before,
               subset.size()),
      first_pass ? kSelectPreviewChars : kSelectTailChars);
  for (size_t idx : subset) {
    const storage::Message& m = st->pool[idx];
    auto it = st->recall_score.find(m.seq);
    in.candidates.push_back(Candidate{m.message_id, m.speaker, m.speaker_id, m.text, m.timestamp_ms,
                                      it == st->recall_score.end() ? 0.0 : it->second});
  }
  SM_ASSIGN_OR_RETURN(SelectOutput sel, stages_->select->Select(in, &call));
  for (size_t& i : sel.ranking) i = subset[i];
  for (size_t& i : sel.anchors) i = subset[i];
  Trace(&st->out, "select", t, call, max_anchors == 0 ? "re-select" : "");
  return sel;
}

// 3. Select, Expand (then select again over the grown pool),
// Sufficiency/ASK; only then top-k.
absl::Status QueryPipeline::SelectStep(QueryState* st) {
  const PipelineRequest& req = st->req;
  st->order.resize(st->pool.size());
  for (size_t i = 0; i < st->order.size(); ++i) st->order[i] = i;
  if (!req.stages || !st->rp.select || req.mode != RecallMode::kHybrid || st->pool.empty()) {
    return absl::OkStatus();
  }
  for (int round = 0; round < (req.budgets.ask ? 2 : 1); ++round) {
    std::vector<size_t> everything(st->pool.size());
    for (size_t i = 0; i < everything.size(); ++i) everything[i] = i;
    SM_ASSIGN_OR_RETURN(
        SelectOutput sel,
        SelectOver(st, req.budgets.expand ? req.budgets.expand_anchors : 0, everything, 0));
    st->order = sel.ranking;
    if (req.budgets.expand && !sel.anchors.empty()) {
      SM_RETURN_IF_ERROR(ExpandAndReselect(st, sel.anchors));
    }
    if (!req.budgets.ask || round == 1) break;
    SM_ASSIGN_OR_RETURN(bool searched, AskOnce(st));
    if (!searched) break;
  }
  return absl::OkStatus();
}

// Expand around the anchors; the neighbours then compete for the top-k:
// the current top-k and the neighbours are selected again (a smaller call
// than the whole pool); the rest of the first ranking follows.
absl::Status QueryPipeline::ExpandAndReselect(QueryState* st, const std::vector<size_t>& anchors) {
  auto te = Clock::now();
  const size_t before = st->pool.size();
  SM_RETURN_IF_ERROR(Expand(st->req, anchors, &st->pool));
  for (size_t i = before; i < st->pool.size(); ++i) st->expanded.insert(st->pool[i].seq);
  Trace(&st->out, "expand", te, StageCall{},
        absl::StrCat(anchors.size(), " anchors, ", st->pool.size() - before, " added"));
  if (st->pool.size() == before) return absl::OkStatus();
  std::vector<size_t> contest;
  const size_t k = st->req.budgets.s1_top_k;
  for (size_t r = 0; r < st->order.size() && r < k; ++r) contest.push_back(st->order[r]);
  for (size_t i = before; i < st->pool.size(); ++i) contest.push_back(i);
  const size_t ranked = contest.size() - (st->pool.size() - before);
  SM_ASSIGN_OR_RETURN(SelectOutput again, SelectOver(st, 0, contest, ranked));
  std::vector<size_t> merged = again.ranking;
  for (size_t r = k; r < st->order.size(); ++r) merged.push_back(st->order[r]);
  st->order = std::move(merged);
  return absl::OkStatus();
}

// Sufficiency on the current top-k; when it names a search term, ASK: one
// more search merged into the pool. True when the pool grew that way.
absl::StatusOr<bool> QueryPipeline::AskOnce(QueryState* st) {
  const PipelineRequest& req = st->req;
  auto ts = Clock::now();
  StageCall scall;
  scall.deadline = req.deadline;
  SufficiencyInput sin;
  sin.question = req.question;
  for (size_t i = 0; i < st->order.size() && i < req.budgets.s1_top_k; ++i) {
    const auto& m = st->pool[st->order[i]];
    sin.evidence.push_back(
        Candidate{m.message_id, m.speaker, m.speaker_id, m.text, m.timestamp_ms, 0});
  }
  SM_ASSIGN_OR_RETURN(SufficiencyOutput suff, stages_->sufficiency->Judge(sin, &scall));
  Trace(&st->out, "sufficiency", ts, scall);
  if (suff.sufficient || suff.search_term.empty()) return false;
  LexicalQuery ask;
  ask.text = suff.search_term;
  ask.k = req.budgets.s1_recall_n / 2;
  ask.start_ms = req.start_ms;
  ask.end_ms = req.end_ms;
  ask.params = st->rp.lexical;
  SM_RETURN_IF_ERROR(AddToPool(st, ask, /*score_new=*/true));
  return true;
}

// 4. Top-k of the final order, each with why it is there.
void QueryPipeline::TopK(QueryState* st) {
  const PipelineRequest& req = st->req;
  const size_t k = req.budgets.s1_top_k;
  for (size_t rank = 0; rank < st->order.size() && st->out.s1.size() < k; ++rank) {
    const storage::Message& m = st->pool[st->order[rank]];
    RetrievedMessage rm;
    rm.message = m;
    rm.newer_than_memory = m.seq > st->cursor;
    auto it = st->recall_score.find(m.seq);
    rm.score = it == st->recall_score.end() ? 0 : it->second;
    rm.why = st->expanded.count(m.seq)
                 ? absl::StrCat("expanded, rank ", rank + 1)
                 : absl::StrCat(req.mode == RecallMode::kBm25    ? "bm25"
                                : req.mode == RecallMode::kDense ? "dense"
                                                                 : "hybrid",
                                req.stages ? " + select" : "", ", rank ", rank + 1);
    st->out.s1.push_back(std::move(rm));
  }
}

// 6. Compose the evidence pack and, when asked, answer from it.
absl::Status QueryPipeline::ComposeAndAnswer(QueryState* st) {
  const PipelineRequest& req = st->req;
  PipelineResult& out = st->out;
  std::map<std::string, std::string> names;  // speaker id -> display name
  for (const auto& m : st->roster) {
    names[m.speaker_id] = m.aliases.empty() ? "" : m.aliases.front();
  }
  auto display = [&names](const std::string& id) {
    auto it = names.find(id);
    return it == names.end() || it->second.empty() ? id : it->second;
  };
  if (req.stages) out.evidence_pack = ComposeEvidencePack(out.s1, out.s2, names, req.system2);
  if (!req.answer) return absl::OkStatus();
  auto t = Clock::now();
  StageCall call;
  call.deadline = req.deadline;
  AnswerInput in;
  in.question = req.question;
  in.projection = out.projection;
  in.options = req.options;
  in.pack = out.evidence_pack;
  // The members, for questions about who (not for a crowd of hundreds).
  constexpr size_t kMaxMembersShown = 50;
  if (st->roster.size() <= kMaxMembersShown) {
    for (const auto& m : st->roster) in.members.push_back(display(m.speaker_id));
  }
  for (const auto& rm : out.s1) {
    const auto& m = rm.message;
    in.evidence.push_back(EvidenceItem{m.message_id, "S1", m.speaker, m.speaker_id, "", "",
                                       m.timestamp_ms, m.text, rm.score, rm.newer_than_memory});
  }
  for (const auto& row : out.s2) {
    for (const auto* list : {&row.records, &row.sourced}) {
      for (const auto& r : *list) {
        in.evidence.push_back(EvidenceItem{r.record_id, row.row, display(r.source), r.source,
                                           r.owner, r.layer, r.valid_at_ms, r.content, 0});
      }
    }
    if (row.fallback) {
      const storage::Message& m = *row.fallback;
      in.evidence.push_back(EvidenceItem{m.message_id, row.row, m.speaker, m.speaker_id, "", "",
                                         m.timestamp_ms, m.text, 0, m.seq > st->cursor});
    }
  }
  const absl::Status gone = absl::CancelledError("the caller went away");
  if (req.on_evidence && !req.on_evidence(out)) return gone;
  bool streamed = false;
  if (req.on_delta) {
    in.on_delta = [&req, &streamed](absl::string_view piece) {
      streamed = true;
      return req.on_delta(piece);
    };
  }
  SM_ASSIGN_OR_RETURN(AnswerOutput a, stages_->answer->Answer(in, &call));
  if (req.on_delta && !streamed && !a.answer.empty() && !req.on_delta(a.answer)) return gone;
  out.answer = std::move(a);
  Trace(&out, "answer", t, call);
  return absl::OkStatus();
}

}  // namespace speakermem::retrieval
