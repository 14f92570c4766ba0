#include "text/analyzer.h"

#include <libstemmer.h>

#include <memory>

#include "absl/container/flat_hash_map.h"
#include "text/text.h"
#include "text/tokenizer.h"

namespace speakermem::text {
namespace {

struct StemmerDeleter {
  void operator()(sb_stemmer* s) const { sb_stemmer_delete(s); }
};

sb_stemmer* ThreadStemmer() {
  // sb_stemmer keeps per-call state: one per thread.
  thread_local std::unique_ptr<sb_stemmer, StemmerDeleter> stemmer(
      sb_stemmer_new("english", "UTF_8"));
  return stemmer.get();
}

}  // namespace

bool IsIndexStopword(absl::string_view t) { return IsStopword(t) || t == "no" || t == "not"; }

void ForEachIndexToken(absl::string_view text, absl::FunctionRef<void(absl::string_view)> fn) {
  ForEachToken(text, [&](absl::string_view t) {
    if (!IsIndexStopword(t)) fn(t);
  });
}

std::vector<std::string> IndexTokens(absl::string_view text) {
  std::vector<std::string> out;
  ForEachIndexToken(text, [&](absl::string_view t) { out.emplace_back(t); });
  return out;
}

std::string SnowballStem(absl::string_view token) {
  sb_stemmer* s = ThreadStemmer();
  if (s == nullptr || token.empty()) return std::string(token);
  // Each channel's index stems each word of its vocabulary once: with many
  // channels that is the same words again and again (a bulk load of 1,000
  // channels spent about 2% of its time in the stemmer). Bounded: cleared
  // when full.
  constexpr size_t kCacheEntries = 1 << 15;
  thread_local absl::flat_hash_map<std::string, std::string> cache;
  if (auto it = cache.find(token); it != cache.end()) return it->second;
  const sb_symbol* out = sb_stemmer_stem(s, reinterpret_cast<const sb_symbol*>(token.data()),
                                         static_cast<int>(token.size()));
  if (out == nullptr) return std::string(token);  // out of memory: match unstemmed
  std::string stem(reinterpret_cast<const char*>(out), static_cast<size_t>(sb_stemmer_length(s)));
  if (cache.size() >= kCacheEntries) cache.clear();
  cache.emplace(std::string(token), stem);
  return stem;
}

}  // namespace speakermem::text
