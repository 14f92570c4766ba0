#include "tests/fake/standard_reply.h"

#include <sstream>

#include "nlohmann/json.hpp"

namespace speakermem::testing {

using json = nlohmann::json;

std::vector<PromptMessage> WriterPromptMessages(const FakeRequest& req) {
  json body = json::parse(req.body, nullptr, false);
  if (!body.is_object() || !body.contains("messages") || body["messages"].size() < 2) return {};
  std::string user = body["messages"][1].value("content", "");
  size_t pos = user.find("New messages:\n");
  std::istringstream lines(user.substr(pos == std::string::npos ? user.size() : pos + 14));
  std::vector<PromptMessage> out;
  std::string line;
  while (std::getline(lines, line)) {
    size_t name = line.find(' ', line.find(' ') + 1);  // after date and time
    size_t colon = name == std::string::npos ? name : line.find(": ", name);
    if (colon == std::string::npos) continue;
    out.push_back({line.substr(name + 1, colon - name - 1), line.substr(colon + 2)});
  }
  return out;
}

std::string StandardContent(const FakeRequest& req) {
  if (req.stage == "project") {
    return R"({"rows": ["ALL"], "issue": "the question's subject", "tense": "head", "source": "", "owner": ""})";
  }
  if (req.stage == "select") return R"({"ranking": [0, 1, 2, 3, 4], "anchors": [0]})";
  if (req.stage == "sufficiency") return R"({"sufficient": true, "search_term": ""})";
  if (req.stage == "answer") {
    return R"({"answer": "I don't know: the evidence does not answer that.", "abstain": true, "cited": []})";
  }
  if (req.stage == "writer") {
    json actions = json::array();
    for (const auto& m : WriterPromptMessages(req)) {
      std::istringstream words(m.text);
      std::string w;
      int n = 0;
      while (words >> w) ++n;
      if (n < 8) continue;
      actions.push_back({{"action", "ADD"},
                         {"owner", m.speaker},
                         {"source", m.speaker},
                         {"layer", "per_speaker_core"},
                         {"utype", "fact"},
                         {"content", m.speaker + " said: " + m.text.substr(0, 120)},
                         {"entry_id", ""}});
    }
    if (actions.empty()) actions.push_back({{"action", "NOOP"}});
    return json{{"actions", actions}}.dump();
  }
  return "{}";
}

FakeReply StandardReply(const FakeRequest& req) {
  json body = json::parse(req.body, nullptr, false);
  if (req.path.find("embeddings") != std::string::npos) {
    size_t n = body.is_object() && body.contains("input") ? body["input"].size() : 1;
    std::vector<std::vector<float>> vectors;
    for (size_t i = 0; i < n; ++i) {
      // Deterministic, input-dependent vectors.
      std::string s = body["input"][i].get<std::string>();
      std::vector<float> v(8, 0.0f);
      for (size_t k = 0; k < s.size(); ++k) v[k % 8] += static_cast<unsigned char>(s[k]) / 255.0f;
      v[0] += 1.0f;
      vectors.push_back(std::move(v));
    }
    return {200, FakeModelServer::EmbeddingsBody(vectors)};
  }
  size_t chars = 0;
  if (body.is_object() && body.contains("messages")) {
    for (const auto& m : body["messages"]) {
      if (m.contains("content") && m["content"].is_string()) {
        chars += m["content"].get<std::string>().size();
      }
    }
  }
  std::string content = StandardContent(req);
  json reply = {{"object", "chat.completion"},
                {"choices",
                 {{{"index", 0},
                   {"message", {{"role", "assistant"}, {"content", content}}},
                   {"finish_reason", "stop"}}}},
                {"usage",
                 {{"prompt_tokens", (chars + 3) / 4},
                  {"completion_tokens", (content.size() + 3) / 4},
                  {"total_tokens", (chars + 3) / 4 + (content.size() + 3) / 4}}}};
  return {200, reply.dump()};
}

}  // namespace speakermem::testing
