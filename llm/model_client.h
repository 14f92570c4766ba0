// The shared model client: chat completions and embeddings over an
// OpenAI-compatible HTTP API, with retries, a per-endpoint concurrency limit,
// deadlines and token accounting. It knows HTTP, JSON and tokens, not what
// the stages mean. llm/ is the only code that includes curl.
#ifndef SPEAKERMEM_LLM_MODEL_CLIENT_H_
#define SPEAKERMEM_LLM_MODEL_CLIENT_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "llm/config.h"

namespace speakermem::llm {

class LlmMetrics;

struct Usage {
  uint64_t tokens_in = 0;
  uint64_t tokens_out = 0;
  // True when the endpoint sent no `usage` and the counts are estimates
  // (about 4 characters per token).
  bool estimated = false;

  void Add(const Usage& o) {
    tokens_in += o.tokens_in;
    tokens_out += o.tokens_out;
    estimated = estimated || o.estimated;
  }
};

// What one stage call cost and how it went, for the query trace, the Writer
// report and metrics.
struct StageCall {
  uint32_t model_calls = 0;
  Usage usage;
  bool fell_back = false;  // the model failed; the stage's safe default was used
  std::string note;
  // What the stage had to coerce, salvage or drop to read the reply
  // ("string_boolean", "top_level_array", "dropped_ranking_item", ...), one
  // entry per occurrence; counted in speakermem_model_coercions_total.
  std::vector<std::string> coercions;
  // The caller's deadline: a model call made for this stage ends by then
  // (DEADLINE_EXCEEDED) even when its endpoint's timeout is longer.
  std::chrono::system_clock::time_point deadline = std::chrono::system_clock::time_point::max();
};

struct ChatRequest {
  std::string stage;   // for metrics, errors and the X-SpeakerMem-Stage header
  std::string system;  // system message
  std::string user;    // user message
  bool json = true;    // ask for JSON output when the endpoint supports it
  // The reply's JSON Schema (JSON text), sent as a strict `json_schema`
  // response_format; empty: `json_object`. An endpoint that refuses one
  // (400 or 422) is asked again one step down (json_schema, json_object,
  // none), and the step is remembered for the endpoint.
  std::string schema;
  // The caller's deadline; the call ends at the earlier of it and the
  // endpoint's timeout_ms.
  std::chrono::system_clock::time_point deadline = std::chrono::system_clock::time_point::max();
  // Streaming (may be empty): the reply is asked for as server-sent events
  // (`stream: true`) and each piece of its content is passed here as it
  // arrives; the whole reply is still returned. Returning false abandons
  // the call (CANCELLED). An endpoint that refuses to stream (400 or 422
  // naming it) is asked again without, and its whole content is then one
  // piece. A call that has passed content on is never retried.
  std::function<bool(absl::string_view)> on_text = nullptr;
};

struct ChatResponse {
  std::string text;           // the model's message content, as sent
  std::string finish_reason;  // "stop", "length", ...
  bool truncated = false;     // finish_reason == "length"
  std::string format;         // response_format sent: json_schema, json_object or none
  Usage usage;
  int attempts = 0;  // HTTP attempts made (1 = no retry)
};

struct EmbedResponse {
  std::vector<std::vector<float>> vectors;  // one per input, in input order
  Usage usage;
  int attempts = 0;
};

// Safe for concurrent use.
class ModelClient {
 public:
  virtual ~ModelClient() = default;

  // One chat completion. Errors, each naming the stage: DEADLINE_EXCEEDED
  // when the deadline passes (including retries and waits for a concurrency
  // slot); RESOURCE_EXHAUSTED when 429s outlast the retries; UNAVAILABLE for
  // connection failures and 5xx that outlast them; INVALID_ARGUMENT (400),
  // UNAUTHENTICATED (401), PERMISSION_DENIED (403), NOT_FOUND (404) at once;
  // INTERNAL for a reply that is not the API's JSON. A truncated reply is
  // returned with truncated = true (counted as outcome "truncated"); callers
  // salvage what is complete or reject it. 422 is INVALID_ARGUMENT too.
  virtual absl::StatusOr<ChatResponse> Chat(const ChatRequest& request) = 0;

  // Embeddings of `inputs`, batched by the endpoint's embed_batch. Errors as
  // Chat; INTERNAL also when the reply has the wrong number of vectors or
  // vectors of differing dimension.
  virtual absl::StatusOr<EmbedResponse> Embed(const std::string& stage,
                                              const std::vector<std::string>& inputs) = 0;
};

// Reads an environment variable; injectable for tests.
using EnvLookup = std::function<std::string(const std::string& name)>;
std::string GetEnv(const std::string& name);

// A client of the OpenAI-compatible endpoint `config` (provider "openai").
// The API key is read once, from the variable named by config.api_key_env.
// `metrics` may be null. FAILED_PRECONDITION when api_key_env names a
// variable that is unset.
absl::StatusOr<std::unique_ptr<ModelClient>> NewOpenAiClient(const EndpointConfig& config,
                                                             LlmMetrics* metrics,
                                                             const EnvLookup& env = GetEnv);

// About 4 characters per token; at least 1 for non-empty text.
uint64_t EstimateTokens(const std::string& text);

}  // namespace speakermem::llm

#endif  // SPEAKERMEM_LLM_MODEL_CLIENT_H_
