#include "llm/json_extract.h"

#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"

namespace speakermem::llm {
namespace {

// Whether a left-to-right scan of JSON text is inside a string literal.
class StringState {
 public:
  // Consumes `c`; true when it belongs to a string literal (quotes included).
  bool Consume(char c) {
    if (in_string_) {
      if (escaped_) {
        escaped_ = false;
      } else if (c == '\\') {
        escaped_ = true;
      } else if (c == '"') {
        in_string_ = false;
      }
      return true;
    }
    in_string_ = c == '"';
    return in_string_;
  }

 private:
  bool in_string_ = false, escaped_ = false;
};

// End (exclusive) of the balanced JSON value starting at text[start] ('{' or
// '['), honouring strings and escapes; npos when unbalanced.
size_t BalancedEnd(absl::string_view text, size_t start) {
  int depth = 0;
  StringState str;
  for (size_t i = start; i < text.size(); ++i) {
    const char c = text[i];
    if (str.Consume(c)) continue;
    if (c == '{' || c == '[') {
      ++depth;
    } else if (c == '}' || c == ']') {
      if (--depth == 0) return i + 1;
    }
  }
  return absl::string_view::npos;
}

bool Valid(const std::string& s) { return nlohmann::json::accept(s); }

std::string Excerpt(absl::string_view text) {
  std::string e(text.substr(0, 120));
  return text.size() > 120 ? e + "..." : e;
}

}  // namespace

std::string StripTrailingCommas(absl::string_view json) {
  std::string out;
  out.reserve(json.size());
  StringState str;
  for (size_t i = 0; i < json.size(); ++i) {
    const char c = json[i];
    if (str.Consume(c)) {
      out.push_back(c);
      continue;
    }
    if (c == ',') {
      size_t j = i + 1;
      while (j < json.size() &&
             (json[j] == ' ' || json[j] == '\n' || json[j] == '\t' || json[j] == '\r')) {
        ++j;
      }
      if (j < json.size() && (json[j] == '}' || json[j] == ']')) continue;
    }
    out.push_back(c);
  }
  return out;
}

std::vector<std::string> JsonCandidates(absl::string_view text) {
  std::vector<std::string> out;
  size_t fence = text.find("```");
  while (fence != absl::string_view::npos) {
    size_t body = text.find('\n', fence);
    size_t close = body == absl::string_view::npos ? body : text.find("```", body);
    if (close == absl::string_view::npos) break;
    std::string inner = StripTrailingCommas(text.substr(body + 1, close - body - 1));
    if (Valid(inner)) out.push_back(nlohmann::json::parse(inner).dump());
    fence = text.find("```", close + 3);
  }
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '{' && text[i] != '[') continue;
    size_t end = BalancedEnd(text, i);
    if (end == absl::string_view::npos) continue;
    std::string candidate = StripTrailingCommas(text.substr(i, end - i));
    if (!Valid(candidate)) continue;
    out.push_back(nlohmann::json::parse(candidate).dump());
    i = end - 1;
  }
  return out;
}

absl::StatusOr<std::string> ExtractJson(absl::string_view text) {
  std::vector<std::string> all = JsonCandidates(text);
  if (!all.empty()) return all.front();
  return absl::InvalidArgumentError(
      absl::StrCat("no JSON object or array in model output: \"", Excerpt(text), "\""));
}

}  // namespace speakermem::llm
