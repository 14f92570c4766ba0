// Tolerant extraction of a JSON value from model text.
#ifndef SPEAKERMEM_LLM_JSON_EXTRACT_H_
#define SPEAKERMEM_LLM_JSON_EXTRACT_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace speakermem::llm {

// Finds the JSON object or array in `text` and returns it as strict JSON:
// accepts a ```json fenced block, prose before or after, and trailing commas
// before } or ]. INVALID_ARGUMENT (with a short excerpt) when no well-formed
// JSON object or array is found.
absl::StatusOr<std::string> ExtractJson(absl::string_view text);

// Every well-formed JSON object or array in `text`, as strict JSON, in the
// order ExtractJson prefers them: fenced blocks first, then top-level
// balanced values left to right (a value inside an earlier one is not listed
// again). A stage picks the first that fits its schema, so prose citing
// "[0]" before the real reply does not win.
std::vector<std::string> JsonCandidates(absl::string_view text);

// Removes commas that directly precede } or ] outside strings.
std::string StripTrailingCommas(absl::string_view json);

}  // namespace speakermem::llm

#endif  // SPEAKERMEM_LLM_JSON_EXTRACT_H_
