#include "text/tokenizer.h"

#include <utf8proc.h>

#include "common/utf8.h"

namespace speakermem::text {
namespace {

enum class Kind { kSeparator, kWord, kCjk };

Kind Classify(int32_t cp) {
  if (cp < 0x80) {
    if ((cp >= 'a' && cp <= 'z') || (cp >= 'A' && cp <= 'Z') || (cp >= '0' && cp <= '9')) {
      return Kind::kWord;
    }
    return Kind::kSeparator;
  }
  if (cp < 0) return Kind::kSeparator;
  if (IsCjk(cp)) return Kind::kCjk;
  switch (utf8proc_category(cp)) {
    case UTF8PROC_CATEGORY_LU:
    case UTF8PROC_CATEGORY_LL:
    case UTF8PROC_CATEGORY_LT:
    case UTF8PROC_CATEGORY_LM:
    case UTF8PROC_CATEGORY_LO:
    case UTF8PROC_CATEGORY_MN:
    case UTF8PROC_CATEGORY_MC:
    case UTF8PROC_CATEGORY_ND:
    case UTF8PROC_CATEGORY_NL:
    case UTF8PROC_CATEGORY_NO:
      return Kind::kWord;
    default:
      return Kind::kSeparator;
  }
}

void AppendFolded(int32_t cp, std::string* out) {
  if (cp < 0x80) {
    out->push_back(static_cast<char>(cp >= 'A' && cp <= 'Z' ? cp + 32 : cp));
    return;
  }
  utf8proc_int32_t buf[8];
  int last_boundclass = 0;
  utf8proc_ssize_t n = utf8proc_decompose_char(
      cp, buf, 8, static_cast<utf8proc_option_t>(UTF8PROC_CASEFOLD), &last_boundclass);
  if (n <= 0 || n > 8) {
    AppendUtf8(cp, out);
    return;
  }
  for (utf8proc_ssize_t i = 0; i < n; ++i) AppendUtf8(buf[i], out);
}

}  // namespace

bool IsCjk(int cp) {
  return (cp >= 0x4E00 && cp <= 0x9FFF) ||    // CJK unified ideographs
         (cp >= 0x3400 && cp <= 0x4DBF) ||    // extension A
         (cp >= 0x20000 && cp <= 0x2EBEF) ||  // extensions B-F
         (cp >= 0x30000 && cp <= 0x323AF) ||  // extensions G-H
         (cp >= 0xF900 && cp <= 0xFAFF) ||    // compatibility ideographs
         (cp >= 0x3040 && cp <= 0x30FF) ||    // hiragana, katakana
         (cp >= 0x31F0 && cp <= 0x31FF) ||    // katakana extensions
         (cp >= 0xAC00 && cp <= 0xD7AF);      // Hangul syllables
}

void ForEachToken(absl::string_view text, absl::FunctionRef<void(absl::string_view)> fn) {
  std::string current;
  size_t pos = 0;
  while (pos < text.size()) {
    const auto byte = static_cast<unsigned char>(text[pos]);
    Kind kind;
    int32_t cp;
    if (byte < 0x80) {  // ASCII: no decoding, no Unicode tables
      ++pos;
      cp = byte;
      const bool alnum = (byte >= 'a' && byte <= 'z') || (byte >= 'A' && byte <= 'Z') ||
                         (byte >= '0' && byte <= '9');
      if (alnum) {
        current.push_back(static_cast<char>(byte >= 'A' && byte <= 'Z' ? byte + 32 : byte));
        continue;
      }
      kind = Kind::kSeparator;
    } else {
      cp = DecodeUtf8(text, &pos);
      kind = Classify(cp);
      if (kind == Kind::kWord) {
        AppendFolded(cp, &current);
        continue;
      }
    }
    if (!current.empty()) {
      fn(current);
      current.clear();
    }
    if (kind == Kind::kCjk) {
      std::string t;
      AppendUtf8(cp, &t);
      fn(t);
    }
  }
  if (!current.empty()) fn(current);
}

std::vector<std::string> Tokenize(absl::string_view text) {
  std::vector<std::string> tokens;
  ForEachToken(text, [&](absl::string_view t) { tokens.emplace_back(t); });
  return tokens;
}

}  // namespace speakermem::text
