#include "llm/streamed_field.h"

#include "absl/strings/ascii.h"
#include "common/utf8.h"

namespace speakermem::llm {
namespace {

// Bytes at the end of `s` that start a UTF-8 sequence not yet complete.
size_t IncompleteTail(const std::string& s) {
  for (size_t back = 1; back <= 3 && back <= s.size(); ++back) {
    const auto c = static_cast<unsigned char>(s[s.size() - back]);
    if ((c & 0xC0) == 0x80) continue;  // a continuation byte: look further back
    const size_t need = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
    return need > back ? back : 0;
  }
  return 0;
}

}  // namespace

bool StreamedStringField::Feed(absl::string_view text) {
  if (stopped_) return false;
  for (char c : text) Char(c);
  const size_t keep = IncompleteTail(out_);
  if (out_.size() > keep) {
    std::string piece = out_.substr(0, out_.size() - keep);
    out_.erase(0, out_.size() - keep);
    if (!sink_(piece)) stopped_ = true;
  }
  return !stopped_;
}

void StreamedStringField::CodePoint(uint32_t cp) {
  if (cp >= 0xD800 && cp <= 0xDBFF) {  // wait for the low half
    if (high_ != 0) AppendUtf8(0xFFFD, &out_);
    high_ = cp;
    return;
  }
  if (cp >= 0xDC00 && cp <= 0xDFFF) {
    cp = high_ != 0 ? 0x10000 + ((high_ - 0xD800) << 10) + (cp - 0xDC00) : 0xFFFD;
    high_ = 0;
  } else if (high_ != 0) {
    AppendUtf8(0xFFFD, &out_);
    high_ = 0;
  }
  AppendUtf8(static_cast<int32_t>(cp), &out_);
}

void StreamedStringField::Char(char c) {
  switch (state_) {
    case State::kSeek:
      window_.push_back(c);
      if (window_.size() > quoted_key_.size()) window_.erase(0, 1);
      if (window_ == quoted_key_) state_ = State::kColon;
      return;
    case State::kColon:
      if (absl::ascii_isspace(static_cast<unsigned char>(c))) return;
      state_ = c == ':' ? State::kOpen : State::kSeek;
      window_.clear();
      return;
    case State::kOpen:
      if (absl::ascii_isspace(static_cast<unsigned char>(c))) return;
      state_ = c == '"' ? State::kValue : State::kSeek;
      return;
    case State::kValue:
      if (c == '\\') {
        state_ = State::kEscape;
      } else if (c == '"') {
        state_ = State::kDone;
      } else {
        if (high_ != 0) {  // a high surrogate with no low half
          AppendUtf8(0xFFFD, &out_);
          high_ = 0;
        }
        out_.push_back(c);
      }
      return;
    case State::kEscape: {
      state_ = State::kValue;
      const char* from = "nrtbf";
      const char* to = "\n\r\t\b\f";
      for (int i = 0; from[i] != 0; ++i) {
        if (c == from[i]) {
          CodePoint(static_cast<unsigned char>(to[i]));
          return;
        }
      }
      if (c == 'u') {
        hex_.clear();
        state_ = State::kUnicode;
        return;
      }
      CodePoint(static_cast<unsigned char>(c));  // \" \\ \/ and anything else as itself
      return;
    }
    case State::kUnicode:
      hex_.push_back(c);
      if (hex_.size() < 4) return;
      state_ = State::kValue;
      {
        uint32_t cp = 0;
        for (char h : hex_) {
          if (!absl::ascii_isxdigit(static_cast<unsigned char>(h))) {
            cp = 0xFFFD;
            break;
          }
          cp = cp * 16 + static_cast<uint32_t>(absl::ascii_isdigit(static_cast<unsigned char>(h))
                                                   ? h - '0'
                                                   : absl::ascii_tolower(h) - 'a' + 10);
        }
        CodePoint(cp);
      }
      return;
    case State::kDone:
      return;
  }
}

}  // namespace speakermem::llm
