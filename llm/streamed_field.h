// One string property of a JSON reply, decoded while the reply streams in:
// fed `{"answer": "The off`, it passes on "The off" before the rest has
// arrived. Text before the object (prose, a ``` fence) is skipped; the first
// occurrence of the key followed by a colon and a string wins. Escapes are
// decoded (\uXXXX with surrogate pairs); a piece never ends inside a UTF-8
// sequence, so each is valid text on its own.
#ifndef SPEAKERMEM_LLM_STREAMED_FIELD_H_
#define SPEAKERMEM_LLM_STREAMED_FIELD_H_

#include <cstdint>
#include <functional>
#include <string>

#include "absl/strings/string_view.h"

namespace speakermem::llm {

class StreamedStringField {
 public:
  // `sink` receives the decoded value in pieces; returning false stops.
  StreamedStringField(std::string key, std::function<bool(absl::string_view)> sink)
      : quoted_key_("\"" + key + "\""), sink_(std::move(sink)) {}

  // The next text of the reply. False once the sink said stop.
  bool Feed(absl::string_view text);
  // The value's closing quote was read.
  bool finished() const { return state_ == State::kDone; }

 private:
  enum class State { kSeek, kColon, kOpen, kValue, kEscape, kUnicode, kDone };
  void Char(char c);
  void CodePoint(uint32_t cp);

  const std::string quoted_key_;
  std::function<bool(absl::string_view)> sink_;
  State state_ = State::kSeek;
  std::string window_;  // the last characters, while seeking the key
  std::string out_;     // decoded, not yet passed on
  std::string hex_;     // of a \u escape
  uint32_t high_ = 0;   // a pending high surrogate
  bool stopped_ = false;
};

}  // namespace speakermem::llm

#endif  // SPEAKERMEM_LLM_STREAMED_FIELD_H_
