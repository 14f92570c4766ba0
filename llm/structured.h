// Reading a model stage's JSON reply the way real models write it: the value
// that fits the stage's schema is picked among everything JSON-like in the
// text (fences, prose around it, "[0]" cited before it), a bare top-level
// array stands for the schema's single array property, and string booleans
// and numbers are accepted. Every such liberty is recorded in
// StageCall::coercions so it is counted, never silent. Includes nlohmann/json:
// for the model stages only, not for widely included headers.
#ifndef SPEAKERMEM_LLM_STRUCTURED_H_
#define SPEAKERMEM_LLM_STRUCTURED_H_

#include <cstdint>
#include <functional>
#include <string>

#include "absl/status/statusor.h"
#include "llm/model_client.h"
#include "nlohmann/json.hpp"

namespace speakermem::llm {

struct ReplyShape {
  std::string stage;
  // The stage's JSON Schema, sent as the response_format (ChatRequest::schema).
  std::string schema;
  // The object property a bare top-level array stands for ("ranking");
  // empty when the schema has none.
  std::string array_property;
  // The property every reply of the stage has ("ranking"): an object
  // without it is not this stage's reply.
  std::string required_property;
};

// The object in `text` that is this stage's reply. INVALID_ARGUMENT naming
// the stage when no JSON value in the text fits.
absl::StatusOr<nlohmann::json> ReadReply(const std::string& text, const ReplyShape& shape,
                                         StageCall* call);

// One chat call for `shape`: sends the schema, then reads the reply.
// OUT_OF_RANGE for a reply cut at max_tokens; errors name the stage.
// `on_text` (may be empty) streams the reply's raw text (ChatRequest).
absl::StatusOr<nlohmann::json> ChatStructured(
    ModelClient* client, const ReplyShape& shape, const std::string& system,
    const std::string& user, StageCall* call,
    std::function<bool(absl::string_view)> on_text = nullptr);

// Lenient scalar reads: true/false, "true"/"false"/"yes"/"no" (coercion
// "string_boolean"), 0/1 ("number_boolean").
bool ReadBool(const nlohmann::json& v, bool* out, StageCall* call);
// An index: an integer, an integral float ("float_index"), or a string
// holding one, possibly bracketed or prefixed ("3", "[3]", "#3";
// "string_index"). False for anything else.
bool ReadIndex(const nlohmann::json& v, int64_t* out, StageCall* call);
// A string, or a number or boolean written as text ("scalar_as_string").
bool ReadString(const nlohmann::json& v, std::string* out, StageCall* call);

// Records one coercion of `kind` in `call` (when not null).
void Coerced(StageCall* call, const std::string& kind);

}  // namespace speakermem::llm

#endif  // SPEAKERMEM_LLM_STRUCTURED_H_
