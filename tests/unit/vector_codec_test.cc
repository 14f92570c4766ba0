#include "storage/vector_codec.h"

#include <catch2/catch.hpp>
#include <cstring>

#include "storage/store.h"
#include "tests/test_util.h"

namespace speakermem::storage {
namespace {

// The bytes of the original (dense) format, built by hand.
std::string DenseBytes(const std::vector<float>& v) {
  uint32_t dim = static_cast<uint32_t>(v.size());
  std::string out(reinterpret_cast<const char*>(&dim), sizeof(dim));
  if (!v.empty()) out.append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(float));
  return out;
}

bool SameBits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() &&
         (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
}

TEST_CASE("a mostly zero vector is stored sparse, exactly, in about a third of the bytes",
          "[vector-codec]") {
  std::vector<float> v(256, 0.0f);
  for (size_t i = 0; i < 256; i += 4) v[i] = (static_cast<float>(i) + 1.0f) * -0.01f;
  v[1] = -0.0f;  // a negative zero is a value, kept as such
  std::string bytes;
  EncodeVector(v, &bytes);
  CHECK(bytes.size() == 4 + 32 + 65 * 4);
  CHECK(bytes.size() < DenseBytes(v).size() / 3);
  std::vector<float> back;
  REQUIRE_OK(DecodeVector(bytes, &back));
  CHECK(SameBits(back, v));
}

TEST_CASE("a dense vector keeps the original format, and that format still decodes",
          "[vector-codec]") {
  std::vector<float> v(8);
  for (size_t i = 0; i < v.size(); ++i) v[i] = 0.5f + static_cast<float>(i);
  std::string bytes;
  EncodeVector(v, &bytes);
  CHECK(bytes == DenseBytes(v));
  std::vector<float> back;
  REQUIRE_OK(DecodeVector(DenseBytes(v), &back));
  CHECK(SameBits(back, v));
  // All zeros and empty round-trip too.
  for (const std::vector<float>& w : {std::vector<float>(100, 0.0f), std::vector<float>()}) {
    EncodeVector(w, &bytes);
    REQUIRE_OK(DecodeVector(bytes, &back));
    CHECK(SameBits(back, w));
  }
}

TEST_CASE("damaged vector entries are DATA_LOSS", "[vector-codec]") {
  std::vector<float> v(64, 0.0f);
  v[3] = 1.0f;
  std::string sparse;
  EncodeVector(v, &sparse);
  std::vector<float> back;
  const std::string dense = DenseBytes(std::vector<float>(4, 1.0f));
  for (const std::string& bad :
       {std::string("ab"), dense.substr(0, dense.size() - 1), sparse.substr(0, sparse.size() - 1),
        sparse + "x", std::string("\xff\xff\xff\x7f", 4)}) {
    REQUIRE_CODE(DecodeVector(bad, &back), absl::StatusCode::kDataLoss);
  }
}

TEST_CASE("the store gives back sparse and dense vectors as they were put", "[vector-codec]") {
  testing::TempDir dir;
  StoreOptions o;
  o.path = dir.path();
  std::vector<std::vector<float>> put(2, std::vector<float>(256, 0.0f));
  put[0][7] = 0.25f;
  put[0][200] = -0.75f;
  for (size_t i = 0; i < 256; ++i) put[1][i] = 1.0f / static_cast<float>(i + 1);
  ChannelRef ch{"default", "c"};
  {
    auto store = Store::Open(o);
    REQUIRE_OK(store);
    REQUIRE_OK((*store)->PutVectors(ch, Store::VectorKind::kRecord, {1, 2}, put));
  }
  auto store = Store::Open(o);
  REQUIRE_OK(store);
  std::vector<std::vector<float>> got;
  REQUIRE_OK((*store)->ForEachVector(
      [&](const ChannelRef& c, Store::VectorKind kind, uint64_t id, const std::vector<float>& v) {
        CHECK(c.channel == "c");
        CHECK(kind == Store::VectorKind::kRecord);
        CHECK(id == got.size() + 1);
        got.push_back(v);
        return absl::OkStatus();
      }));
  REQUIRE(got.size() == 2);
  CHECK(SameBits(got[0], put[0]));
  CHECK(SameBits(got[1], put[1]));
}

}  // namespace
}  // namespace speakermem::storage
