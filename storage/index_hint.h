// Memtable insert hints for the index column family (RocksDB's
// memtable_insert_with_hint_prefix_extractor): the prefix of a key up to
// and including the NUL that ends its variable part (a session), a
// speaker's 4-byte ordinal, or the kind byte of message-id keys. Each
// speaker's and session's keys arrive in seq order, so with one hint per
// prefix their skiplist inserts are nearly sequential instead of a full
// search each (perf showed memtable key comparisons dominating ingest).
#ifndef SPEAKERMEM_STORAGE_INDEX_HINT_H_
#define SPEAKERMEM_STORAGE_INDEX_HINT_H_

#include <memory>

namespace rocksdb {
class SliceTransform;
}

namespace speakermem::storage {

std::shared_ptr<const rocksdb::SliceTransform> NewIndexHintPrefix();

}  // namespace speakermem::storage

#endif  // SPEAKERMEM_STORAGE_INDEX_HINT_H_
