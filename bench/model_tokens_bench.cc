// What the model-backed path costs in tokens: every stage (Writer, Project,
// Select, Sufficiency, Answer, Embed) pointed at the fake OpenAI-compatible
// server in this process, which answers like a clean instruct model and
// reports usage from the prompt's size (about 4 characters a token). The
// LoCoMo conversations are ingested and derived, then every question is
// asked once with ASK off (the paper's main configuration: top-k 10).
//
//   build/bench/model_tokens_bench [--data ../shared/data/locomo/locomo_dev.json]
//                                  [--questions N] [--ask] [--show STAGE]
//
// --show STAGE prints the messages of the last request that stage sent
// (e.g. select, answer, writer), to see what the tokens are spent on.
// Prints the Writer's prompt tokens per message (and per call, mean and
// p95), tokens per question by stage (mean and p95), and how many times
// each record was embedded.
#include <chrono>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "datasets/datasets.h"
#include "eval/tool/embedded_engine.h"
#include "nlohmann/json.hpp"
#include "tests/fake/fake_model_server.h"
#include "tests/fake/standard_reply.h"

namespace speakermem {
namespace {

struct Summary {
  double mean = 0, p95 = 0;
};

Summary Summarise(std::vector<double> v) {
  Summary s;
  if (v.empty()) return s;
  double sum = 0;
  for (double x : v) sum += x;
  s.mean = sum / static_cast<double>(v.size());
  std::sort(v.begin(), v.end());
  s.p95 = v[std::min(v.size() - 1, static_cast<size_t>(0.95 * static_cast<double>(v.size())))];
  return s;
}

double PromptTokens(const testing::FakeRequest& r) {
  nlohmann::json body = nlohmann::json::parse(r.body, nullptr, false);
  size_t chars = 0;
  if (body.is_object() && body.contains("messages")) {
    for (const auto& m : body["messages"]) chars += m.value("content", "").size();
  }
  return static_cast<double>((chars + 3) / 4);
}

struct Flags {
  std::string data = "../shared/data/locomo/locomo_dev.json";
  size_t max_questions = SIZE_MAX;
  bool ask = false;
  std::string show;
};

bool ParseArgs(int argc, char** argv, Flags* f) {
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--data" && i + 1 < argc) {
      f->data = argv[++i];
    } else if (a == "--questions" && i + 1 < argc) {
      f->max_questions = std::stoul(argv[++i]);
    } else if (a == "--ask") {
      f->ask = true;
    } else if (a == "--show" && i + 1 < argc) {
      f->show = argv[++i];
    } else {
      return false;
    }
  }
  return true;
}

// Ingests and derives every conversation; the number of messages.
absl::StatusOr<size_t> IngestAll(engine::Memory* mem,
                                 const std::vector<datasets::Conversation>& convs) {
  size_t messages = 0;
  for (const auto& c : convs) {
    messages += c.messages.size();
    std::fprintf(stderr, "ingest and derive %s (%zu messages)\n", c.channel.c_str(),
                 c.messages.size());
    auto r = mem->Ingest({storage::kDefaultTenant, c.channel}, {}, c.messages);
    if (!r.ok()) return r.status();
    uint64_t newest = 0;
    auto st =
        mem->Flush({storage::kDefaultTenant, c.channel}, true, std::chrono::minutes(30), &newest);
    if (!st.ok()) return st.status();
  }
  mem->WaitForEmbeddings(std::chrono::minutes(10));
  return messages;
}

// The Writer's prompt tokens and the embedder's inputs, from the requests the
// fake model server saw.
void PrintDerivationCost(const testing::FakeModelServer& fake, engine::Memory* mem,
                         const std::vector<datasets::Conversation>& convs, size_t messages) {
  std::vector<double> writer_calls;
  double writer_total = 0;
  size_t embed_inputs = 0;
  std::map<std::string, int> embedded;  // input text -> times
  for (const auto& r : fake.requests()) {
    if (r.stage == "writer") {
      writer_calls.push_back(PromptTokens(r));
      writer_total += writer_calls.back();
    } else if (r.stage == "embed") {
      nlohmann::json body = nlohmann::json::parse(r.body, nullptr, false);
      for (const auto& x : body["input"]) {
        ++embed_inputs;
        ++embedded[x.get<std::string>()];
      }
    }
  }
  size_t records = 0, embedded_twice = 0;
  for (const auto& c : convs) {
    storage::RecordQuery q;
    q.include_superseded = true;
    q.limit = UINT32_MAX;
    std::string token;
    do {
      std::string next;
      auto rs = mem->ListRecords({storage::kDefaultTenant, c.channel}, q, token, &next);
      if (!rs.ok()) break;
      records += rs->size();
      for (const auto& r : *rs) embedded_twice += embedded[r.content] > 1;
      token = next;
    } while (!token.empty());
  }
  Summary w = Summarise(writer_calls);
  std::printf(
      "Writer: %zu calls, prompt tokens per message %.1f (mean over the channel), per "
      "call mean %.0f / p95 %.0f\n",
      writer_calls.size(), writer_total / static_cast<double>(std::max<size_t>(1, messages)),
      w.mean, w.p95);
  std::printf("Embed: %zu inputs; %zu records, %zu of them embedded more than once\n", embed_inputs,
              records, embedded_twice);
}

// Tokens per question by stage over the questions asked.
absl::Status PrintQueryCost(engine::Memory* mem, const std::vector<datasets::Conversation>& convs,
                            const Flags& f) {
  std::map<std::string, std::vector<double>> by_stage;
  std::vector<double> per_question;
  size_t asked = 0;
  for (const auto& c : convs) {
    for (const auto& q : c.questions) {
      if (asked >= f.max_questions) break;
      ++asked;
      engine::QueryParams p;
      p.channel = {storage::kDefaultTenant, c.channel};
      p.question = q.question;
      p.options = q.options;
      p.budgets.s1_top_k = 10;
      p.budgets.ask = f.ask;
      auto r = mem->Query(p, true);
      if (!r.ok()) return r.status();
      std::map<std::string, double> tokens;
      for (const auto& t : r->pipeline.trace) {
        if (t.model_calls > 0) tokens[t.stage] += static_cast<double>(t.tokens_in + t.tokens_out);
      }
      double total = 0;
      for (const auto& [stage, n] : tokens) {
        by_stage[stage].push_back(n);
        total += n;
      }
      per_question.push_back(total);
    }
  }
  std::printf("Questions: %zu, ASK %s; tokens per question (in + out):\n", asked,
              f.ask ? "on" : "off");
  std::printf("  %-12s %8s %8s %8s\n", "stage", "calls", "mean", "p95");
  for (auto& [stage, v] : by_stage) {
    size_t n = v.size();
    v.resize(asked, 0.0);  // questions where the stage made no call count 0
    Summary s = Summarise(v);
    std::printf("  %-12s %8zu %8.0f %8.0f\n", stage.c_str(), n, s.mean, s.p95);
  }
  Summary all = Summarise(per_question);
  std::printf("  %-12s %8s %8.0f %8.0f\n", "all", "", all.mean, all.p95);
  return absl::OkStatus();
}

// The last request the fake server saw for `stage`, message by message.
void ShowLastRequest(const testing::FakeModelServer& fake, const std::string& stage) {
  std::vector<testing::FakeRequest> reqs = fake.requests();
  for (auto r = reqs.rbegin(); r != reqs.rend(); ++r) {
    if (r->stage != stage) continue;
    nlohmann::json body = nlohmann::json::parse(r->body, nullptr, false);
    std::printf("\nlast %s request (%.0f prompt tokens):\n", stage.c_str(), PromptTokens(*r));
    if (body.is_object() && body.contains("messages")) {
      for (const auto& m : body["messages"]) {
        std::printf("--- %s\n%s\n", m.value("role", "").c_str(), m.value("content", "").c_str());
      }
    }
    return;
  }
}

int Run(int argc, char** argv) {
  Flags f;
  if (!ParseArgs(argc, argv, &f)) {
    std::fprintf(stderr,
                 "usage: model_tokens_bench [--data FILE] [--questions N] [--ask] "
                 "[--show STAGE]\n");
    return 2;
  }
  auto fail = [](const absl::Status& s) {
    std::fprintf(stderr, "error: %s\n", s.ToString().c_str());
    return 1;
  };
  auto convs = datasets::LoadFile(f.data, datasets::Format::kAuto, "");
  if (!convs.ok()) return fail(convs.status());
  testing::FakeModelServer fake;
  fake.SetDefault(testing::StandardReply);
  engine::MemoryOptions o;
  o.models.defaults.provider = "openai";
  o.models.defaults.base_url = fake.base_url();
  o.models.defaults.max_retries = 0;
  auto e = cli::EmbeddedEngine::Open(o);
  if (!e.ok()) return fail(e.status());
  engine::Memory* mem = (*e)->memory();
  auto t0 = std::chrono::steady_clock::now();
  absl::StatusOr<size_t> messages = IngestAll(mem, *convs);
  if (!messages.ok()) return fail(messages.status());
  std::printf("data: %s, %zu conversations, %zu messages, derived in %.1f s\n", f.data.c_str(),
              convs->size(), *messages,
              std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  PrintDerivationCost(fake, mem, *convs, *messages);
  if (absl::Status s = PrintQueryCost(mem, *convs, f); !s.ok()) return fail(s);
  if (!f.show.empty()) ShowLastRequest(fake, f.show);
  return 0;
}

}  // namespace
}  // namespace speakermem

int main(int argc, char** argv) { return speakermem::Run(argc, argv); }
