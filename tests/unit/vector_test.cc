#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <random>

#include "retrieval/blas_threads.h"
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

void CheckDeletes(VectorIndexOptions o, size_t count, bool expect_ivf) {
  VectorShard shard(16, o);
  std::vector<uint64_t> ids;
  std::vector<std::vector<float>> vecs;
  for (uint64_t i = 1; i <= count; ++i) {
    ids.push_back(i);
    vecs.push_back(Unit(16, i));
  }
  REQUIRE_OK(shard.Add(ids, vecs));
  CHECK(shard.approximate() == expect_ivf);
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
  CHECK(shard.Ids().count(7) == 0);
  auto after = shard.Search(vecs[6], count);
  REQUIRE_OK(after);
  if (!expect_ivf) CHECK(after->size() == count - 3);  // IVF sees only probed lists
  for (const auto& h : *after) {
    CHECK(h.seq != 7);
    CHECK(h.seq != 8);
    CHECK(h.seq != 9);
  }
  // Re-adding an id replaces it.
  REQUIRE_OK(shard.Add({7}, {Unit(16, 100000)}));
  CHECK(shard.size() == count - 2);
  auto again = shard.Search(Unit(16, 100000), 1);
  REQUIRE_OK(again);
  CHECK((*again)[0].seq == 7);
  // Replacing an id that is present keeps one copy.
  REQUIRE_OK(shard.Add({7}, {Unit(16, 200000)}));
  CHECK(shard.size() == count - 2);
  // Removing many.
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

TEST_CASE("deleting vectors works on the IVF index", "[vectors]") {
  VectorIndexOptions o;
  o.ivf_threshold = 1000;
  o.ivf_nprobe = 64;  // every list: results equal exact search
  CheckDeletes(o, 3000, true);
}

TEST_CASE("a shard switches to IVF past its threshold and keeps finding neighbours", "[vectors]") {
  VectorIndexOptions o;
  o.ivf_threshold = 2000;
  o.ivf_nprobe = 8;
  VectorShard shard(32, o);
  std::vector<uint64_t> ids;
  std::vector<std::vector<float>> vecs;
  for (uint64_t i = 1; i <= 6000; ++i) {
    ids.push_back(i);
    vecs.push_back(Unit(32, i));
    if (ids.size() == 500) {  // in batches, as the embedder adds them
      REQUIRE_OK(shard.Add(ids, vecs));
      ids.clear();
      vecs.clear();
    }
  }
  CHECK(shard.approximate());
  CHECK(shard.size() == 6000);
  // A stored vector is its own nearest neighbour (its list is probed first).
  int found = 0;
  for (uint64_t i = 1; i <= 6000; i += 97) {
    auto hit = shard.Search(Unit(32, i), 1);
    REQUIRE_OK(hit);
    found += !hit->empty() && (*hit)[0].seq == i;
  }
  CHECK(found == 62);
  // Shrinking far below the threshold returns to exact search.
  std::vector<uint64_t> drop;
  for (uint64_t i = 1; i <= 5500; ++i) drop.push_back(i);
  REQUIRE_OK(shard.Remove(drop));
  CHECK_FALSE(shard.approximate());
  CHECK(shard.size() == 500);
  auto all = shard.Search(Unit(32, 6000), 1000);
  REQUIRE_OK(all);
  CHECK(all->size() == 500);
}

TEST_CASE("shards survive a save and load, other models' files are discarded", "[vectors]") {
  speakermem::testing::TempDir dir;
  VectorIndexOptions o;
  o.ivf_threshold = 1000;
  storage::ChannelRef small{"t", "small\nname with / and \xe4"}, big{"t2", "big"};
  {
    VectorIndex index(o);
    REQUIRE_OK(index.Add(small, {1, 2}, {Unit(8, 1), Unit(8, 2)}));
    std::vector<uint64_t> ids;
    std::vector<std::vector<float>> vecs;
    for (uint64_t i = 1; i <= 1500; ++i) {
      ids.push_back(i);
      vecs.push_back(Unit(8, i));
    }
    REQUIRE_OK(index.Add(big, ids, vecs));
    auto written = index.Save(dir.path(), "model-a");
    REQUIRE_OK(written);
    CHECK(*written == 2);
    auto again = index.Save(dir.path(), "model-a");  // nothing changed
    REQUIRE_OK(again);
    CHECK(*again == 0);
  }
  {
    VectorIndex index(o);
    auto loaded = index.Load(dir.path(), "model-a");
    REQUIRE_OK(loaded);
    CHECK(loaded->size() == 2);
    CHECK(index.Size(small) == 2);
    CHECK(index.Size(big) == 1500);
    CHECK(index.Approximate(big));
    CHECK(index.Ids(small) == std::set<uint64_t>{1, 2});
    auto hit = index.Search(small, Unit(8, 2), 1);
    REQUIRE_OK(hit);
    CHECK((*hit)[0].seq == 2);
  }
  {
    VectorIndex index(o);
    auto loaded = index.Load(dir.path(), "model-b");
    REQUIRE_OK(loaded);
    CHECK(loaded->empty());
    CHECK(index.Size(small) == 0);
    CHECK(std::filesystem::is_empty(dir.path()));
  }
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

TEST_CASE("a vector shard runs BLAS on its caller's thread", "[vectors]") {
  // A threaded BLAS (OpenBLAS here) would otherwise start normal-priority
  // workers that spin after every call and take the embedder's work out of
  // its background priority.
  VectorShard shard(16, VectorIndexOptions{});
  const int threads = BlasThreads();
  INFO("BLAS threads: " << threads);
  CHECK((threads == 1 || threads == -1));
}

}  // namespace
}  // namespace speakermem::retrieval
