// The fake OpenAI-compatible server as a program, for measuring the
// model-backed query path without a model: well-formed replies per stage,
// and a `usage` sized from the request (about 4 characters a token), so
// token figures follow prompt size.
//
//   build/tests/fake/fake_model_server [--port-file FILE]
//
// Prints its base URL on stdout and serves until SIGTERM or SIGINT.
#include <csignal>
#include <cstdio>
#include <fstream>
#include <string>
#include <thread>

#include "nlohmann/json.hpp"
#include "tests/fake/fake_model_server.h"

namespace {

volatile std::sig_atomic_t stop = 0;

void OnSignal(int) { stop = 1; }

speakermem::testing::FakeReply Reply(const speakermem::testing::FakeRequest& req) {
  using nlohmann::json;
  json body = json::parse(req.body, nullptr, false);
  size_t chars = 0;
  if (body.is_object() && body.contains("messages")) {
    for (const auto& m : body["messages"]) {
      if (m.contains("content") && m["content"].is_string()) chars += m["content"].get<std::string>().size();
    }
  }
  if (req.path.find("embeddings") != std::string::npos) {
    return {200, speakermem::testing::FakeModelServer::EmbeddingsBody({{1, 0, 0, 0}})};
  }
  std::string content = "{}";
  if (req.stage == "project") {
    content = R"({"rows": ["ALL"], "issue": "the question's subject", "tense": "head"})";
  } else if (req.stage == "select") {
    content = R"({"ranking": [0, 1, 2, 3, 4], "anchors": [0]})";
  } else if (req.stage == "sufficiency") {
    content = R"({"sufficient": true})";
  } else if (req.stage == "answer") {
    content = R"({"answer": "I don't know: the evidence does not answer that.", "abstain": true, "cited": []})";
  }
  json reply = {{"object", "chat.completion"},
                {"choices", {{{"index", 0},
                              {"message", {{"role", "assistant"}, {"content", content}}},
                              {"finish_reason", "stop"}}}},
                {"usage", {{"prompt_tokens", (chars + 3) / 4},
                           {"completion_tokens", (content.size() + 3) / 4},
                           {"total_tokens", (chars + 3) / 4 + (content.size() + 3) / 4}}}};
  return {200, reply.dump()};
}

}  // namespace

int main(int argc, char** argv) {
  std::string port_file;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::string(argv[i]) == "--port-file") port_file = argv[i + 1];
  }
  std::signal(SIGTERM, OnSignal);
  std::signal(SIGINT, OnSignal);
  speakermem::testing::FakeModelServer fake;
  fake.SetDefault(Reply);
  std::printf("%s\n", fake.base_url().c_str());
  std::fflush(stdout);
  if (!port_file.empty()) std::ofstream(port_file) << fake.port() << "\n";
  while (!stop) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  return 0;
}
