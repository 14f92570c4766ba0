#include "eval/tool/eval_report_cmd.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>

#include "absl/strings/str_cat.h"
#include "client/cli_common.h"
#include "client/client.h"
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

int RunEvalReport(const EvalReportOptions& o) {
  absl::StatusOr<datasets::Format> format = datasets::ParseFormat(o.format);
  if (!format.ok()) return Fail(format.status());
  // The embedded instance is configured as speakermemd would be.
  absl::StatusOr<server::ServerConfig> loaded = LoadEmbeddedConfig(o.config_file);
  if (!loaded.ok()) return Fail(loaded.status());
  const server::ServerConfig& config = *loaded;
  eval::ReportData data;
  data.dataset = o.format;
  data.socialmem = *format == datasets::Format::kSocialMem;
  data.include_texts = o.include_texts;
  data.command = o.command;
  for (const char* stage : {"project", "select", "sufficiency", "answer", "embed", "writer"}) {
    absl::StatusOr<llm::EndpointConfig> ep = config.models.Resolve(stage);
    if (!ep.ok()) return Fail(ep.status());
    data.stage_models[stage] =
        ep->provider == "offline"
            ? "offline"
            : absl::StrCat(ep->provider, " ", ep->model, " at ", ep->base_url);
  }
  if (*format == datasets::Format::kLocomo) {
    data.category_names = {{"1", "multi-hop"},
                           {"2", "temporal"},
                           {"3", "open-domain"},
                           {"4", "single-hop"},
                           {"5", "adversarial (abstention is correct)"}};
  }
  std::vector<datasets::Conversation> convs;
  for (const auto& path : o.paths) {
    auto c = datasets::LoadFile(path, *format, "");
    if (!c.ok()) return Fail(c.status());
    data.inputs.push_back(std::filesystem::path(path).filename().string());
    for (auto& conv : *c) convs.push_back(std::move(conv));
  }
  // The judge, when one is given.
  llm::ModelsConfig models;
  std::unique_ptr<eval::JudgeStage> judge;
  if (!o.judge_url.empty()) {
    for (auto [k, v] :
         std::vector<std::pair<std::string, std::string>>{{"provider", "openai"},
                                                          {"base_url", o.judge_url},
                                                          {"model", o.judge_model},
                                                          {"api_key_env", o.judge_key_env}}) {
      if (absl::Status s = models.SetOverride("judge", k, v); !s.ok()) return Fail(s);
    }
    auto j = eval::BuildJudge(models, nullptr);
    if (!j.ok()) return Fail(j.status());
    judge = std::move(*j);
  }
  data.judge_configured = judge != nullptr;
  if (!judge) {
    std::fprintf(stderr, "no judge configured (--judge-url): accuracy is not measured%s\n",
                 data.socialmem ? "; open-ended SocialMem items are left out of MeanQ/MeanN" : "");
  }
  const bool tty = isatty(STDERR_FILENO);
  const auto start = std::chrono::steady_clock::now();
  size_t total_msgs = 0;
  for (const auto& c : convs) total_msgs += c.messages.size();
  std::fprintf(stderr, "ingesting %zu conversations (%zu messages) %s and deriving System 2\n",
               convs.size(), total_msgs,
               o.addr.empty() ? "into an embedded instance" : "into the server");
  std::unique_ptr<EmbeddedEngine> embedded;
  std::unique_ptr<client::Client> remote;
  if (o.addr.empty()) {
    auto e = EmbeddedEngine::Open(config.memory);
    if (!e.ok()) return Fail(e.status());
    embedded = std::move(*e);
    engine::Memory* mem = embedded->memory();
    for (const auto& c : convs) {
      for (size_t i = 0; i < c.messages.size(); i += 500) {
        std::vector<storage::Message> batch(
            c.messages.begin() + i, c.messages.begin() + std::min(c.messages.size(), i + 500));
        auto r = mem->Ingest({storage::kDefaultTenant, c.channel}, {}, std::move(batch));
        if (!r.ok()) return Fail(r.status());
      }
    }
    for (const auto& c : convs) {
      uint64_t newest = 0;
      auto st =
          mem->Flush({storage::kDefaultTenant, c.channel}, true, std::chrono::minutes(30), &newest);
      if (!st.ok()) return Fail(st.status());
    }
    if (!mem->WaitForEmbeddings(std::chrono::minutes(30))) {
      return Fail(absl::DeadlineExceededError("embeddings did not finish"));
    }
  } else {
    // A running server, with its own configuration.
    for (auto& [stage, what] : data.stage_models) what = "the server's configuration";
    client::ClientOptions co;
    co.addr = o.addr;
    co.api_key = o.api_key;
    remote = client::Client::Connect(co);
    for (const auto& c : convs) {
      std::vector<v1::DialogueMessage> msgs;
      for (const auto& m : c.messages) {
        v1::DialogueMessage w;
        server::ToProto(m, c.channel, &w);
        w.clear_seq();
        msgs.push_back(std::move(w));
      }
      if (absl::Status s = remote->IngestStream(c.channel, msgs, {}, nullptr); !s.ok()) {
        return Fail(s);
      }
      v1::FlushRequest f;
      f.set_channel(c.channel);
      f.set_wait(true);
      f.set_timeout_ms(30 * 60 * 1000);
      if (auto r = remote->Flush(f); !r.ok()) return Fail(r.status());
    }
  }
  auto query =
      [&](const std::string& channel, const std::string& question, const std::string& config,
          size_t k, bool answer,
          const std::vector<std::string>& options = {}) -> absl::StatusOr<engine::QueryResult> {
    if (remote) return RemoteQuery(remote.get(), channel, question, config, k, answer, options);
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
    return embedded->memory()->Query(p, answer);
  };
  auto progress = [&](const char* what) {
    auto phase_start = std::make_shared<std::chrono::steady_clock::time_point>();
    return [&, what, phase_start](size_t done, size_t total) {
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
  };
  eval::RetrieveFn retrieve = [&](const std::string& channel, const std::string& question,
                                  const std::string& config,
                                  size_t k) -> absl::StatusOr<std::vector<std::string>> {
    auto t = std::chrono::steady_clock::now();
    auto r = query(channel, question, config, k, false);
    if (!r.ok()) return r.status();
    if (config == "full") {
      data.latency_ms.push_back(
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count());
    }
    std::vector<std::string> ids;
    for (const auto& rm : r->pipeline.s1) ids.push_back(rm.message.message_id);
    if (config == "full+s2") {
      ids.push_back("");  // what follows counts at every k
      for (const auto& row : r->pipeline.s2) {
        for (const auto* list : {&row.records, &row.sourced}) {
          for (const auto& rec : *list)
            ids.insert(ids.end(), rec.from_ids.begin(), rec.from_ids.end());
        }
      }
    }
    return ids;
  };
  auto report = eval::EvaluateRetrieval(convs, {"bm25", "dense", "full", "full+s2"}, {5, 10, 20},
                                        retrieve, progress("retrieval"));
  if (!report.ok()) return Fail(report.status());
  data.retrieval = std::move(*report);
  // Answers at the paper's main configuration (top-k 10, S2 k 2 + source 1).
  size_t total_q = 0, done_q = 0;
  for (const auto& c : convs) total_q += c.questions.size();
  auto answer_progress = progress("answers");
  for (const auto& c : convs) {
    for (const auto& q : c.questions) {
      auto r = query(c.channel, q.question, "full", 10, true, q.options);
      if (!r.ok()) return Fail(r.status());
      std::map<std::string, double> tokens;
      for (const auto& t : r->pipeline.trace) {
        if (t.model_calls > 0) tokens[t.stage] += static_cast<double>(t.tokens_in + t.tokens_out);
      }
      for (const auto& [stage, n] : tokens) data.tokens_by_stage[stage].push_back(n);
      data.tokens_per_question.push_back(0);
      for (const auto& [stage, n] : tokens) data.tokens_per_question.back() += n;
      eval::QaItem item;
      item.network = c.channel;
      item.id = q.id;
      item.category = q.category;
      item.question = q.question;
      item.gold = q.answer.empty() ? q.correct_option : q.answer;
      item.answer = r->answer;
      item.token_f1 = eval::TokenF1(item.answer, item.gold);
      item.abstained = r->abstained;
      if (q.adversarial) {
        // Unanswerable from the conversation: abstaining is the right
        // answer, anything else is wrong (the dataset's "answer" is a
        // distractor).
        item.adversarial = true;
        item.gold = "(no answer in the conversation: abstention expected)";
        item.token_f1 = r->abstained ? 1.0 : 0.0;
      }
      item.multiple_choice = !q.options.empty() && !q.correct_option.empty();
      if (item.multiple_choice) {
        item.item_score = eval::MultipleChoiceScore(item.answer, q.options, q.correct_option);
      }
      if (judge && item.adversarial) {
        item.judge = r->abstained ? 1.0 : 0.0;
      } else if (judge) {
        // A failed or unreadable verdict leaves the item unjudged, counted.
        auto failed = [&](const absl::Status& s) {
          if (data.judge_failures++ == 0) data.judge_failure_example = std::string(s.message());
          std::fprintf(stderr, "\njudge: %s: %s\n", q.id.c_str(), std::string(s.message()).c_str());
        };
        llm::StageCall call;
        auto v = judge->Judge({q.question, item.gold, item.answer, false}, &call);
        if (v.ok()) {
          item.judge = v->correct ? 1.0 : 0.0;
        } else {
          failed(v.status());
        }
        if (data.socialmem && !item.multiple_choice) {
          auto pc = judge->Judge({q.question, item.gold, item.answer, true, q.category}, &call);
          if (pc.ok()) {
            item.item_score = pc->score;
          } else {
            failed(pc.status());
          }
        }
      }
      data.qa.push_back(std::move(item));
      answer_progress(++done_q, total_q);
    }
  }
  data.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  auto md = eval::WriteReport(data, o.out_dir);
  if (!md.ok()) return Fail(md.status());
  std::printf("%s", md->c_str());
  std::fprintf(stderr, "report written to %s/report.json and report.md\n", o.out_dir.c_str());
  return 0;
}

}  // namespace speakermem::cli
