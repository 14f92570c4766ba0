// The query pipeline (DESIGN 3): Project -> hybrid System 1 recall (stemmed
// BM25F with context and feedback, fused with dense) -> Select -> Expand ->
// Sufficiency/ASK -> top-k; System 2 rows per owner; Compose; Answer.
#ifndef SPEAKERMEM_RETRIEVAL_PIPELINE_H_
#define SPEAKERMEM_RETRIEVAL_PIPELINE_H_

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "absl/status/statusor.h"
#include "retrieval/bm25_index.h"
#include "retrieval/retriever.h"
#include "retrieval/stages.h"
#include "retrieval/vector_index.h"
#include "storage/store.h"

namespace speakermem::recordindex {
class ChannelIndexes;
class IndexView;
}  // namespace speakermem::recordindex

namespace speakermem::retrieval {

// Per-request budgets; defaults are the paper's main configuration.
// The longest question a query takes, in bytes (UTF-8): a question is a
// sentence or a paragraph, and every stage's cost grows with it.
inline constexpr size_t kMaxQuestionBytes = 8192;

struct Budgets {
  uint32_t s1_recall_n = 40;
  uint32_t s1_top_k = 10;
  uint32_t s2_k = 2;
  uint32_t s2_source_k = 1;
  bool expand = true;
  uint32_t expand_anchors = 2;
  uint32_t expand_window = 5;  // +- turns around an anchor, same session
  bool ask = false;
};

enum class RecallMode { kHybrid, kBm25, kDense };

// The relevance floors of System 2 rows (DESIGN 3, step 4). Similarity to
// the issue is half dense cosine, half the share of the words the
// text contains. A record below the floor stays out of its row; a row with
// no record falls back to the person's best message when that clears its
// own floor, else it is an explicit empty row. The offline and a model
// embedder differ in scale, so each has its own pair. Defaults: chosen by
// leave-one-conversation-out (docs/retrieval.md); the model ones are the
// paper's reference cosine floors, not tuned here.
struct RowParams {
  // Added to a record's similarity: this x the summed rank weights (1 for
  // the first System 1 item, falling linearly over top-k, 0 when absent) of
  // its from_ids in the same query's System 1 evidence. Memory distilled
  // from messages recall found relevant (several of them, for a record
  // that sums an exchange) counts more; memory that recall does not back
  // must clear the floor on its similarity alone. Same for both embedders.
  double provenance_weight = 0.5;
  double record_floor_offline = 0.7;
  double fallback_floor_offline = 0.0;
  double record_floor_model = 0.30;
  double fallback_floor_model = 0.25;
};

// The constants of System 1 recall in hybrid mode. The defaults were chosen
// by leave-one-conversation-out evaluation on the development data
// (`speakermem eval retrieval`, docs/retrieval.md); the BM25-only baseline
// ignores them (textbook Okapi BM25).
struct RecallParams {
  LexicalParams lexical = DefaultLexicalParams();
  // Weight of the dense list in reciprocal rank fusion (the lexical list
  // weighs 1) when the embedder is the offline hashed one: it is a much
  // weaker ranker than BM25 and mostly repeats it.
  double dense_weight_offline = 0.0;
  // The same with a real embedding model: it counts fully.
  double dense_weight_model = 1.0;
  // Select and Expand (re-selected) between recall and top-k.
  bool select = true;

  static LexicalParams DefaultLexicalParams();
};

struct PipelineResult;

struct PipelineRequest {
  storage::ChannelRef channel;
  std::string question;
  std::string asker;
  int64_t start_ms = 0;  // inclusive; 0 = unbounded
  int64_t end_ms = 0;    // exclusive; 0 = unbounded
  Budgets budgets;
  std::optional<Tense> tense;  // overrides Project's
  RecallMode mode = RecallMode::kHybrid;
  // Project, Select, Expand, ASK and System 2 rows; off = plain recall.
  bool stages = true;
  bool answer = true;
  // System 2 rows (off: System 1 evidence only, the paper's "no S2").
  bool system2 = true;
  std::vector<std::string> options;  // multiple choice: LETTER: text
  // Overrides the pipeline's recall constants (evaluation sweeps them).
  std::optional<RecallParams> recall;
  // Overrides the System 2 floors.
  std::optional<RowParams> rows;
  // The caller's deadline: past it, the pipeline stops before its next stage
  // with DEADLINE_EXCEEDED instead of working for nobody.
  std::chrono::system_clock::time_point deadline = std::chrono::system_clock::time_point::max();
  // Streaming (QueryStream; both may be empty). `on_evidence` sees the
  // result just before the Answer stage runs (everything but the answer);
  // `on_delta` then receives the answer text as it forms (a stage that
  // cannot stream: its whole answer, once). Either returning false means
  // the caller has gone: the pipeline stops with CANCELLED.
  std::function<bool(const PipelineResult&)> on_evidence = nullptr;
  std::function<bool(absl::string_view)> on_delta = nullptr;
};

// One owner row of System 2 evidence.
struct S2Row {
  std::string row;  // speaker id or "GROUP"
  // The row's records: heads (head mode) or heads with their chains (full).
  std::vector<storage::Record> records;
  std::vector<double> scores;
  // Records this person provided about someone else (source-k); they do not
  // consume the row's budget.
  std::vector<storage::Record> sourced;
  // When the row has no record above the floor: the person's best verbatim
  // message, when it clears the fallback floor.
  std::optional<storage::Message> fallback;
  double fallback_score = 0;
  bool empty = false;  // no evidence at all
};

struct PipelineResult {
  Freshness freshness;
  Projection projection;
  std::vector<RetrievedMessage> s1;  // at most s1_top_k, best first
  std::vector<S2Row> s2;
  std::vector<StageTrace> trace;
  std::optional<AnswerOutput> answer;
  // The evidence pack as the Answer stage saw (or would see) it.
  std::string evidence_pack;
};

// Safe for concurrent use. All collaborators must outlive it.
class QueryPipeline {
 public:
  // `indexes`: the record indexes shared with the Writer (null: its own).
  QueryPipeline(storage::Store* store, const LexicalIndex* lexical, const VectorIndex* vectors,
                const QueryStages* stages, RecallParams recall = {}, RowParams rows = {},
                recordindex::ChannelIndexes* indexes = nullptr);
  ~QueryPipeline();

  // NOT_FOUND for an unknown channel; INVALID_ARGUMENT for an empty question.
  absl::StatusOr<PipelineResult> Run(const PipelineRequest& request);

  // Record vectors known already (loaded from the store at start, or
  // embedded as the Writer wrote the records).
  void AddRecordVector(const storage::ChannelRef& channel, const std::string& record_id,
                       std::vector<float> v);
  // True when the record's vector is known (a query embedded it first).
  bool KnowsRecordVector(const storage::ChannelRef& channel, const std::string& record_id);
  // Brings the channel's System 2 snapshot up to date now (e.g. right after
  // the Writer wrote), so that queries find it ready. Errors are left to the
  // next query to report.
  void Warm(const storage::ChannelRef& channel);
  // Drops everything cached for the channel (after deletions or edits).
  void Forget(const storage::ChannelRef& channel);

 private:
  // With `best_per_speaker`, BM25 also fills it (Bm25Index::Search).
  absl::StatusOr<std::vector<ScoredSeq>> Recall(
      const PipelineRequest& req, const Projection& p, const std::vector<std::string>& row_ids,
      PipelineResult* out, std::map<std::string, ScoredSeq>* best_per_speaker = nullptr);
  // The channel's derivation lag (Writer cursor against the newest message).
  absl::Status MeasureFreshness(const storage::ChannelRef& channel,
                                const storage::ChannelInfo& info, Freshness* f);
  // Appends the anchors' neighbouring turns (same session, in range) that
  // are not in the pool yet.
  absl::Status Expand(const PipelineRequest& req, const std::vector<size_t>& anchors,
                      std::vector<storage::Message>* pool);
  // `best_per_speaker`: recall's, when it scored the fallbacks' terms (or null).
  absl::Status SystemTwo(const PipelineRequest& req, const std::vector<RosterMember>& roster,
                         const std::map<std::string, ScoredSeq>* best_per_speaker,
                         PipelineResult* out);
  // Similarity of a text (sorted stemmed tokens, its vector or null) to the
  // query's issue.
  using SimilarityFn =
      std::function<double(const std::vector<std::string>&, const std::vector<float>*)>;
  absl::Status AddFallbacks(const PipelineRequest& req, const std::vector<size_t>& fallback_rows,
                            double floor, const std::map<std::string, ScoredSeq>* best_per_speaker,
                            const SimilarityFn& similarity, StageCall* call, PipelineResult* out);

  // The steps of Run, in order, over one query's state (pipeline_internal.h).
  struct QueryState;
  absl::Status Begin(QueryState* st);
  absl::Status ProjectStep(QueryState* st);
  absl::Status RecallStep(QueryState* st);
  absl::Status AddUnwrittenTail(QueryState* st);
  absl::Status SelectStep(QueryState* st);
  absl::StatusOr<SelectOutput> SelectOver(QueryState* st, size_t max_anchors,
                                          const std::vector<size_t>& subset, size_t ranked_before);
  absl::Status ExpandAndReselect(QueryState* st, const std::vector<size_t>& anchors);
  absl::StatusOr<bool> AskOnce(QueryState* st);
  absl::Status AddToPool(QueryState* st, const LexicalQuery& q, bool score_new);
  void TopK(QueryState* st);
  absl::Status ComposeAndAnswer(QueryState* st);

  // A channel's records with their tokens and indexes, brought up to date
  // and held for reading (recordindex/, shared with the Writer; vectors
  // attached in channel_records.cc).
  absl::StatusOr<recordindex::IndexView> Records(const storage::ChannelRef& ch, StageCall* call);
  // The records' vectors: known ones from the cache, the others embedded.
  absl::Status AttachVectors(const storage::ChannelRef& ch,
                             const std::vector<storage::Record>& records,
                             std::vector<std::shared_ptr<const std::vector<float>>>* out,
                             StageCall* call);

  storage::Store* const store_;
  const LexicalIndex* const lexical_;
  const VectorIndex* const vectors_;
  const QueryStages* const stages_;
  const RecallParams recall_;
  const RowParams rows_;

  // The record indexes shared with the Writer, or this pipeline's own.
  std::unique_ptr<recordindex::ChannelIndexes> own_indexes_;
  recordindex::ChannelIndexes* const indexes_;
  std::mutex cache_mu_;
  std::map<std::pair<storage::ChannelRef, std::string>, std::shared_ptr<const std::vector<float>>>
      record_vectors_;
};

}  // namespace speakermem::retrieval

#endif  // SPEAKERMEM_RETRIEVAL_PIPELINE_H_
