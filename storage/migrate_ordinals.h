// Format 1 -> 2 of the store (internal to storage/): speaker names leave the
// keys. Format 1 keyed the roster by name (meta `<prefix>r<speaker_id>`)
// and the by-speaker index by name (index `<prefix>s<speaker_id>\0<seq>`);
// format 2 keys both by a per-channel ordinal (storage/keys.h).
#ifndef SPEAKERMEM_STORAGE_MIGRATE_ORDINALS_H_
#define SPEAKERMEM_STORAGE_MIGRATE_ORDINALS_H_

#include <functional>
#include <string>

#include "rocksdb/db.h"

namespace speakermem::storage {

// Rewrites every format-1 roster and speaker-index key of every channel as
// its format-2 key, then compacts both column families so that the old keys
// (names) leave the files. Safe to run again after a crash part-way: each
// channel's roster moves in one batch, and a speaker keeps the ordinal its
// new roster entry gives it. `progress` (may be empty) is told what is done.
rocksdb::Status MigrateSpeakerOrdinals(rocksdb::DB* db, rocksdb::ColumnFamilyHandle* meta,
                                       rocksdb::ColumnFamilyHandle* index,
                                       const std::function<void(const std::string&)>& progress);

}  // namespace speakermem::storage

#endif  // SPEAKERMEM_STORAGE_MIGRATE_ORDINALS_H_
