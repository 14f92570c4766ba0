#include <catch2/catch.hpp>
#include <cmath>

#include "retrieval/bm25_index.h"
#include "retrieval/tokenizer.h"

namespace speakermem::retrieval {
namespace {

TEST_CASE("BM25 scores match hand computation (k1 1.2, b 0.75)", "[bm25]") {
  Bm25Index index;
  index.Add(1, 100, "apple banana");
  index.Add(2, 200, "apple apple cherry");
  index.Add(3, 300, "banana");
  // N=3, df(apple)=2: idf = ln(1 + 1.5/2.5) = ln 1.6; avgdl = 2.
  const double idf = std::log(1.6);
  // doc 1: tf 1, len 2 -> 2.2 / (1 + 1.2) = 1.0
  // doc 2: tf 2, len 3 -> 4.4 / (2 + 1.2 * (0.25 + 0.75 * 1.5)) = 4.4 / 3.65
  auto hits = index.Search(Tokenize("Apple?"), 10);
  REQUIRE(hits.size() == 2);
  CHECK(hits[0].seq == 2);
  CHECK(hits[0].score == Approx(idf * 4.4 / 3.65).epsilon(1e-5));
  CHECK(hits[1].seq == 1);
  CHECK(hits[1].score == Approx(idf * 1.0).epsilon(1e-5));
}

TEST_CASE("BM25 sums over distinct query terms", "[bm25]") {
  Bm25Index index;
  index.Add(1, 1, "apple banana");
  index.Add(2, 2, "apple apple cherry");
  index.Add(3, 3, "banana");
  auto one = index.Search({"banana"}, 10);
  auto both = index.Search({"apple", "banana", "banana"}, 10);
  REQUIRE(both.size() == 3);
  CHECK(both[0].seq == 1);  // the only document with both terms
  double banana_doc1 = 0;
  for (const auto& h : one) {
    if (h.seq == 1) banana_doc1 = h.score;
  }
  CHECK(both[0].score == Approx(banana_doc1 + std::log(1.6)).epsilon(1e-5));
}

TEST_CASE("BM25 respects k, the time range and tie order", "[bm25]") {
  Bm25Index index;
  for (uint64_t s = 1; s <= 5; ++s) index.Add(s, static_cast<int64_t>(s) * 10, "same words");
  auto top2 = index.Search({"same"}, 2);
  REQUIRE(top2.size() == 2);
  CHECK(top2[0].seq == 1);  // equal scores: lower seq first
  CHECK(top2[1].seq == 2);
  auto ranged = index.Search({"same"}, 10, 20, 40);
  REQUIRE(ranged.size() == 2);
  CHECK(ranged[0].seq == 2);
  CHECK(ranged[1].seq == 3);
  CHECK(index.Search({"absent"}, 10).empty());
  CHECK(index.Search({"same"}, 0).empty());
}

TEST_CASE("BM25 ignores a document added twice", "[bm25]") {
  Bm25Index index;
  index.Add(7, 1, "hello");
  index.Add(7, 1, "hello");
  CHECK(index.size() == 1);
}

TEST_CASE("LexicalIndex keeps channels apart", "[bm25]") {
  LexicalIndex index;
  storage::ChannelRef a{"t", "a"}, b{"t", "b"}, other_tenant{"u", "a"};
  index.Add(a, 1, 1, "picnic on saturday");
  index.Add(b, 1, 1, "meeting on monday");
  CHECK(index.Search(a, "picnic", 5).size() == 1);
  CHECK(index.Search(b, "picnic", 5).empty());
  CHECK(index.Search(other_tenant, "picnic", 5).empty());
  CHECK(index.ChannelCount() == 2);
}

}  // namespace
}  // namespace speakermem::retrieval
