// Scripted Writer replies for tests that drive System 2 through the fake
// model server.
#ifndef SPEAKERMEM_TESTS_INTEGRATION_WRITER_SCRIPT_H_
#define SPEAKERMEM_TESTS_INTEGRATION_WRITER_SCRIPT_H_

#include <string>

#include "nlohmann/json.hpp"
#include "tests/fake/fake_model_server.h"
#include "tests/fake/standard_reply.h"
#include "tests/integration/test_server.h"

namespace speakermem::testing {

// A chat completion whose content is {"actions": actions}.
inline std::string Actions(const nlohmann::json& actions) {
  return FakeModelServer::ChatBody(nlohmann::json{{"actions", actions}}.dump());
}

// One ADD action (utype stance).
inline nlohmann::json Add(const std::string& owner, const std::string& source,
                          const std::string& layer, const std::string& content) {
  return {{"action", "ADD"}, {"owner", owner},    {"source", source},
          {"layer", layer},  {"utype", "stance"}, {"content", content}};
}

// A server whose Writer is the fake model server: no client retries, one
// retry of a segment 1 ms later, segments of `window`, no idle flush.
inline TestServer::Configure WriterOn(const FakeModelServer& fake, int window = 25) {
  std::string url = fake.base_url();
  return [url, window](server::ServerConfig* c) {
    REQUIRE_OK(c->models.SetOverride("writer", "provider", "openai"));
    REQUIRE_OK(c->models.SetOverride("writer", "base_url", url));
    REQUIRE_OK(c->models.SetOverride("writer", "max_retries", "0"));
    c->memory.writer.window = static_cast<size_t>(window);
    c->memory.writer.retry_backoff_ms = 1;
    c->memory.writer.max_attempts = 2;
    c->memory.writer.idle_flush_ms = 0;
  };
}

}  // namespace speakermem::testing

#endif  // SPEAKERMEM_TESTS_INTEGRATION_WRITER_SCRIPT_H_
