#include "common/allocator.h"

#include <dlfcn.h>
#include <malloc.h>

namespace speakermem {
namespace {

// Looked up, not linked: the same code runs whichever allocator the build
// or the environment (LD_PRELOAD) put in front of malloc.
void* Symbol(const char* name) { return dlsym(RTLD_DEFAULT, name); }

}  // namespace

const char* AllocatorName() {
  if (Symbol("MallocExtension_ReleaseFreeMemory") != nullptr) return "tcmalloc";
  if (Symbol("mallctl") != nullptr) return "jemalloc";
  return "glibc";
}

void ReleaseFreeMemory() {
  if (auto* release = reinterpret_cast<void (*)()>(Symbol("MallocExtension_ReleaseFreeMemory"))) {
    release();
    return;
  }
  (void)malloc_trim(0);
}

}  // namespace speakermem
