// The memory allocator the process runs on. The engine's programs
// (speakermemd, speakermem-eval, the benchmarks and the tests) link
// gperftools' tcmalloc (CMake option SPEAKERMEM_MALLOC, default tcmalloc):
// ingest and query allocate many small, short-lived objects from several
// threads, where glibc's per-thread arenas trim and refault their pages on
// every request (docs/benchmarks.md has the same-run comparison). Sanitizer
// and fuzzing builds keep glibc's. These calls report and steer whichever
// allocator the process actually got, an LD_PRELOADed one included.
#ifndef SPEAKERMEM_COMMON_ALLOCATOR_H_
#define SPEAKERMEM_COMMON_ALLOCATOR_H_

namespace speakermem {

// "tcmalloc", "jemalloc" or "glibc": the allocator that serves malloc here.
const char* AllocatorName();

// Returns free memory the allocator holds to the operating system where it
// can (tcmalloc's page heap, glibc's arenas); best effort.
void ReleaseFreeMemory();

}  // namespace speakermem

#endif  // SPEAKERMEM_COMMON_ALLOCATOR_H_
