// Scripted Writer replies for tests that drive System 2 through the fake
// model server.
#ifndef SPEAKERMEM_TESTS_INTEGRATION_WRITER_SCRIPT_H_
#define SPEAKERMEM_TESTS_INTEGRATION_WRITER_SCRIPT_H_

#include <sstream>
#include <string>
#include <vector>

#include "nlohmann/json.hpp"
#include "tests/fake/fake_model_server.h"

namespace speakermem::testing {

// A chat completion whose content is {"actions": actions}.
inline std::string Actions(const nlohmann::json& actions) {
  return FakeModelServer::ChatBody(nlohmann::json{{"actions", actions}}.dump());
}

// One ADD action (utype stance).
inline nlohmann::json Add(const std::string& owner, const std::string& source,
                          const std::string& layer, const std::string& content) {
  return {{"action", "ADD"}, {"owner", owner}, {"source", source}, {"layer", layer},
          {"utype", "stance"}, {"content", content}};
}

// One message line of a Writer prompt ("YYYY-MM-DD HH:MM Name: text").
struct PromptMessage {
  std::string speaker;
  std::string text;
};

// The new messages a Writer request shows, in order.
inline std::vector<PromptMessage> WriterPromptMessages(const FakeRequest& req) {
  nlohmann::json body = nlohmann::json::parse(req.body, nullptr, false);
  std::string user = body["messages"][1]["content"].get<std::string>();
  size_t pos = user.find("New messages:\n");
  std::istringstream lines(user.substr(pos == std::string::npos ? user.size() : pos + 14));
  std::vector<PromptMessage> out;
  std::string line;
  while (std::getline(lines, line)) {
    size_t name = line.find(' ', line.find(' ') + 1);  // after date and time
    size_t colon = line.find(": ", name);
    if (name == std::string::npos || colon == std::string::npos) continue;
    out.push_back({line.substr(name + 1, colon - name - 1), line.substr(colon + 2)});
  }
  return out;
}

}  // namespace speakermem::testing

#endif  // SPEAKERMEM_TESTS_INTEGRATION_WRITER_SCRIPT_H_
