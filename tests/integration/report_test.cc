// `speakermem eval report` end to end (the real CLI binary): JSON, Markdown
// and plots, with and without a judge (a real HTTP fake of the model API).
#include <atomic>
#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "nlohmann/json.hpp"
#include "tests/fake/fake_model_server.h"
#include "tests/integration/test_server.h"
#include "tests/test_util.h"

namespace speakermem {
namespace {

std::string WriteDataset(const testing::TempDir& dir) {
  const std::string path = dir.Sub("chat.jsonl");
  std::ofstream out(path);
  const char* lines[][2] = {{"Alice", "I booked the venue in Lisbon for the offsite"},
                            {"Bob", "The budget for the offsite is 4000 euros"},
                            {"Carol", "I will bring the projector on Friday"},
                            {"Alice", "The team dinner is at the harbour restaurant"}};
  for (int i = 0; i < 4; ++i) {
    out << nlohmann::json{{"channel", "team"},
                          {"message_id", "m" + std::to_string(i)},
                          {"speaker", lines[i][0]},
                          {"text", lines[i][1]},
                          {"timestamp", 1700000000000 + i * 60000},
                          {"session", "s1"}}
               .dump()
        << "\n";
  }
  out << R"({"channel": "team", "question": "Where is the venue?", "answer": "Lisbon", "evidence": ["m0"], "category": "place"})"
      << "\n";
  out << R"({"channel": "team", "question": "What is the offsite budget?", "answer": "4000 euros", "evidence": ["m1"], "category": "number"})"
      << "\n";
  out << R"({"channel": "team", "question": "Who brings the projector?", "answer": "Carol", "evidence": ["m2"], "category": "person"})"
      << "\n";
  return path;
}

nlohmann::json RunReport(const std::string& args, const std::string& out_dir) {
  std::string cmd = std::string(SPEAKERMEM_CLI_PATH) + " eval report --format jsonl --out " +
                    out_dir + " " + args + " > " + out_dir + ".log 2>&1";
  int rc = std::system(cmd.c_str());
  std::ifstream log(out_dir + ".log");
  std::stringstream ss;
  ss << log.rdbuf();
  INFO(ss.str());
  REQUIRE(rc == 0);
  std::ifstream in(out_dir + "/report.json");
  REQUIRE(in.good());
  return nlohmann::json::parse(in);
}

TEST_CASE("eval report writes JSON, Markdown and plots, accuracy only with a judge",
          "[eval][report]") {
  testing::TempDir dir;
  const std::string data = WriteDataset(dir);
  // Without a judge: recall for all four configurations, token-F1, no
  // accuracy.
  nlohmann::json plain = RunReport(data, dir.Sub("plain"));
  for (const char* config : {"bm25", "dense", "full", "full+s2"}) {
    INFO(config);
    REQUIRE(plain["configs"].contains(config));
    CHECK(plain["configs"][config]["questions"] == 3);
    CHECK(plain["configs"][config]["recall"].contains("10"));
  }
  CHECK(plain["configs"]["bm25"]["recall"]["5"].get<double>() == Approx(100.0));
  CHECK(plain["qa"]["questions"] == 3);
  CHECK(plain["qa"]["accuracy"].is_null());
  CHECK(plain["latency_ms"]["retrieves"] == 3);           // full config: one Retrieve per question
  CHECK_FALSE(plain["answers"][0].contains("question"));  // texts only with --texts
  CHECK(std::filesystem::exists(dir.Sub("plain/report.md")));
  for (const char* png : {"recall_at_k.png", "categories.png", "latency.png"}) {
    INFO(png);
    CHECK(std::filesystem::exists(dir.Sub(std::string("plain/") + png)));
  }
  // With a judge that accepts every answer containing the gold answer.
  testing::FakeModelServer fake;
  fake.SetDefault([](const testing::FakeRequest& req) {
    nlohmann::json body = nlohmann::json::parse(req.body, nullptr, false);
    std::string user = body["messages"].back()["content"].get<std::string>();
    auto field = [&](const std::string& name) {
      size_t at = user.find(name);
      size_t end = user.find('\n', at);
      return user.substr(at + name.size(),
                         end == std::string::npos ? std::string::npos : end - at - name.size());
    };
    std::string gold = field("Reference answer: "), answer = field("Answer to grade: ");
    bool ok = answer.find(gold) != std::string::npos;
    return testing::FakeReply{200, testing::FakeModelServer::ChatBody(
                                       nlohmann::json{{"verdict", ok ? "yes" : "no"}}.dump())};
  });
  setenv("SM_REPORT_TEST_KEY", "k", 1);
  nlohmann::json judged =
      RunReport("--judge-url " + fake.base_url() +
                    " --judge-model fake --judge-key-env SM_REPORT_TEST_KEY --texts " + data,
                dir.Sub("judged"));
  CHECK(judged["qa"]["judged"] == 3);
  CHECK(judged["qa"]["accuracy"].is_number());
  double expected = 0;
  for (const auto& a : judged["answers"]) {
    expected +=
        a["answer"].get<std::string>().find(a["gold"].get<std::string>()) != std::string::npos;
  }
  CHECK(judged["qa"]["accuracy"].get<double>() == Approx(100.0 * expected / 3));
  CHECK(expected >= 2);  // the offline answerer quotes the right message
}

TEST_CASE("eval report --config sends the stages to the configured endpoint and counts tokens",
          "[eval][report]") {
  testing::TempDir dir;
  const std::string data = WriteDataset(dir);
  testing::FakeModelServer fake;
  fake.SetDefault([](const testing::FakeRequest& req) {
    if (req.stage == "answer") {
      return testing::FakeReply{200, testing::FakeModelServer::ChatBody(
                                         R"({"answer": "Lisbon", "abstain": false, "cited": []})")};
    }
    // Project: everyone, the question as the issue.
    return testing::FakeReply{200, testing::FakeModelServer::ChatBody(
                                       R"({"rows": ["ALL"], "issue": "venue", "tense": "head"})")};
  });
  const std::string cfg = dir.Sub("speakermemd.conf");
  std::ofstream(cfg) << "[model.answer]\nprovider = openai\nbase_url = " << fake.base_url()
                     << "\nmodel = fake-answerer\n[model.project]\nprovider = openai\n"
                     << "base_url = " << fake.base_url() << "\nmodel = fake-projector\n";
  nlohmann::json r = RunReport("--config " + cfg + " " + data, dir.Sub("configured"));
  CHECK(fake.count("answer") == 3);
  CHECK(fake.count("project") >= 3);
  CHECK(r["stages"]["answer"].get<std::string>().find("openai fake-answerer") == 0);
  CHECK(r["stages"]["project"].get<std::string>().find("openai fake-projector") == 0);
  CHECK(r["stages"]["select"] == "offline");
  REQUIRE(r["tokens_per_question"].contains("answer"));
  CHECK(r["tokens_per_question"]["answer"]["questions"] == 3);
  CHECK(r["tokens_per_question"]["answer"]["mean"].get<double>() > 0);
  CHECK(r["tokens_per_question"]["all"]["p95"].get<double>() >=
        r["tokens_per_question"]["answer"]["mean"].get<double>());
  std::ifstream md(dir.Sub("configured/report.md"));
  std::stringstream ss;
  ss << md.rdbuf();
  CHECK(ss.str().find("## Model tokens per question") != std::string::npos);
  CHECK(ss.str().find("| answer | openai fake-answerer") != std::string::npos);
}

TEST_CASE("eval report --addr evaluates a running server", "[eval][report]") {
  testing::TempDir dir;
  const std::string data = WriteDataset(dir);
  testing::TestServer ts;
  nlohmann::json r = RunReport("--addr " + ts.addr() + " " + data, dir.Sub("remote"));
  CHECK(r["stages"]["answer"] == "the server's configuration");
  CHECK(r["qa"]["questions"] == 3);
  CHECK(r["configs"]["bm25"]["recall"]["5"].get<double>() == Approx(100.0));
  CHECK(r["configs"]["full"]["questions"] == 3);
  // The server holds the conversation now.
  auto msgs = testing::AllMessages(ts.client(), "team");
  CHECK(msgs.size() == 4);
}

TEST_CASE("a LoCoMo adversarial question is answered right by abstaining", "[eval][report]") {
  testing::TempDir dir;
  const std::string path = dir.Sub("locomo.json");
  nlohmann::json conv = {
      {"sample_id", "conv-x"},
      {"conversation",
       {{"speaker_a", "Ann"},
        {"speaker_b", "Ben"},
        {"session_1_date_time", "1:56 pm on 8 May, 2023"},
        {"session_1",
         {{{"speaker", "Ann"}, {"dia_id", "D1:1"}, {"text", "I adopted a puppy named Rex."}},
          {{"speaker", "Ben"}, {"dia_id", "D1:2"}, {"text", "Lovely, I bought a new bike."}}}}}},
      {"qa",
       {{{"question", "What is the name of Ann's puppy?"},
         {"answer", "Rex"},
         {"evidence", {"D1:1"}},
         {"category", 1}},
        {{"question", "Which zebra did Ben ride at the circus in Lyon?"},
         {"adversarial_answer", "the striped one"},
         {"evidence", {"D1:2"}},
         {"category", 5}}}}};
  std::ofstream(path) << nlohmann::json::array({conv}).dump();
  std::string cmd = std::string(SPEAKERMEM_CLI_PATH) +
                    " eval report --format locomo --texts --out " + dir.Sub("out") + " " + path +
                    " > " + dir.Sub("log") + " 2>&1";
  REQUIRE(std::system(cmd.c_str()) == 0);
  nlohmann::json r = nlohmann::json::parse(std::ifstream(dir.Sub("out/report.json")));
  bool seen = false;
  for (const auto& a : r["answers"]) {
    if (a["category"] != "5") continue;
    seen = true;
    CHECK(a["gold"].get<std::string>().find("abstention expected") != std::string::npos);
    // The offline answerer finds nothing on zebras: it abstains, and that
    // scores as right.
    CHECK(a["token_f1"].get<double>() == Approx(1.0));
  }
  CHECK(seen);
}

}  // namespace
TEST_CASE("eval report takes a local judge without a key and counts verdicts it cannot read",
          "[eval][report]") {
  testing::TempDir dir;
  const std::string data = WriteDataset(dir);
  testing::FakeModelServer fake;
  std::atomic<int> calls{0};
  fake.SetDefault([&](const testing::FakeRequest& req) {
    // The first verdict is prose with no verdict in it; the rest say yes.
    if (calls++ == 0) {
      return testing::FakeReply{200, testing::FakeModelServer::ChatBody("Let me think about it.")};
    }
    CHECK(req.headers.count("authorization") == 0);  // no key sent to a local judge
    return testing::FakeReply{
        200, testing::FakeModelServer::ChatBody(nlohmann::json{{"verdict", "yes"}}.dump())};
  });
  unsetenv("OPENAI_API_KEY");
  nlohmann::json r = RunReport("--judge-url " + fake.base_url() + " --judge-model fake " + data,
                               dir.Sub("lenient"));
  CHECK(r["qa"]["judge_failures"] == 1);
  CHECK(r["qa"]["judged"] == 2);
  CHECK(r["qa"]["accuracy"].get<double>() == Approx(100.0));
  CHECK_FALSE(r["qa"]["judge_failure_example"].get<std::string>().empty());
}

}  // namespace speakermem
