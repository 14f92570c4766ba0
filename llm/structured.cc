#include "llm/structured.h"

#include <cctype>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "llm/json_extract.h"

namespace speakermem::llm {

using json = nlohmann::json;

void Coerced(StageCall* call, const std::string& kind) {
  if (call != nullptr) call->coercions.push_back(kind);
}

absl::StatusOr<json> ReadReply(const std::string& text, const ReplyShape& shape, StageCall* call) {
  std::vector<json> values;
  for (const std::string& c : JsonCandidates(text)) values.push_back(json::parse(c));
  if (values.empty()) {
    std::string excerpt = text.substr(0, 120);
    return absl::InvalidArgumentError(absl::StrCat("stage ", shape.stage,
                                                   ": no JSON object or array in model output: \"",
                                                   excerpt, text.size() > 120 ? "...\"" : "\""));
  }
  auto fits = [&](const json& v) {
    return v.is_object() &&
           (shape.required_property.empty() || v.contains(shape.required_property));
  };
  for (size_t i = 0; i < values.size(); ++i) {
    if (!fits(values[i])) continue;
    if (i > 0) Coerced(call, "skipped_non_fitting_json");
    return values[i];
  }
  // A bare array: one reply object inside it, or the schema's array property.
  for (const json& v : values) {
    if (!v.is_array()) continue;
    if (v.size() == 1 && fits(v[0])) {
      Coerced(call, "array_wrapped_object");
      return v[0];
    }
    if (!shape.array_property.empty()) {
      json wrapped = json::object();
      wrapped[shape.array_property] = v;
      if (fits(wrapped)) {
        Coerced(call, "top_level_array");
        return wrapped;
      }
    }
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "stage ", shape.stage, ": no JSON value in the model output fits the stage's reply (",
      shape.required_property.empty() ? "an object"
                                      : "an object with '" + shape.required_property + "'",
      ")"));
}

absl::StatusOr<json> ChatStructured(ModelClient* client, const ReplyShape& shape,
                                    const std::string& system, const std::string& user,
                                    StageCall* call,
                                    std::function<bool(absl::string_view)> on_text) {
  ChatRequest req{shape.stage, system, user, true, shape.schema};
  if (call != nullptr) req.deadline = call->deadline;
  req.on_text = std::move(on_text);
  absl::StatusOr<ChatResponse> r = client->Chat(req);
  if (call != nullptr) ++call->model_calls;
  if (!r.ok()) return r.status();
  if (call != nullptr) call->usage.Add(r->usage);
  if (r->truncated) {
    return absl::OutOfRangeError(absl::StrCat(
        "stage ", shape.stage, ": model reply was cut at max_tokens (finish_reason=length)"));
  }
  return ReadReply(r->text, shape, call);
}

bool ReadBool(const json& v, bool* out, StageCall* call) {
  if (v.is_boolean()) {
    *out = v.get<bool>();
    return true;
  }
  if (v.is_string()) {
    std::string s = absl::AsciiStrToLower(absl::StripAsciiWhitespace(v.get<std::string>()));
    if (s == "true" || s == "yes" || s == "false" || s == "no") {
      *out = s == "true" || s == "yes";
      Coerced(call, "string_boolean");
      return true;
    }
  }
  if (v.is_number_integer() && (v.get<int64_t>() == 0 || v.get<int64_t>() == 1)) {
    *out = v.get<int64_t>() == 1;
    Coerced(call, "number_boolean");
    return true;
  }
  return false;
}

bool ReadIndex(const json& v, int64_t* out, StageCall* call) {
  if (v.is_number_integer()) {
    *out = v.get<int64_t>();
    return true;
  }
  if (v.is_number_float()) {
    double d = v.get<double>();
    if (d != static_cast<double>(static_cast<int64_t>(d))) return false;
    *out = static_cast<int64_t>(d);
    Coerced(call, "float_index");
    return true;
  }
  if (!v.is_string()) return false;
  std::string s(absl::StripAsciiWhitespace(v.get<std::string>()));
  while (!s.empty() && (s.front() == '[' || s.front() == '#' || s.front() == '(')) s.erase(0, 1);
  while (!s.empty() && (s.back() == ']' || s.back() == ')' || s.back() == '.')) s.pop_back();
  int64_t n = 0;
  if (s.empty() || !absl::SimpleAtoi(s, &n)) return false;
  *out = n;
  Coerced(call, "string_index");
  return true;
}

bool ReadString(const json& v, std::string* out, StageCall* call) {
  if (v.is_string()) {
    *out = v.get<std::string>();
    return true;
  }
  if (v.is_number() || v.is_boolean()) {
    *out = v.dump();
    Coerced(call, "scalar_as_string");
    return true;
  }
  return false;
}

}  // namespace speakermem::llm
