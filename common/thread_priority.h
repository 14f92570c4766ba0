// Background work (the Writer, embeddings) yields the CPU to request
// handling: on a small machine an ingest or a query is never queued behind
// derivation it does not need. Derivation is deferred while requests keep
// the cores busy and catches up when they are quiet (its lag is exported:
// speakermem_writer_backlog_messages, speakermem_embed_pending_messages).
// RocksDB's compaction keeps normal priority (starved, level 0 piles up and
// reads slow down).
#ifndef SPEAKERMEM_COMMON_THREAD_PRIORITY_H_
#define SPEAKERMEM_COMMON_THREAD_PRIORITY_H_

namespace speakermem {

// Makes the calling thread background work (Linux: SCHED_IDLE, so a request
// thread that wakes preempts it at once, and against a busy normal thread it
// gets a fraction of a percent of a core: it is deferred, never starved).
// Best effort: failures are ignored.
void MakeThisThreadBackground();

}  // namespace speakermem

#endif  // SPEAKERMEM_COMMON_THREAD_PRIORITY_H_
