#include "storage/index_hint.h"

#include "rocksdb/slice.h"
#include "rocksdb/slice_transform.h"
#include "storage/keys.h"

namespace speakermem::storage {
namespace {

class IndexHintPrefix : public rocksdb::SliceTransform {
 public:
  const char* Name() const override { return "speakermem.IndexHintPrefix"; }
  rocksdb::Slice Transform(const rocksdb::Slice& key) const override {
    return rocksdb::Slice(key.data(), PrefixLength(key));
  }
  bool InDomain(const rocksdb::Slice& key) const override { return PrefixLength(key) > 0; }

 private:
  static size_t PrefixLength(const rocksdb::Slice& key) {
    const char* d = key.data();
    const size_t n = key.size();
    int nuls = 0;
    size_t i = 0;
    for (; i < n && nuls < 2; ++i) nuls += d[i] == '\0';
    if (nuls < 2 || i >= n) return 0;
    const char kind = d[i];
    if (kind == 'i') return i + 1;
    // A speaker's keys: the ordinal mark and the 4-byte ordinal, which may
    // hold NUL bytes itself.
    if (kind == 's' && i + 6 <= n && d[i + 1] == keys::kOrdinalMark) return i + 6;
    if (kind != 's' && kind != 't') return 0;
    for (size_t j = i + 1; j < n; ++j) {
      if (d[j] == '\0') return j + 1;
    }
    return 0;
  }
};

}  // namespace

std::shared_ptr<const rocksdb::SliceTransform> NewIndexHintPrefix() {
  return std::make_shared<IndexHintPrefix>();
}

}  // namespace speakermem::storage
