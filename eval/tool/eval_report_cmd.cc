#include "eval/tool/eval_report_cmd.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>

#include "absl/strings/str_cat.h"
#include "client/cli_common.h"
#include "client/client.h"
#include "common/status_macros.h"
#include "datasets/datasets.h"
#include "eval/judge.h"
#include "eval/metrics.h"
#include "eval/report.h"
#include "eval/retrieval_eval.h"
#include "eval/tool/embedded_engine.h"
#include "server/config.h"
#include "server/convert.h"

extern char** environ;

namespace speakermem::cli {

v1::QueryRequest RemoteEvalRequest(const std::string& channel, const std::string& question,
                                   const std::string& config, size_t k) {
  v1::QueryRequest req;
  req.set_channel(channel);
  req.set_question(question);
  req.set_mode(config == "bm25"    ? v1::BM25_ONLY
               : config == "dense" ? v1::DENSE_ONLY
                                   : v1::PIPELINE);
  req.mutable_budgets()->set_s1_top_k(static_cast<uint32_t>(k));
  return req;
}

namespace {

// The same query through a running server, as an engine result.
absl::StatusOr<engine::QueryResult> RemoteQuery(client::Client* c, const std::string& channel,
                                                const std::string& question,
                                                const std::string& config, size_t k, bool answer,
                                                const std::vector<std::string>& options) {
  v1::QueryRequest req = RemoteEvalRequest(channel, question, config, k);
  req.mutable_budgets()->set_s1_recall_n(std::max<uint32_t>(40, static_cast<uint32_t>(k)));
  for (const auto& opt : options) req.add_options(opt);
  absl::StatusOr<v1::QueryResponse> r = answer ? c->Query(req) : c->Retrieve(req);
  if (!r.ok()) return r.status();
  engine::QueryResult out;
  out.answer = r->answer();
  out.abstained = r->abstained();
  out.cited_ids.assign(r->cited_ids().begin(), r->cited_ids().end());
  for (const auto& e : r->evidence()) {
    retrieval::RetrievedMessage rm;
    rm.message = server::FromProto(e.message(), e.message().seq());
    rm.score = e.score();
    rm.newer_than_memory = e.newer_than_memory();
    out.pipeline.s1.push_back(std::move(rm));
  }
  for (const auto& row : r->rows()) {
    retrieval::S2Row s2;
    s2.row = row.row();
    for (const auto& rec : row.records()) s2.records.push_back(server::FromProto(rec));
    for (const auto& rec : row.sourced()) s2.sourced.push_back(server::FromProto(rec));
    if (!row.fallback().message_id().empty()) {
      s2.fallback = server::FromProto(row.fallback(), row.fallback().seq());
    }
    s2.empty = row.empty();
    out.pipeline.s2.push_back(std::move(s2));
  }
  for (const auto& t : r->trace()) {
    out.pipeline.trace.push_back(retrieval::StageTrace{t.stage(), t.latency_ms(), t.model_calls(),
                                                       t.tokens_in(), t.tokens_out(), t.note()});
  }
  out.pipeline.evidence_pack = r->evidence_pack();
  return out;
}

}  // namespace

absl::StatusOr<server::ServerConfig> LoadEmbeddedConfig(const std::string& config_file) {
  server::ServerConfig config;
  if (!config_file.empty()) {
    if (absl::Status s = server::ApplyConfigFile(&config, config_file); !s.ok()) return s;
  }
  std::vector<std::string> env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) env.emplace_back(*e);
  if (absl::Status s = server::ApplyEnvironment(&config, env); !s.ok()) return s;
  config.memory.models = config.models;
  return config;
}

namespace {

// Per-phase progress on a terminal: done/total, elapsed, ETA.
std::function<void(size_t, size_t)> Progress(const char* what, bool tty) {
  auto phase_start = std::make_shared<std::chrono::steady_clock::time_point>();
  return [what, tty, phase_start](size_t done, size_t total) {
    if (done <= 1) *phase_start = std::chrono::steady_clock::now();
    if (!tty || (done % 10 != 0 && done != total)) return;
    double secs =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - *phase_start).count();
    double eta =
        done == 0 ? 0 : secs / static_cast<double>(done) * static_cast<double>(total - done);
    std::fprintf(stderr, "\r%s: %zu/%zu questions  elapsed %.0fs  ETA %.0fs ", what, done, total,
                 secs, eta);
    if (done == total) std::fputs("\n", stderr);
  };
}

// One `eval report` run: load, ingest (embedded or into a server), System 1
// recall per configuration, answers (and the judge's verdicts), the report.
class ReportRun {
 public:
  ReportRun(const EvalReportOptions& o, const server::ServerConfig& config)
      : o_(o), config_(config), tty_(isatty(STDERR_FILENO)) {}

  absl::Status Run() {
    SM_RETURN_IF_ERROR(Describe());
    SM_RETURN_IF_ERROR(Load());
    SM_RETURN_IF_ERROR(BuildJudge());
    const auto start = std::chrono::steady_clock::now();
    size_t total_msgs = 0;
    for (const auto& c : convs_) total_msgs += c.messages.size();
    std::fprintf(stderr, "ingesting %zu conversations (%zu messages) %s and deriving System 2\n",
                 convs_.size(), total_msgs,
                 o_.addr.empty() ? "into an embedded instance" : "into the server");
    SM_RETURN_IF_ERROR(o_.addr.empty() ? IngestEmbedded() : IngestRemote());
    SM_RETURN_IF_ERROR(Recall());
    SM_RETURN_IF_ERROR(AnswerAll());
    data_.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    absl::StatusOr<std::string> md = eval::WriteReport(data_, o_.out_dir);
    if (!md.ok()) return md.status();
    std::printf("%s", md->c_str());
    std::fprintf(stderr, "report written to %s/report.json and report.md\n", o_.out_dir.c_str());
    return absl::OkStatus();
  }

 private:
  // What the report says of the run: dataset, stages' providers, categories.
  absl::Status Describe() {
    SM_ASSIGN_OR_RETURN(format_, datasets::ParseFormat(o_.format));
    data_.dataset = o_.format;
    data_.socialmem = format_ == datasets::Format::kSocialMem;
    data_.include_texts = o_.include_texts;
    data_.command = o_.command;
    for (const char* stage : {"project", "select", "sufficiency", "answer", "embed", "writer"}) {
      SM_ASSIGN_OR_RETURN(llm::EndpointConfig ep, config_.models.Resolve(stage));
      data_.stage_models[stage] =
          ep.provider == "offline" ? "offline"
                                   : absl::StrCat(ep.provider, " ", ep.model, " at ", ep.base_url);
    }
    if (!o_.addr.empty()) {
      for (auto& [stage, what] : data_.stage_models) what = "the server's configuration";
    }
    if (format_ == datasets::Format::kLocomo) {
      data_.category_names = {{"1", "multi-hop"},
                              {"2", "temporal"},
                              {"3", "open-domain"},
                              {"4", "single-hop"},
                              {"5", "adversarial (abstention is correct)"}};
    }
    return absl::OkStatus();
  }

  absl::Status Load() {
    for (const auto& path : o_.paths) {
      SM_ASSIGN_OR_RETURN(std::vector<datasets::Conversation> c,
                          datasets::LoadFile(path, format_, ""));
      data_.inputs.push_back(std::filesystem::path(path).filename().string());
      for (auto& conv : c) convs_.push_back(std::move(conv));
    }
    return absl::OkStatus();
  }

  // The judge, when one is given.
  absl::Status BuildJudge() {
    if (!o_.judge_url.empty()) {
      llm::ModelsConfig models;
      for (auto [k, v] :
           std::vector<std::pair<std::string, std::string>>{{"provider", "openai"},
                                                            {"base_url", o_.judge_url},
                                                            {"model", o_.judge_model},
                                                            {"api_key_env", o_.judge_key_env}}) {
        SM_RETURN_IF_ERROR(models.SetOverride("judge", k, v));
      }
      SM_ASSIGN_OR_RETURN(judge_, eval::BuildJudge(models, nullptr));
    }
    data_.judge_configured = judge_ != nullptr;
    if (!judge_) {
      std::fprintf(
          stderr, "no judge configured (--judge-url): accuracy is not measured%s\n",
          data_.socialmem ? "; open-ended SocialMem items are left out of MeanQ/MeanN" : "");
    }
    return absl::OkStatus();
  }

  absl::Status IngestEmbedded() {
    SM_ASSIGN_OR_RETURN(embedded_, EmbeddedEngine::Open(config_.memory));
    engine::Memory* mem = embedded_->memory();
    for (const auto& c : convs_) {
      for (size_t i = 0; i < c.messages.size(); i += 500) {
        std::vector<storage::Message> batch(
            c.messages.begin() + i, c.messages.begin() + std::min(c.messages.size(), i + 500));
        SM_RETURN_IF_ERROR(
            mem->Ingest({storage::kDefaultTenant, c.channel}, {}, std::move(batch)).status());
      }
    }
    for (const auto& c : convs_) {
      uint64_t newest = 0;
      SM_RETURN_IF_ERROR(
          mem->Flush({storage::kDefaultTenant, c.channel}, true, std::chrono::minutes(30), &newest)
              .status());
    }
    if (!mem->WaitForEmbeddings(std::chrono::minutes(30))) {
      return absl::DeadlineExceededError("embeddings did not finish");
    }
    return absl::OkStatus();
  }

  // A running server, with its own configuration.
  absl::Status IngestRemote() {
    client::ClientOptions co;
    co.addr = o_.addr;
    co.api_key = o_.api_key;
    remote_ = client::Client::Connect(co);
    for (const auto& c : convs_) {
      std::vector<v1::DialogueMessage> msgs;
      for (const auto& m : c.messages) {
        v1::DialogueMessage w;
        server::ToProto(m, c.channel, &w);
        w.clear_seq();
        msgs.push_back(std::move(w));
      }
      SM_RETURN_IF_ERROR(remote_->IngestStream(c.channel, msgs, {}, nullptr));
      v1::FlushRequest f;
      f.set_channel(c.channel);
      f.set_wait(true);
      f.set_timeout_ms(30 * 60 * 1000);
      SM_RETURN_IF_ERROR(remote_->Flush(f).status());
    }
    return absl::OkStatus();
  }

  absl::StatusOr<engine::QueryResult> Query(const std::string& channel, const std::string& question,
                                            const std::string& config, size_t k, bool answer,
                                            const std::vector<std::string>& options = {}) {
    if (remote_) return RemoteQuery(remote_.get(), channel, question, config, k, answer, options);
    engine::QueryParams p;
    p.options = options;
    p.channel = {storage::kDefaultTenant, channel};
    p.question = question;
    p.budgets.s1_top_k = static_cast<uint32_t>(k);
    p.budgets.s1_recall_n = std::max<uint32_t>(40, static_cast<uint32_t>(k));
    p.mode = config == "bm25"    ? retrieval::RecallMode::kBm25
             : config == "dense" ? retrieval::RecallMode::kDense
                                 : retrieval::RecallMode::kHybrid;
    p.stages = config == "full" || config == "full+s2";
    return embedded_->memory()->Query(p, answer);
  }

  // The message ids a configuration retrieves (full+s2: with the System 2
  // records' from_ids after a "" marker, counted at every k).
  absl::StatusOr<std::vector<std::string>> Retrieve(const std::string& channel,
                                                    const std::string& question,
                                                    const std::string& config, size_t k) {
    auto t = std::chrono::steady_clock::now();
    SM_ASSIGN_OR_RETURN(engine::QueryResult r, Query(channel, question, config, k, false));
    if (config == "full") {
      data_.latency_ms.push_back(
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count());
    }
    std::vector<std::string> ids;
    for (const auto& rm : r.pipeline.s1) ids.push_back(rm.message.message_id);
    if (config == "full+s2") {
      ids.push_back("");  // what follows counts at every k
      for (const auto& row : r.pipeline.s2) {
        for (const auto* list : {&row.records, &row.sourced}) {
          for (const auto& rec : *list)
            ids.insert(ids.end(), rec.from_ids.begin(), rec.from_ids.end());
        }
      }
    }
    return ids;
  }

  absl::Status Recall() {
    eval::RetrieveFn retrieve = [this](const std::string& channel, const std::string& question,
                                       const std::string& config,
                                       size_t k) { return Retrieve(channel, question, config, k); };
    SM_ASSIGN_OR_RETURN(data_.retrieval, eval::EvaluateRetrieval(
                                             convs_, {"bm25", "dense", "full", "full+s2"},
                                             {5, 10, 20}, retrieve, Progress("retrieval", tty_)));
    return absl::OkStatus();
  }

  // Answers at the paper's main configuration (top-k 10, S2 k 2 + source 1).
  absl::Status AnswerAll() {
    size_t total_q = 0, done_q = 0;
    for (const auto& c : convs_) total_q += c.questions.size();
    auto answer_progress = Progress("answers", tty_);
    for (const auto& c : convs_) {
      for (const auto& q : c.questions) {
        SM_ASSIGN_OR_RETURN(engine::QueryResult r,
                            Query(c.channel, q.question, "full", 10, true, q.options));
        CountTokens(r);
        eval::QaItem item = Score(c, q, r);
        if (judge_) Judge(q, r, &item);
        data_.qa.push_back(std::move(item));
        answer_progress(++done_q, total_q);
      }
    }
    return absl::OkStatus();
  }

  void CountTokens(const engine::QueryResult& r) {
    std::map<std::string, double> tokens;
    for (const auto& t : r.pipeline.trace) {
      if (t.model_calls > 0) tokens[t.stage] += static_cast<double>(t.tokens_in + t.tokens_out);
    }
    for (const auto& [stage, n] : tokens) data_.tokens_by_stage[stage].push_back(n);
    data_.tokens_per_question.push_back(0);
    for (const auto& [stage, n] : tokens) data_.tokens_per_question.back() += n;
  }

  static eval::QaItem Score(const datasets::Conversation& c, const datasets::Question& q,
                            const engine::QueryResult& r) {
    eval::QaItem item;
    item.network = c.channel;
    item.id = q.id;
    item.category = q.category;
    item.question = q.question;
    item.gold = q.answer.empty() ? q.correct_option : q.answer;
    item.answer = r.answer;
    item.token_f1 = eval::TokenF1(item.answer, item.gold);
    item.abstained = r.abstained;
    if (q.adversarial) {
      // Unanswerable from the conversation: abstaining is the right answer,
      // anything else is wrong (the dataset's "answer" is a distractor).
      item.adversarial = true;
      item.gold = "(no answer in the conversation: abstention expected)";
      item.token_f1 = r.abstained ? 1.0 : 0.0;
    }
    item.multiple_choice = !q.options.empty() && !q.correct_option.empty();
    if (item.multiple_choice) {
      item.item_score = eval::MultipleChoiceScore(item.answer, q.options, q.correct_option);
    }
    return item;
  }

  // The judge's verdict (and, for an open-ended SocialMem item, its partial
  // credit by the item's category). A failed or unreadable verdict leaves the
  // item unjudged, counted.
  void Judge(const datasets::Question& q, const engine::QueryResult& r, eval::QaItem* item) {
    if (item->adversarial) {
      item->judge = r.abstained ? 1.0 : 0.0;
      return;
    }
    auto failed = [&](const absl::Status& s) {
      if (data_.judge_failures++ == 0) data_.judge_failure_example = std::string(s.message());
      std::fprintf(stderr, "\njudge: %s: %s\n", q.id.c_str(), std::string(s.message()).c_str());
    };
    llm::StageCall call;
    auto v = judge_->Judge({q.question, item->gold, item->answer, false}, &call);
    if (v.ok()) {
      item->judge = v->correct ? 1.0 : 0.0;
    } else {
      failed(v.status());
    }
    if (data_.socialmem && !item->multiple_choice) {
      auto pc = judge_->Judge({q.question, item->gold, item->answer, true, q.category}, &call);
      if (pc.ok()) {
        item->item_score = pc->score;
      } else {
        failed(pc.status());
      }
    }
  }

  const EvalReportOptions& o_;
  const server::ServerConfig& config_;
  const bool tty_;
  datasets::Format format_ = datasets::Format::kAuto;
  eval::ReportData data_;
  std::vector<datasets::Conversation> convs_;
  std::unique_ptr<eval::JudgeStage> judge_;
  std::unique_ptr<EmbeddedEngine> embedded_;
  std::unique_ptr<client::Client> remote_;
};

}  // namespace

int RunEvalReport(const EvalReportOptions& o) {
  // The embedded instance is configured as speakermemd would be.
  absl::StatusOr<server::ServerConfig> config = LoadEmbeddedConfig(o.config_file);
  if (!config.ok()) return Fail(config.status());
  ReportRun run(o, *config);
  if (absl::Status s = run.Run(); !s.ok()) return Fail(s);
  return 0;
}

}  // namespace speakermem::cli
