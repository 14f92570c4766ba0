// Scripted Writer replies for tests that drive System 2 through the fake
// model server.
#ifndef SPEAKERMEM_TESTS_INTEGRATION_WRITER_SCRIPT_H_
#define SPEAKERMEM_TESTS_INTEGRATION_WRITER_SCRIPT_H_

#include <string>

#include "nlohmann/json.hpp"
#include "tests/fake/fake_model_server.h"
#include "tests/fake/standard_reply.h"

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

}  // namespace speakermem::testing

#endif  // SPEAKERMEM_TESTS_INTEGRATION_WRITER_SCRIPT_H_
