// System 2 rows of the query pipeline (DESIGN 3, step 4), cut from the
// channel's record index (recordindex/, shared with the Writer).
#include <algorithm>
#include <set>
#include <unordered_map>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "retrieval/pipeline.h"
#include "retrieval/pipeline_internal.h"
#include "text/text.h"

namespace speakermem::retrieval {

using text::IsStopword;
using text::StemmedTokens;

using internal::Clock;
using internal::InRange;
using internal::Trace;

namespace {

using internal::RecordSnapshot;
using internal::RecordsView;

// Candidates: heads sharing a word with the issue, plus each bucket's most
// recent heads (so a purely semantic match among recent state still
// counts); scoring stays proportional to those, not to the channel.
constexpr size_t kRecentPerBucket = 64;
// Rarest issue words first, the most recent heads of each, up to a
// thousand heads: words on most heads say little about which ones matter,
// and scoring stays bounded however large the channel grows.
constexpr size_t kMaxLexicalHits = 1000;

// The rows a projection names, in order: ALL is every member.
std::vector<std::string> RowsOf(const Projection& p, const std::vector<RosterMember>& roster) {
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
  return rows;
}

// System 1 evidence by rank: the first counts fully, the last little.
absl::flat_hash_map<std::string, double> S1Weights(const std::vector<RetrievedMessage>& s1,
                                                   size_t top_k) {
  absl::flat_hash_map<std::string, double> w;
  for (size_t k = 0; k < s1.size(); ++k) {
    w.emplace(
        s1[k].message.message_id,
        1.0 - static_cast<double>(k) / static_cast<double>(std::max<size_t>(s1.size(), top_k)));
  }
  return w;
}

// How relevant a record is to one query. The floor judges `admission`;
// the records admitted to a row are ranked by similarity, then backing.
struct Relevance {
  double similarity = 0;
  double backed = 0;  // summed System 1 rank weights of the from_ids
  double admission = 0;
};

// A candidate cell (a record, or in full tense a chain by its head) and
// its relevance.
struct Ranked {
  Relevance rel;
  size_t index = 0;
};

// How well a record (or a message) matches one query's issue.
class IssueScorer {
 public:
  IssueScorer(const RecordSnapshot& snap, std::vector<float> issue_v, std::set<std::string> words,
              absl::flat_hash_map<std::string, double> s1_weight, double provenance_weight)
      : snap_(snap),
        issue_v_(std::move(issue_v)),
        issue_nonzero_(internal::NonZero(issue_v_)),
        words_(std::move(words)),
        s1_weight_(std::move(s1_weight)),
        provenance_weight_(provenance_weight) {
    for (const auto& w : words_) {
      auto it = snap_.token_id.find(w);
      if (it != snap_.token_id.end()) word_ids_.push_back(it->second);
    }
  }

  // Half dense, half lexical overlap (the share of issue words the text
  // contains). `toks` sorted; `vec` may be null.
  double Similarity(const std::vector<std::string>& toks, const std::vector<float>* vec) const {
    double lex = 0;
    for (const auto& tkn : words_) lex += std::binary_search(toks.begin(), toks.end(), tkn);
    lex = words_.empty() ? 0 : lex / static_cast<double>(words_.size());
    return 0.5 * (vec ? internal::SparseDot(*vec, issue_v_, issue_nonzero_) : 0.0) + 0.5 * lex;
  }

  // Similarity() of record i, from its interned tokens and its vector's
  // non-zero entries: the same value, without string comparisons.
  double RecordSimilarity(size_t i) const {
    const std::vector<uint32_t>& toks = snap_.token_ids[i];
    double lex = 0;
    for (uint32_t w : word_ids_) lex += std::binary_search(toks.begin(), toks.end(), w);
    lex = words_.empty() ? 0 : lex / static_cast<double>(words_.size());
    const std::vector<float>* vec = snap_.vectors[i].get();
    return 0.5 * (vec ? internal::SparseDot(*vec, issue_v_, issue_nonzero_) : 0.0) + 0.5 * lex;
  }

  // What the floor judges: similarity plus the weighted backing.
  double Admission(double similarity, double backed) const {
    return similarity + provenance_weight_ * backed;
  }

  // Record i's relevance: its similarity to the issue, and that plus its
  // backing by System 1 (the rank weights of its from_ids among the query's
  // System 1 evidence, summed, times RowParams::provenance_weight), which
  // is what the floor judges. Memoised: a record can be a candidate of two
  // rows (owner and source).
  Relevance Score(size_t i) {
    auto memo = scored_.find(i);
    if (memo != scored_.end()) return memo->second;
    double backed = 0;
    for (const auto& id : snap_.records[i].from_ids) {
      auto w = s1_weight_.find(id);
      if (w != s1_weight_.end()) backed += w->second;
    }
    Relevance r;
    r.similarity = RecordSimilarity(i);
    r.backed = backed;
    r.admission = Admission(r.similarity, backed);
    scored_.emplace(i, r);
    return r;
  }

  // The records of `postings` holding an issue word, rarest words first,
  // the most recent of each, at most kMaxLexicalHits.
  absl::flat_hash_set<size_t> LexicalHits(
      const std::unordered_map<std::string, std::vector<size_t>>& postings) const {
    std::vector<const std::vector<size_t>*> lists;
    for (const auto& tkn : words_) {
      auto it = postings.find(tkn);
      if (it != postings.end()) lists.push_back(&it->second);
    }
    std::sort(lists.begin(), lists.end(),
              [](const auto* a, const auto* b) { return a->size() < b->size(); });
    absl::flat_hash_set<size_t> hits;
    for (const auto* l : lists) {
      for (auto it = l->rbegin(); it != l->rend() && hits.size() < kMaxLexicalHits; ++it) {
        hits.insert(*it);
      }
    }
    return hits;
  }

 private:
  const RecordSnapshot& snap_;
  const std::vector<float> issue_v_;
  const std::vector<uint32_t> issue_nonzero_;
  const std::set<std::string> words_;
  std::vector<uint32_t> word_ids_;  // words_ the snapshot's records use
  const absl::flat_hash_map<std::string, double> s1_weight_;
  const double provenance_weight_;
  absl::flat_hash_map<size_t, Relevance> scored_;
};

using Buckets = absl::flat_hash_map<std::string, std::vector<size_t>>;

// A bucket's candidates: its most recent entries, plus older ones holding
// an issue word (`hits`, by the same key).
std::vector<size_t> Candidates(const std::vector<size_t>& bucket_ids, const Buckets& hits,
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
}

const std::vector<size_t>& Bucket(const std::map<std::string, std::vector<size_t>>& m,
                                  const std::string& key) {
  static const std::vector<size_t> kNone;
  auto it = m.find(key);
  return it == m.end() ? kNone : it->second;
}

// The chain a node belongs to, named by its current head.
size_t HeadOf(const RecordSnapshot& snap, size_t i) {
  for (int guard = 0; guard < 1000 && !snap.records[i].superseded_by.empty(); ++guard) {
    auto it = snap.by_id.find(snap.records[i].superseded_by);
    if (it == snap.by_id.end()) break;
    i = it->second;
  }
  return i;
}

// A head's chain, oldest first, ending at the head.
std::vector<const storage::Record*> ChainOf(const RecordSnapshot& snap, size_t head) {
  std::vector<const storage::Record*> chain = {&snap.records[head]};
  while (!chain.front()->supersedes.empty() && chain.size() < 1000) {
    auto it = snap.by_id.find(chain.front()->supersedes.front());
    if (it == snap.by_id.end()) break;
    chain.insert(chain.begin(), &snap.records[it->second]);
  }
  return chain;
}

// Best first: similarity, then backing, then the newer record.
auto ByRank(const RecordSnapshot& snap) {
  return [&snap](const Ranked& a, const Ranked& b) {
    if (a.rel.similarity != b.rel.similarity) return a.rel.similarity > b.rel.similarity;
    if (a.rel.backed != b.rel.backed) return a.rel.backed > b.rel.backed;
    return snap.records[a.index].record_id > snap.records[b.index].record_id;
  };
}

// What one query asks of System 2, shared by its rows.
struct RowQuery {
  RowQuery(const RecordSnapshot& s, IssueScorer& sc, const PipelineRequest& r, const Projection& pr)
      : snap(s), scorer(sc), req(r), p(pr) {}
  const RecordSnapshot& snap;
  IssueScorer& scorer;
  const PipelineRequest& req;
  const Projection& p;
  bool full = false;
  double record_floor = 0;
  Buckets hits_by_owner, hits_by_source, node_hits_by_owner;
  absl::flat_hash_set<std::string> owned_shown;  // ids of every row's own cells
};

// The row's own records at or above the floor, best first (ByRank), at
// most s2_k. Head tense ranks current heads; full tense ranks chains by
// their nodes, and a chain admitted comes whole (oldest first).
void OwnedRecords(RowQuery& q, S2Row* s2) {
  const RecordSnapshot& snap = q.snap;
  // head -> the chain's relevance: in head tense the head's own; in full
  // tense the best similarity of its nodes and their backing summed (the
  // chain is the unit returned, and each node recall backs is evidence of
  // its history).
  std::unordered_map<size_t, Relevance> chains;
  // "A's view of B": only A's records about B in B's row.
  const bool constrained = !q.p.source.empty() && s2->row == q.p.owner;
  const auto& owner_bucket =
      q.full ? Bucket(snap.nodes_by_owner, s2->row) : Bucket(snap.heads_by_owner, s2->row);
  for (size_t i :
       Candidates(owner_bucket, q.full ? q.node_hits_by_owner : q.hits_by_owner, s2->row)) {
    const storage::Record& r = snap.records[i];
    if (!InRange(r.valid_at_ms, q.req.start_ms, q.req.end_ms)) continue;
    if (constrained && r.source != q.p.source) continue;
    const Relevance rel = q.scorer.Score(i);
    auto [it, fresh] = chains.emplace(q.full ? HeadOf(snap, i) : i, rel);
    if (!fresh) {
      it->second.similarity = std::max(it->second.similarity, rel.similarity);
      it->second.backed += rel.backed;
    }
  }
  std::vector<Ranked> owned;
  for (auto& [head, rel] : chains) {
    rel.admission = q.scorer.Admission(rel.similarity, rel.backed);
    if (rel.admission >= q.record_floor) owned.push_back({rel, head});
  }
  std::sort(owned.begin(), owned.end(), ByRank(snap));
  for (size_t k = 0; k < owned.size() && k < q.req.budgets.s2_k; ++k) {
    if (q.full) {
      for (const auto* c : ChainOf(snap, owned[k].index)) {
        s2->records.push_back(*c);
        s2->scores.push_back(owned[k].rel.admission);
      }
    } else {
      s2->records.push_back(snap.records[owned[k].index]);
      s2->scores.push_back(owned[k].rel.admission);
    }
  }
}

// Source-k: records this person voiced about someone else or for the group
// (a decision they proposed), above the floor, that no row shows as its own
// cell; they do not use the row's budget.
void SourcedRecords(RowQuery& q, S2Row* s2) {
  const RecordSnapshot& snap = q.snap;
  std::vector<Ranked> sourced;
  for (size_t i : Candidates(Bucket(snap.heads_by_source, s2->row), q.hits_by_source, s2->row)) {
    const storage::Record& r = snap.records[i];
    if (r.owner == s2->row || q.owned_shown.contains(r.record_id)) continue;
    if (!InRange(r.valid_at_ms, q.req.start_ms, q.req.end_ms)) continue;
    const Relevance rel = q.scorer.Score(i);
    if (rel.admission >= q.record_floor) sourced.push_back({rel, i});
  }
  std::sort(sourced.begin(), sourced.end(), ByRank(snap));
  for (size_t k = 0; k < sourced.size() && k < q.req.budgets.s2_source_k; ++k) {
    s2->sourced.push_back(snap.records[sourced[k].index]);
  }
}

}  // namespace

absl::Status QueryPipeline::SystemTwo(const PipelineRequest& req,
                                      const std::vector<RosterMember>& roster,
                                      const std::map<std::string, ScoredSeq>* best_per_speaker,
                                      PipelineResult* out) {
  auto t = Clock::now();
  StageCall call;
  call.deadline = req.deadline;
  const Projection& p = out->projection;
  const bool full = p.tense == Tense::kFull;
  const std::vector<std::string> rows = RowsOf(p, roster);
  SM_ASSIGN_OR_RETURN(RecordsView snap, Records(req.channel, &call));
  SM_ASSIGN_OR_RETURN(std::vector<std::vector<float>> issue_v,
                      stages_->embed->Embed({p.issue.empty() ? req.question : p.issue}, &call));
  std::set<std::string> issue_set;
  for (auto& tkn : StemmedTokens(p.issue + " " + req.question)) {
    if (!IsStopword(tkn)) issue_set.insert(tkn);
  }
  const RowParams& rp = req.rows ? *req.rows : rows_;
  IssueScorer scorer(*snap, issue_v.front(), std::move(issue_set),
                     S1Weights(out->s1, req.budgets.s1_top_k), rp.provenance_weight);
  const bool offline = stages_->embed->offline();
  RowQuery q(*snap, scorer, req, p);
  q.full = full;
  q.record_floor = offline ? rp.record_floor_offline : rp.record_floor_model;
  // The hits by the bucket they fall in, so a row looks only at its own.
  for (size_t i : scorer.LexicalHits(snap->postings)) {
    q.hits_by_owner[snap->records[i].owner].push_back(i);
    q.hits_by_source[snap->records[i].source].push_back(i);
  }
  if (full) {  // the same over every node, superseded ones too
    for (size_t i : scorer.LexicalHits(snap->node_postings)) {
      q.node_hits_by_owner[snap->records[i].owner].push_back(i);
    }
  }
  std::vector<size_t> fallback_rows;  // rows with no record
  for (const auto& row : rows) {
    S2Row s2;
    s2.row = row;
    OwnedRecords(q, &s2);
    for (const auto& r : s2.records) q.owned_shown.insert(r.record_id);
    if (s2.records.empty() && row != kRowGroup) fallback_rows.push_back(out->s2.size());
    out->s2.push_back(std::move(s2));
  }
  // Source-k once every row's own cells are known: a record its owner's
  // row already shows (with its source marked) is not repeated.
  for (auto& s2 : out->s2) {
    if (s2.row != kRowGroup) SourcedRecords(q, &s2);
  }
  SM_RETURN_IF_ERROR(AddFallbacks(
      req, fallback_rows, offline ? rp.fallback_floor_offline : rp.fallback_floor_model,
      best_per_speaker,
      [&scorer](const std::vector<std::string>& toks, const std::vector<float>* vec) {
        return scorer.Similarity(toks, vec);
      },
      &call, out));
  for (auto& row : out->s2) {
    row.empty = row.records.empty() && row.sourced.empty() && !row.fallback.has_value();
  }
  Trace(out, "s2_rows", t, call, absl::StrCat(rows.size(), " rows, ", full ? "full" : "head"));
  return absl::OkStatus();
}

// Rows without records: each person's best verbatim message on the issue
// (one scoring pass for all of them), kept when it clears its own floor (the
// same similarity as records', judged with one embedding call).
absl::Status QueryPipeline::AddFallbacks(const PipelineRequest& req,
                                         const std::vector<size_t>& fallback_rows, double floor,
                                         const std::map<std::string, ScoredSeq>* best_per_speaker,
                                         const SimilarityFn& similarity, StageCall* call,
                                         PipelineResult* out) {
  if (fallback_rows.empty()) return absl::OkStatus();
  const Projection& p = out->projection;
  std::vector<std::pair<size_t, uint64_t>> fallback_seqs;  // (row index, seq)
  // Each person's best message by BM25 on the question and the issue,
  // stemmed, nothing else; recall's when it scored the same terms (its text
  // is the question and the issue, or the question alone when the issue
  // repeats it: the same ranking).
  std::map<std::string, ScoredSeq> best;
  if (best_per_speaker == nullptr) {
    LexicalQuery q;
    q.text = req.question + " " + p.issue;
    q.start_ms = req.start_ms;
    q.end_ms = req.end_ms;
    q.params.stem = true;
    for (size_t r : fallback_rows) q.only_speakers.push_back(out->s2[r].row);
    best = lexical_->BestPerSpeaker(req.channel, q);
  }
  const std::map<std::string, ScoredSeq>& best_of = best_per_speaker ? *best_per_speaker : best;
  for (size_t r : fallback_rows) {
    auto it = best_of.find(out->s2[r].row);
    if (it != best_of.end()) fallback_seqs.emplace_back(r, it->second.seq);
  }
  if (fallback_seqs.empty()) return absl::OkStatus();
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
  SM_ASSIGN_OR_RETURN(std::vector<std::vector<float>> vecs, stages_->embed->Embed(texts, call));
  std::unordered_map<uint64_t, const std::vector<float>*> vec_of;
  for (size_t i = 0; i < msgs.size() && i < vecs.size(); ++i) vec_of[msgs[i].seq] = &vecs[i];
  for (const auto& [row, seq] : fallback_seqs) {
    auto m = by_seq.find(seq);
    if (m == by_seq.end()) continue;
    std::vector<std::string> toks = StemmedTokens(m->second->text);
    std::sort(toks.begin(), toks.end());
    const double sc = similarity(toks, vec_of[seq]);
    if (sc < floor) continue;
    out->s2[row].fallback = *m->second;
    out->s2[row].fallback_score = sc;
  }
  return absl::OkStatus();
}

}  // namespace speakermem::retrieval
