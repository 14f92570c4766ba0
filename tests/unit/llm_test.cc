#include <catch2/catch.hpp>
#include <fstream>

#include "llm/config.h"
#include "llm/json_extract.h"
#include "llm/model_client.h"
#include "server/config.h"
#include "tests/test_util.h"

namespace speakermem::llm {
namespace {

std::string Extract(const std::string& text) {
  auto r = ExtractJson(text);
  REQUIRE_OK(r);
  return *r;
}

TEST_CASE("ExtractJson tolerates fences, prose and trailing commas", "[llm][json]") {
  CHECK(Extract("{\"a\": 1}") == "{\"a\":1}");
  CHECK(Extract("```json\n{\"a\": [1, 2,],}\n```") == "{\"a\":[1,2]}");
  CHECK(Extract("Sure! Here it is:\n{\"rows\": [\"ALL\"]}\nHope that helps.") ==
        "{\"rows\":[\"ALL\"]}");
  CHECK(Extract("the list: [1, 2, 3] done") == "[1,2,3]");
  CHECK(Extract("{\"s\": \"a } inside, and a ] too,\"}") == "{\"s\":\"a } inside, and a ] too,\"}");
  CHECK(Extract("{bad} then {\"ok\": true}") == "{\"ok\":true}");
}

TEST_CASE("ExtractJson rejects text without JSON", "[llm][json]") {
  REQUIRE_CODE(ExtractJson("no json here"), absl::StatusCode::kInvalidArgument);
  REQUIRE_CODE(ExtractJson("{\"unterminated\": "), absl::StatusCode::kInvalidArgument);
  REQUIRE_CODE(ExtractJson(""), absl::StatusCode::kInvalidArgument);
}

TEST_CASE("StripTrailingCommas leaves strings alone", "[llm][json]") {
  CHECK(StripTrailingCommas("[1, 2, ]") == "[1, 2 ]");
  CHECK(StripTrailingCommas("{\"a\": \",}\",}") == "{\"a\": \",}\"}");
}

TEST_CASE("stages inherit the default endpoint and override per field", "[llm][config]") {
  ModelsConfig c;
  REQUIRE_OK(SetEndpointField(&c.defaults, "provider", "openai"));
  REQUIRE_OK(SetEndpointField(&c.defaults, "base_url", "http://localhost:8000/v1/"));
  REQUIRE_OK(SetEndpointField(&c.defaults, "model", "small"));
  REQUIRE_OK(c.SetOverride("writer", "model", "big"));
  REQUIRE_OK(c.SetOverride("embed", "provider", "offline"));
  auto writer = c.Resolve("writer");
  REQUIRE_OK(writer);
  CHECK(writer->model == "big");
  CHECK(writer->base_url == "http://localhost:8000/v1");  // trailing slash dropped
  CHECK(c.Resolve("answer")->model == "small");
  CHECK(c.Resolve("embed")->provider == "offline");
  REQUIRE_CODE(c.Resolve("nonsense"), absl::StatusCode::kInvalidArgument);
  REQUIRE_CODE(c.SetOverride("writer", "colour", "blue"), absl::StatusCode::kInvalidArgument);
  REQUIRE_CODE(c.SetOverride("writer", "timeout_ms", "-1"), absl::StatusCode::kInvalidArgument);
  REQUIRE_CODE(SetEndpointField(&c.defaults, "base_url", "ftp://x"),
               absl::StatusCode::kInvalidArgument);
}

TEST_CASE("model stages are configured by file, environment and flags", "[llm][config]") {
  speakermem::testing::TempDir dir;
  std::string path = dir.Sub("m.conf");
  std::ofstream(path) << "[model]\nprovider = openai\nbase_url = http://127.0.0.1:1/v1\n"
                         "api_key_env = MY_KEY\n[model.writer]\nmodel = writer-model\n";
  server::ServerConfig c;
  std::vector<std::string> argv_s = {"speakermemd", "--config", path,
                                     "--model.answer.max_tokens=77"};
  std::vector<char*> argv;
  for (auto& a : argv_s) argv.push_back(a.data());
  std::string help;
  REQUIRE_OK(server::LoadConfig(
      static_cast<int>(argv.size()), argv.data(),
      {"SPEAKERMEM_MODEL_PROJECT_TEMPERATURE=0.5", "SPEAKERMEM_MODEL_TIMEOUT_MS=1234"}, &c, &help));
  CHECK(c.models.Resolve("writer")->model == "writer-model");
  CHECK(c.models.Resolve("writer")->api_key_env == "MY_KEY");
  CHECK(c.models.Resolve("project")->temperature == 0.5);
  CHECK(c.models.Resolve("answer")->max_tokens == 77);
  CHECK(c.models.Resolve("select")->timeout_ms == 1234);
}

TEST_CASE("EstimateTokens is about four characters a token", "[llm]") {
  CHECK(EstimateTokens("") == 0);
  CHECK(EstimateTokens("abc") == 1);
  CHECK(EstimateTokens(std::string(400, 'x')) == 100);
}

}  // namespace
}  // namespace speakermem::llm
