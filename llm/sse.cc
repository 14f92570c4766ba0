#include "llm/sse.h"

#include "absl/strings/match.h"
#include "absl/strings/strip.h"
#include "nlohmann/json.hpp"

namespace speakermem::llm {

using json = nlohmann::json;

bool ChatEventStream::Feed(absl::string_view bytes) {
  if (stopped_) return false;
  if (events_ == 0 && raw_.size() < (1u << 24)) raw_.append(bytes.data(), bytes.size());
  pending_.append(bytes.data(), bytes.size());
  size_t start = 0;
  for (size_t nl; (nl = pending_.find('\n', start)) != std::string::npos; start = nl + 1) {
    absl::string_view line(pending_.data() + start, nl - start);
    absl::ConsumeSuffix(&line, "\r");
    if (line.empty()) {  // the end of an event
      if (!data_.empty() && !Event(data_)) {
        stopped_ = true;
        return false;
      }
      data_.clear();
      continue;
    }
    if (absl::ConsumePrefix(&line, "data:")) {
      absl::ConsumePrefix(&line, " ");
      if (!data_.empty()) data_.push_back('\n');
      data_.append(line.data(), line.size());
    }
    // Comments (": keep-alive"), event names and ids carry nothing here.
  }
  pending_.erase(0, start);
  return true;
}

bool ChatEventStream::Event(absl::string_view data) {
  ++events_;
  raw_.clear();
  if (data == "[DONE]") {
    done_ = true;
    return true;
  }
  json chunk = json::parse(data, nullptr, false);
  if (!chunk.is_object()) {
    ++malformed_;
    return true;
  }
  if (chunk.contains("usage") && chunk["usage"].is_object()) {
    const json& u = chunk["usage"];
    if (u.contains("prompt_tokens") && u["prompt_tokens"].is_number_unsigned()) {
      usage_.tokens_in = u["prompt_tokens"].get<uint64_t>();
      has_usage_ = true;
    }
    if (u.contains("completion_tokens") && u["completion_tokens"].is_number_unsigned()) {
      usage_.tokens_out = u["completion_tokens"].get<uint64_t>();
      has_usage_ = true;
    }
  }
  if (!chunk.contains("choices") || !chunk["choices"].is_array() || chunk["choices"].empty()) {
    // The usage chunk has no choices; anything else without them is odd.
    if (!chunk.contains("usage")) ++malformed_;
    return true;
  }
  const json& choice = chunk["choices"][0];
  if (choice.contains("finish_reason") && choice["finish_reason"].is_string()) {
    finish_reason_ = choice["finish_reason"].get<std::string>();
  }
  if (choice.contains("delta") && choice["delta"].is_object() &&
      choice["delta"].contains("content") && choice["delta"]["content"].is_string()) {
    const std::string piece = choice["delta"]["content"].get<std::string>();
    if (piece.empty()) return true;
    text_ += piece;
    if (on_text_ && !on_text_(piece)) return false;
  }
  return true;
}

}  // namespace speakermem::llm
