// How a vector is stored in the vectors column family.
//
// Dense: a uint32 dimension, then the dimension's float32s (the original
// format; 4 + 4 * dim bytes). Sparse: the dimension with its top bit set,
// a bitmap of ceil(dim / 8) bytes marking the entries that are not zero,
// then those entries' float32s in order (4 + dim / 8 + 4 * nonzero bytes).
// The offline embedder's hashed n-grams leave most of their 256 buckets
// empty for a chat message: LoCoMo's 788 development messages average 408
// bytes sparse against 1,028 dense, less to flush and compact while ingest
// runs and less on disk. Both forms are exact (a zero is a float whose bits
// are all zero; -0.0 is kept as a value), and the encoder picks the smaller.
#ifndef SPEAKERMEM_STORAGE_VECTOR_CODEC_H_
#define SPEAKERMEM_STORAGE_VECTOR_CODEC_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace speakermem::storage {

// Replaces `out` with the encoding of `v`.
void EncodeVector(const std::vector<float>& v, std::string* out);

// Decodes either form into `v`; DataLoss when the bytes are not one.
absl::Status DecodeVector(absl::string_view bytes, std::vector<float>* v);

}  // namespace speakermem::storage

#endif  // SPEAKERMEM_STORAGE_VECTOR_CODEC_H_
