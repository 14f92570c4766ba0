#include "storage/vector_codec.h"

#include <cstdint>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace speakermem::storage {
namespace {

constexpr uint32_t kSparse = 0x80000000u;
// Far above any embedding model's dimension; a header above it is corrupt.
constexpr uint32_t kMaxDim = 1u << 20;

bool IsZero(float x) {
  uint32_t bits;
  std::memcpy(&bits, &x, sizeof(bits));
  return bits == 0;
}

}  // namespace

void EncodeVector(const std::vector<float>& v, std::string* out) {
  const uint32_t dim = static_cast<uint32_t>(v.size());
  size_t nonzero = 0;
  for (float x : v) nonzero += !IsZero(x);
  const size_t bitmap = (v.size() + 7) / 8;
  const bool sparse = bitmap + nonzero * sizeof(float) < v.size() * sizeof(float);
  const uint32_t header = sparse ? dim | kSparse : dim;
  out->assign(reinterpret_cast<const char*>(&header), sizeof(header));
  if (!sparse) {
    if (!v.empty()) out->append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(float));
    return;
  }
  const size_t at = out->size();
  out->resize(at + bitmap + nonzero * sizeof(float));
  char* bits = out->data() + at;
  char* values = bits + bitmap;
  std::memset(bits, 0, bitmap);
  for (size_t i = 0; i < v.size(); ++i) {
    if (IsZero(v[i])) continue;
    bits[i / 8] = static_cast<char>(bits[i / 8] | (1 << (i % 8)));
    std::memcpy(values, &v[i], sizeof(float));
    values += sizeof(float);
  }
}

absl::Status DecodeVector(absl::string_view bytes, std::vector<float>* v) {
  uint32_t header = 0;
  if (bytes.size() < sizeof(header)) return absl::DataLossError("vector entry is too short");
  std::memcpy(&header, bytes.data(), sizeof(header));
  bytes.remove_prefix(sizeof(header));
  const uint32_t dim = header & ~kSparse;
  if (dim > kMaxDim) return absl::DataLossError(absl::StrCat("vector dimension ", dim));
  if (!(header & kSparse)) {
    if (bytes.size() != size_t{dim} * sizeof(float)) {
      return absl::DataLossError("vector entry has the wrong size");
    }
    v->resize(dim);
    if (dim > 0) std::memcpy(v->data(), bytes.data(), bytes.size());
    return absl::OkStatus();
  }
  const size_t bitmap = (size_t{dim} + 7) / 8;
  if (bytes.size() < bitmap) return absl::DataLossError("sparse vector entry is too short");
  size_t nonzero = 0;
  for (size_t i = 0; i < dim; ++i) nonzero += (bytes[i / 8] >> (i % 8)) & 1;
  if (bytes.size() != bitmap + nonzero * sizeof(float)) {
    return absl::DataLossError("sparse vector entry has the wrong size");
  }
  v->assign(dim, 0.0f);
  const char* values = bytes.data() + bitmap;
  for (size_t i = 0; i < dim; ++i) {
    if (!((bytes[i / 8] >> (i % 8)) & 1)) continue;
    std::memcpy(&(*v)[i], values, sizeof(float));
    values += sizeof(float);
  }
  return absl::OkStatus();
}

}  // namespace speakermem::storage
