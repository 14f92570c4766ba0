// UTF-8 validation and decoding.
#ifndef SPEAKERMEM_COMMON_UTF8_H_
#define SPEAKERMEM_COMMON_UTF8_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"

namespace speakermem {

// True when `s` is well-formed UTF-8: no overlong forms, no surrogates, no
// code points above U+10FFFF, no truncated sequences.
bool IsValidUtf8(absl::string_view s);

// Decodes the code point starting at s[*pos] and advances *pos past it.
// Returns -1 (and advances one byte) on an ill-formed sequence.
// REQUIRES: *pos < s.size().
int32_t DecodeUtf8(absl::string_view s, size_t* pos);

// Appends the UTF-8 encoding of `cp` to `out`. REQUIRES: cp is a scalar value.
void AppendUtf8(int32_t cp, std::string* out);

// Escapes `s` for inclusion in a JSON string literal (without the quotes).
// Invalid UTF-8 bytes become U+FFFD.
std::string JsonEscape(absl::string_view s);

}  // namespace speakermem

#endif  // SPEAKERMEM_COMMON_UTF8_H_
