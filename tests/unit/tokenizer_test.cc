#include "text/tokenizer.h"

#include <catch2/catch.hpp>

#include "text/similarity.h"

namespace speakermem::text {
namespace {

using V = std::vector<std::string>;

TEST_CASE("Tokenize splits on non-alphanumerics and lowercases", "[tokenizer]") {
  CHECK(Tokenize("Hello, WORLD! it's 2023...") == V{"hello", "world", "it", "s", "2023"});
  CHECK(Tokenize("") == V{});
  CHECK(Tokenize("  --  ") == V{});
}

TEST_CASE("Tokenize applies Unicode case folding", "[tokenizer]") {
  CHECK(Tokenize("Straße") == V{"strasse"});
  CHECK(Tokenize("STRASSE") == V{"strasse"});
  CHECK(Tokenize("ÉCOLE école") == V{"école", "école"});
  CHECK(Tokenize("ΟΔΥΣΣΕΥΣ") == Tokenize("οδυσσευς"));
}

TEST_CASE("Tokenize makes each CJK character a token", "[tokenizer]") {
  CHECK(Tokenize("我喜欢Tea") == V{"我", "喜", "欢", "tea"});
  CHECK(Tokenize("東京タワー") == V{"東", "京", "タ", "ワ", "ー"});
  CHECK(Tokenize("한국어") == V{"한", "국", "어"});
}

TEST_CASE("Tokenize keeps combining marks inside words and drops emoji", "[tokenizer]") {
  CHECK(Tokenize("cafe\xCC\x81 ok") == V{"cafe\xCC\x81", "ok"});
  CHECK(Tokenize("nice 😁 booths") == V{"nice", "booths"});
}

TEST_CASE("Tokenize treats invalid UTF-8 as a separator", "[tokenizer]") {
  CHECK(Tokenize("ab\xFF"
                 "cd") == V{"ab", "cd"});
}

TEST_CASE("Jaccard is shared words over all words of two token sets", "[tokenizer]") {
  using S = std::set<std::string>;
  CHECK(Jaccard(S{"porto", "may"}, S{"porto", "may"}) == 1.0);
  CHECK(Jaccard(S{"porto", "may", "venue"}, S{"porto", "lisbon"}) == Approx(0.25));
  CHECK(Jaccard(S{"porto"}, S{"lisbon"}) == 0.0);
  CHECK(Jaccard(S{}, S{"lisbon"}) == 0.0);
  CHECK(Jaccard(S{}, S{}) == 0.0);
}

}  // namespace
}  // namespace speakermem::text
