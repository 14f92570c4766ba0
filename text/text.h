// Small lexical helpers shared by the offline stages.
#ifndef SPEAKERMEM_TEXT_TEXT_H_
#define SPEAKERMEM_TEXT_TEXT_H_

#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace speakermem::text {

// English function words and question words (case-folded tokens).
bool IsStopword(absl::string_view token);

// Tokenize(text) without stopwords, in order, duplicates kept.
std::vector<std::string> ContentTokens(absl::string_view text);

// A light English suffix stripper ("needs" -> "need", "moved" -> "mov",
// "parties" -> "party") for lexical matching in the offline stages; both
// sides of a comparison must be stemmed the same way.
std::string Stem(const std::string& token);
// Tokenize(text) with every token stemmed.
std::vector<std::string> StemmedTokens(absl::string_view text);

// Position of the first occurrence of `needle` as a contiguous token run in
// `haystack`, or -1.
int FindTokenRun(const std::vector<std::string>& haystack, const std::vector<std::string>& needle);

// Lower case, letters and digits (and any non-ASCII) only, words separated
// by single spaces: the form in which two records' contents are "the same".
std::string NormalizeContent(absl::string_view content);

// 64-bit FNV-1a, for feature hashing.
uint64_t Fnv1a64(absl::string_view s, uint64_t seed = 0);

}  // namespace speakermem::text

#endif  // SPEAKERMEM_TEXT_TEXT_H_
