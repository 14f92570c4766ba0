// Configuration of model endpoints, one per stage with inheritance from a
// default entry. Plain data: no curl, no JSON.
#ifndef SPEAKERMEM_LLM_CONFIG_H_
#define SPEAKERMEM_LLM_CONFIG_H_

#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace speakermem::llm {

// The model stages. Each is configured separately (DESIGN 4).
inline constexpr const char* kStages[] = {"writer", "project", "select", "sufficiency",
                                          "answer", "embed",   "judge"};

inline constexpr int kWriterMaxTokens = 4096;
inline constexpr int kStageMaxTokens = 1024;

struct EndpointConfig {
  // "openai" (any OpenAI-compatible HTTP API) or "offline" (deterministic
  // built-ins; the default, needs no model). The judge has no offline form.
  std::string provider = "offline";
  // Base URL including the version path; /chat/completions and /embeddings
  // are appended. Default: OpenAI's.
  std::string base_url = "https://api.openai.com/v1";
  std::string model;
  // Name of the environment variable holding the API key (never the key).
  // Empty: no Authorization header (local servers).
  std::string api_key_env;
  double temperature = 0.0;
  // Max output tokens per chat call; 0: the stage's default
  // (kWriterMaxTokens for the Writer, whose reply lists a Window25
  // segment's actions; kStageMaxTokens for the others).
  int max_tokens = 0;
  // Deadline of one call including all retries and waits, in ms.
  int timeout_ms = 60000;
  // Limit of one HTTP attempt; a slower attempt is abandoned and retried
  // while the call's deadline allows. 0: an attempt may use all that is
  // left of timeout_ms.
  int attempt_timeout_ms = 0;
  // Requests in flight to this endpoint at once; more wait (within the
  // deadline).
  int max_concurrency = 8;
  // Retries after the first attempt on connect errors, timeouts, 429, 5xx.
  int max_retries = 4;
  // Exponential backoff with full jitter between these bounds; a
  // Retry-After header overrides it.
  int backoff_initial_ms = 250;
  int backoff_max_ms = 8000;
  // Ask for JSON output (response_format json_object); turned off for the
  // endpoint by itself when the endpoint rejects it.
  bool json_mode = true;
  // Inputs per embeddings request.
  int embed_batch = 64;
  // Dimension of the offline embedding.
  int dimension = 256;
};

// Sets one field by name ("base_url", "timeout_ms", ...). INVALID_ARGUMENT
// for an unknown name or a bad value.
absl::Status SetEndpointField(EndpointConfig* config, const std::string& key,
                              const std::string& value);
// The value of a field as text, for help output.
std::string GetEndpointField(const EndpointConfig& config, const std::string& key);
// Field names with a one-line description each, in documentation order.
const std::vector<std::pair<std::string, std::string>>& EndpointFields();

// The default entry plus per-stage overrides of any of its fields.
struct ModelsConfig {
  EndpointConfig defaults;
  // stage -> field -> raw value, applied over `defaults`.
  std::map<std::string, std::map<std::string, std::string>> overrides;

  // INVALID_ARGUMENT for an unknown stage or field or a bad value.
  absl::Status SetOverride(const std::string& stage, const std::string& key,
                           const std::string& value);
  // The effective configuration of `stage`.
  absl::StatusOr<EndpointConfig> Resolve(const std::string& stage) const;
};

bool IsStage(const std::string& name);

}  // namespace speakermem::llm

#endif  // SPEAKERMEM_LLM_CONFIG_H_
