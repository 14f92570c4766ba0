#include "llm/config.h"

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace speakermem::llm {
namespace {

absl::Status Bad(const std::string& key, const std::string& value, const char* what) {
  return absl::InvalidArgumentError(absl::StrCat("model ", key, ": '", value, "' is not ", what));
}

absl::Status SetInt(const std::string& key, const std::string& v, int min, int max, int* out) {
  int n = 0;
  if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(v), &n) || n < min || n > max) {
    return Bad(key, v, "an integer in range");
  }
  *out = n;
  return absl::OkStatus();
}

}  // namespace

const std::vector<std::pair<std::string, std::string>>& EndpointFields() {
  static const auto* fields = new std::vector<std::pair<std::string, std::string>>{
      {"provider", "openai (any OpenAI-compatible API) or offline (built-in, no model)."},
      {"base_url", "API base URL with version path; /chat/completions, /embeddings appended."},
      {"model", "Model name sent in requests."},
      {"api_key_env",
       "Name of the environment variable that holds the API key (the key "
       "itself never appears in config or logs). Empty: no key."},
      {"temperature", "Sampling temperature of chat calls."},
      {"max_tokens",
       "Max output tokens per chat call; 0: the stage's default (4096 for the "
       "Writer, 1024 for the others). The Writer keeps a cut reply's complete "
       "actions and derives the rest of the segment in halves; a query stage "
       "falls back."},
      {"timeout_ms", "Deadline of one call including retries and backoff."},
      {"attempt_timeout_ms",
       "Limit of one HTTP attempt, retried within timeout_ms when hit; "
       "0: an attempt may use all the time left."},
      {"max_concurrency", "Requests in flight to the endpoint at once."},
      {"max_retries", "Retries on connect errors, timeouts, 429 and 5xx (never on 400/401/403)."},
      {"backoff_initial_ms", "First retry backoff (exponential, full jitter); Retry-After wins."},
      {"backoff_max_ms", "Largest retry backoff."},
      {"json_mode",
       "Request JSON output (response_format); dropped automatically when the "
       "endpoint rejects it."},
      {"embed_batch", "Inputs per embeddings request."},
      {"dimension", "Dimension of the offline embedding."},
  };
  return *fields;
}

absl::Status SetEndpointField(EndpointConfig* c, const std::string& key, const std::string& value) {
  if (key == "provider") {
    if (value != "openai" && value != "offline") return Bad(key, value, "openai or offline");
    c->provider = value;
  } else if (key == "base_url") {
    std::string v = value;
    while (!v.empty() && v.back() == '/') v.pop_back();
    if (v.rfind("http://", 0) != 0 && v.rfind("https://", 0) != 0) {
      return Bad(key, value, "an http:// or https:// URL");
    }
    c->base_url = v;
  } else if (key == "model") {
    c->model = value;
  } else if (key == "api_key_env") {
    c->api_key_env = value;
  } else if (key == "temperature") {
    double t = 0;
    if (!absl::SimpleAtod(value, &t) || t < 0 || t > 2) return Bad(key, value, "in [0, 2]");
    c->temperature = t;
  } else if (key == "max_tokens") {
    return SetInt(key, value, 0, 1 << 20, &c->max_tokens);
  } else if (key == "timeout_ms") {
    return SetInt(key, value, 1, 3600000, &c->timeout_ms);
  } else if (key == "attempt_timeout_ms") {
    return SetInt(key, value, 0, 3600000, &c->attempt_timeout_ms);
  } else if (key == "max_concurrency") {
    return SetInt(key, value, 1, 4096, &c->max_concurrency);
  } else if (key == "max_retries") {
    return SetInt(key, value, 0, 100, &c->max_retries);
  } else if (key == "backoff_initial_ms") {
    return SetInt(key, value, 0, 600000, &c->backoff_initial_ms);
  } else if (key == "backoff_max_ms") {
    return SetInt(key, value, 0, 600000, &c->backoff_max_ms);
  } else if (key == "json_mode") {
    bool b = false;
    if (!absl::SimpleAtob(value, &b)) return Bad(key, value, "a boolean");
    c->json_mode = b;
  } else if (key == "embed_batch") {
    return SetInt(key, value, 1, 4096, &c->embed_batch);
  } else if (key == "dimension") {
    return SetInt(key, value, 8, 8192, &c->dimension);
  } else {
    return absl::InvalidArgumentError(absl::StrCat("unknown model field '", key, "'"));
  }
  return absl::OkStatus();
}

std::string GetEndpointField(const EndpointConfig& c, const std::string& key) {
  if (key == "provider") return c.provider;
  if (key == "base_url") return c.base_url;
  if (key == "model") return c.model;
  if (key == "api_key_env") return c.api_key_env;
  if (key == "temperature") return absl::StrCat(c.temperature);
  if (key == "max_tokens") return absl::StrCat(c.max_tokens);
  if (key == "timeout_ms") return absl::StrCat(c.timeout_ms);
  if (key == "attempt_timeout_ms") return absl::StrCat(c.attempt_timeout_ms);
  if (key == "max_concurrency") return absl::StrCat(c.max_concurrency);
  if (key == "max_retries") return absl::StrCat(c.max_retries);
  if (key == "backoff_initial_ms") return absl::StrCat(c.backoff_initial_ms);
  if (key == "backoff_max_ms") return absl::StrCat(c.backoff_max_ms);
  if (key == "json_mode") return c.json_mode ? "true" : "false";
  if (key == "embed_batch") return absl::StrCat(c.embed_batch);
  if (key == "dimension") return absl::StrCat(c.dimension);
  return "";
}

bool IsStage(const std::string& name) {
  for (const char* s : kStages) {
    if (name == s) return true;
  }
  return false;
}

absl::Status ModelsConfig::SetOverride(const std::string& stage, const std::string& key,
                                       const std::string& value) {
  if (!IsStage(stage)) {
    return absl::InvalidArgumentError(absl::StrCat("unknown model stage '", stage, "'"));
  }
  EndpointConfig probe;
  if (absl::Status s = SetEndpointField(&probe, key, value); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("stage ", stage, ": ", s.message()));
  }
  overrides[stage][key] = value;
  return absl::OkStatus();
}

absl::StatusOr<EndpointConfig> ModelsConfig::Resolve(const std::string& stage) const {
  if (!IsStage(stage)) {
    return absl::InvalidArgumentError(absl::StrCat("unknown model stage '", stage, "'"));
  }
  EndpointConfig c = defaults;
  auto it = overrides.find(stage);
  if (it != overrides.end()) {
    for (const auto& [k, v] : it->second) {
      if (absl::Status s = SetEndpointField(&c, k, v); !s.ok()) return s;
    }
  }
  if (c.max_tokens == 0) c.max_tokens = stage == "writer" ? kWriterMaxTokens : kStageMaxTokens;
  return c;
}

}  // namespace speakermem::llm
