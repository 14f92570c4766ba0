#include <catch2/catch.hpp>
#include <cmath>
#include <random>

#include "retrieval/vector_index.h"
#include "tests/test_util.h"

namespace speakermem::retrieval {
namespace {

std::vector<float> Unit(size_t dim, uint64_t seed) {
  std::mt19937 rng(static_cast<unsigned>(seed));
  std::normal_distribution<float> n;
  std::vector<float> v(dim);
  double norm = 0;
  for (auto& x : v) {
    x = n(rng);
    norm += x * x;
  }
  for (auto& x : v) x = static_cast<float>(x / std::sqrt(norm));
  return v;
}

void CheckDeletes(VectorIndexOptions o, size_t count, bool expect_hnsw) {
  VectorShard shard(16, o);
  std::vector<uint64_t> ids;
  std::vector<std::vector<float>> vecs;
  for (uint64_t i = 1; i <= count; ++i) {
    ids.push_back(i);
    vecs.push_back(Unit(16, i));
  }
  REQUIRE_OK(shard.Add(ids, vecs));
  CHECK(shard.approximate() == expect_hnsw);
  CHECK(shard.size() == count);
  // Each vector finds itself first.
  auto hit = shard.Search(vecs[6], 3);
  REQUIRE_OK(hit);
  REQUIRE(!hit->empty());
  CHECK((*hit)[0].seq == 7);
  CHECK((*hit)[0].score == Approx(1.0).epsilon(1e-4));
  // Deleted ids never come back, whatever k.
  REQUIRE_OK(shard.Remove({7, 8, 9}));
  CHECK(shard.size() == count - 3);
  auto after = shard.Search(vecs[6], count);
  REQUIRE_OK(after);
  CHECK(after->size() == count - 3);
  for (const auto& h : *after) {
    CHECK(h.seq != 7);
    CHECK(h.seq != 8);
    CHECK(h.seq != 9);
  }
  // Re-adding an id replaces it.
  REQUIRE_OK(shard.Add({7}, {Unit(16, 1000)}));
  auto again = shard.Search(Unit(16, 1000), 1);
  REQUIRE_OK(again);
  CHECK((*again)[0].seq == 7);
  // Removing many triggers a rebuild (HNSW: tombstones past the ratio).
  std::vector<uint64_t> many;
  for (uint64_t i = 10; i <= count / 2; ++i) many.push_back(i);
  REQUIRE_OK(shard.Remove(many));
  auto rest = shard.Search(vecs[0], count);
  REQUIRE_OK(rest);
  for (const auto& h : *rest) CHECK((h.seq < 10 || h.seq > count / 2));
  REQUIRE_CODE(shard.Search(std::vector<float>(3, 0.f), 1), absl::StatusCode::kInvalidArgument);
  REQUIRE_CODE(shard.Add({999}, {std::vector<float>(3, 0.f)}), absl::StatusCode::kInvalidArgument);
}

TEST_CASE("deleting vectors works on the exact index", "[vectors]") {
  CheckDeletes(VectorIndexOptions{}, 200, false);
}

TEST_CASE("deleting vectors works on HNSW with tombstones and rebuilds", "[vectors]") {
  VectorIndexOptions o;
  o.hnsw_threshold = 100;
  o.rebuild_tombstone_ratio = 0.2;
  CheckDeletes(o, 300, true);
}

TEST_CASE("VectorIndex keeps channels apart", "[vectors]") {
  VectorIndex index;
  storage::ChannelRef a{"t", "a"}, b{"t", "b"};
  REQUIRE_OK(index.Add(a, {1}, {Unit(8, 1)}));
  CHECK(index.Size(a) == 1);
  CHECK(index.Size(b) == 0);
  auto none = index.Search(b, Unit(8, 1), 5);
  REQUIRE_OK(none);
  CHECK(none->empty());
}

}  // namespace
}  // namespace speakermem::retrieval
