// `speakermem eval ...`: the evaluation commands (embedded instance or a
// running server).
#include "eval/tool/cli_eval.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "client/client.h"
#include "datasets/datasets.h"
#include "eval/metrics.h"
#include "eval/report.h"
#include "eval/retrieval_eval.h"
#include "eval/tool/embedded_engine.h"
#include "eval/tool/eval_report_cmd.h"
#include "eval/tool/recall_study.h"
#include "eval/tool/rows_study.h"
#include "eval/tool/writer_study.h"
#include "nlohmann/json.hpp"

namespace speakermem::cli {
namespace {

// Ingests the conversations into a running server and waits until every
// one is derived and embedded.
absl::Status IngestIntoServer(client::Client* client,
                              const std::vector<datasets::Conversation>& convs) {
  size_t total_msgs = 0;
  for (const auto& c : convs) total_msgs += c.messages.size();
  std::fprintf(stderr, "ingesting %zu conversations (%zu messages) into the server\n", convs.size(),
               total_msgs);
  for (const auto& c : convs) {
    std::vector<v1::DialogueMessage> msgs;
    for (const auto& m : c.messages) msgs.push_back(ToWire(m));
    if (absl::Status s = client->IngestStream(c.channel, msgs, {}, nullptr); !s.ok()) return s;
  }
  // Every question sees the whole conversation derived and embedded.
  std::fprintf(stderr, "waiting for the server to derive and embed everything\n");
  for (const auto& c : convs) {
    v1::FlushRequest f;
    f.set_channel(c.channel);
    f.set_wait(true);
    f.set_wait_embeddings(true);
    f.set_timeout_ms(30 * 60 * 1000);
    if (auto r = client->Flush(f); !r.ok()) return r.status();
  }
  return absl::OkStatus();
}

void PrintRecallTable(const eval::RetrievalReport& report) {
  std::printf(
      "%zu questions (%zu skipped without evidence, %zu evidence ids not in the "
      "conversation)\n",
      report.questions_total, report.questions_skipped, report.evidence_ids_dropped);
  std::printf("%-8s %10s %10s %10s %10s %10s %10s\n", "config", "recall@5", "recall@10",
              "recall@20", "hit@5", "hit@10", "hit@20");
  for (const char* name : {"bm25", "dense", "full"}) {
    const auto& st = report.configs.at(name).overall;
    double n = std::max<size_t>(1, st.questions);
    std::printf("%-8s %10.2f %10.2f %10.2f %10.2f %10.2f %10.2f\n", name, 100 * st.recall.at(5) / n,
                100 * st.recall.at(10) / n, 100 * st.recall.at(20) / n, 100 * st.hit.at(5) / n,
                100 * st.hit.at(10) / n, 100 * st.hit.at(20) / n);
  }
}

// A running server: recall of its bm25, dense and full configurations.
int RemoteRecall(const Args& args, const std::vector<datasets::Conversation>& convs) {
  const bool tty = isatty(STDERR_FILENO);
  client::ClientOptions opts;
  const char* env_addr = std::getenv("SPEAKERMEM_ADDR");
  opts.addr = args.Get("addr", env_addr != nullptr ? env_addr : "");
  opts.api_key = args.Get("api-key");
  std::unique_ptr<client::Client> client = client::Client::Connect(opts);
  if (absl::Status s = IngestIntoServer(client.get(), convs); !s.ok()) return Fail(s);
  eval::RetrieveFn retrieve = [&](const std::string& channel, const std::string& question,
                                  const std::string& config,
                                  size_t k) -> absl::StatusOr<std::vector<std::string>> {
    std::vector<std::string> ids;
    auto r = client->Retrieve(RemoteEvalRequest(channel, question, config, k));
    if (!r.ok()) return r.status();
    for (const auto& e : r->evidence()) ids.push_back(e.message().message_id());
    return ids;
  };
  auto start = std::chrono::steady_clock::now();
  auto report = eval::EvaluateRetrieval(
      convs, {"bm25", "dense", "full"}, {5, 10, 20}, retrieve, [&](size_t done, size_t total) {
        if (!tty || (done % 10 != 0 && done != total)) return;
        double secs =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        double eta = done == 0 ? 0 : secs / done * (total - done);
        std::fprintf(stderr, "\r%zu/%zu questions  ETA %.0fs ", done, total, eta);
        if (done == total) std::fputs("\n", stderr);
      });
  if (!report.ok()) return Fail(report.status());
  std::string json = eval::ReportJson(*report, args.Get("format", "auto"));
  if (args.Has("out")) {
    std::ofstream(args.Get("out")) << json << "\n";
  }
  if (args.Has("json")) {
    std::printf("%s\n", json.c_str());
    return 0;
  }
  PrintRecallTable(*report);
  return 0;
}

int CmdEvalRetrieval(const Args& args, bool remote) {
  if (args.positional.size() < 3) return Usage("eval retrieval: give PATH...");
  absl::StatusOr<datasets::Format> format = datasets::ParseFormat(args.Get("format", "auto"));
  if (!format.ok()) return Fail(format.status());
  std::vector<datasets::Conversation> convs;
  for (size_t i = 2; i < args.positional.size(); ++i) {
    auto c = datasets::LoadFile(args.positional[i], *format, "");
    if (!c.ok()) return Fail(c.status());
    for (auto& conv : *c) convs.push_back(std::move(conv));
  }
  if (remote) return RemoteRecall(args, convs);
  RecallStudyOptions o;
  auto cfg = LoadEmbeddedConfig(args.Get("config"));
  if (!cfg.ok()) return Fail(cfg.status());
  o.memory = cfg->memory;
  o.json_out = args.Get("out");
  o.md_out = args.Get("md");
  return RunRecallStudy(convs, o);
}

int CmdEvalReport(const Args& args, int argc, char** argv) {
  if (args.positional.size() < 3) return Usage("eval report: give PATH...");
  if (!args.Has("out")) return Usage("eval report: give --out DIR");
  if (args.Has("addr") && args.Has("config")) {
    return Usage(
        "eval report: --addr evaluates a running server with its own configuration; "
        "drop --config");
  }
  EvalReportOptions o;
  o.addr = args.Get("addr");
  o.api_key = args.Get("api-key");
  o.format = args.Get("format", "auto");
  o.out_dir = args.Get("out");
  o.config_file = args.Get("config");
  o.judge_url = args.Get("judge-url");
  o.judge_model = args.Get("judge-model", "gpt-4o-mini");
  // A local judge needs no key: without --judge-key-env, OPENAI_API_KEY is
  // used only when it is set.
  o.judge_key_env = args.Has("judge-key-env")                  ? args.Get("judge-key-env")
                    : std::getenv("OPENAI_API_KEY") != nullptr ? "OPENAI_API_KEY"
                                                               : "";
  o.include_texts = args.Has("texts");
  for (int i = 0; i < argc; ++i) {
    absl::StrAppend(&o.command, i == 0 ? "speakermem" : " ", i == 0 ? "" : argv[i]);
  }
  o.paths.assign(args.positional.begin() + 2, args.positional.end());
  return RunEvalReport(o);
}

int CmdEvalWriter(const Args& args) {
  if (args.positional.size() < 3) return Usage("eval writer: give TRAJECTORY files");
  WriterStudyOptions o;
  o.paths.assign(args.positional.begin() + 2, args.positional.end());
  o.dump_dir = args.Get("dump");
  o.md_out = args.Get("md");
  o.json = args.Has("json");
  return RunWriterStudy(o);
}

int CmdEvalRows(const Args& args) {
  if (args.positional.size() < 3) return Usage("eval rows: give PATH...");
  std::vector<datasets::Conversation> convs;
  for (size_t i = 2; i < args.positional.size(); ++i) {
    auto c = datasets::LoadFile(args.positional[i], datasets::Format::kAuto, "");
    if (!c.ok()) return Fail(c.status());
    for (auto& conv : *c) convs.push_back(std::move(conv));
  }
  auto cfg = LoadEmbeddedConfig(args.Get("config"));
  if (!cfg.ok()) return Fail(cfg.status());
  return RunRowsStudy(convs, cfg->memory, args.Get("md"), args.Get("dump"));
}

}  // namespace

int CmdEval(const Args& args, int argc, char** argv) {
  const std::string what = args.positional.size() >= 2 ? args.positional[1] : "";
  if (what == "writer") return CmdEvalWriter(args);
  if (what == "report") return CmdEvalReport(args, argc, argv);
  if (what == "retrieval") {
    const char* env_addr = std::getenv("SPEAKERMEM_ADDR");
    return CmdEvalRetrieval(args, args.Has("addr") || (env_addr != nullptr && *env_addr));
  }
  if (what == "rows") return CmdEvalRows(args);
  return Usage("eval: expected 'eval writer', 'eval retrieval', 'eval rows' or 'eval report'");
}

}  // namespace speakermem::cli
