// Background work (the Writer, embeddings, RocksDB compaction) runs at a
// lower CPU priority than request handling, so that on a small machine a
// query is not queued behind derivation it does not need.
#ifndef SPEAKERMEM_COMMON_THREAD_PRIORITY_H_
#define SPEAKERMEM_COMMON_THREAD_PRIORITY_H_

namespace speakermem {

// Lowers the calling thread's scheduling priority (Linux: its nice value
// becomes `nice`, 0-19). Best effort: failures are ignored.
void LowerThisThreadPriority(int nice = 10);

}  // namespace speakermem

#endif  // SPEAKERMEM_COMMON_THREAD_PRIORITY_H_
