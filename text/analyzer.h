// Text analysis of the lexical index: the terms a message or a query
// contributes, with and without Snowball stemming.
#ifndef SPEAKERMEM_TEXT_ANALYZER_H_
#define SPEAKERMEM_TEXT_ANALYZER_H_

#include <string>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/strings/string_view.h"

namespace speakermem::text {

// Tokenize(text) without index stopwords, in order, duplicates kept. Index
// stopwords are the offline stages' function words (IsStopword) plus "no"
// and "not": the stages keep negations, a bag-of-words ranker cannot use
// them. Thread-safe.
std::vector<std::string> IndexTokens(absl::string_view text);
// Whether IndexTokens leaves out the token `t` (lower case, as ForEachToken
// hands it).
bool IsIndexStopword(absl::string_view t);
// IndexTokens' tokens handed to `fn` one by one (the view is valid during
// the call only). Thread-safe.
void ForEachIndexToken(absl::string_view text, absl::FunctionRef<void(absl::string_view)> fn);

// The Snowball English (Porter2) stem of one case-folded token; a token of
// non-Latin script comes back unchanged. Thread-safe (one stemmer per
// thread).
std::string SnowballStem(absl::string_view token);

}  // namespace speakermem::text

#endif  // SPEAKERMEM_TEXT_ANALYZER_H_
