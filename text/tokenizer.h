// Unicode-aware tokenizer shared by every lexical index and by the offline
// model stages.
#ifndef SPEAKERMEM_TEXT_TOKENIZER_H_
#define SPEAKERMEM_TEXT_TOKENIZER_H_

#include <string>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/strings/string_view.h"

namespace speakermem::text {

// Splits `text` into tokens: maximal runs of letters, digits and combining
// marks, case-folded (Unicode full case folding, so "Straße" and "STRASSE"
// match); each CJK ideograph, kana or Hangul syllable is a token of its own.
// Everything else separates tokens. Invalid UTF-8 bytes separate tokens.
// Thread-safe.
std::vector<std::string> Tokenize(absl::string_view text);

// Tokenize's tokens, in order, handed to `fn` one by one without building a
// list (the view is valid during the call only). Thread-safe.
void ForEachToken(absl::string_view text, absl::FunctionRef<void(absl::string_view)> fn);

// True for code points tokenized one per token (Han, kana, Hangul).
bool IsCjk(int cp);

}  // namespace speakermem::text

#endif  // SPEAKERMEM_TEXT_TOKENIZER_H_
