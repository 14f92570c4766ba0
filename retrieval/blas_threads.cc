#include "retrieval/blas_threads.h"

#include <dlfcn.h>

namespace speakermem::retrieval {
namespace {

template <typename F>
F Symbol(const char* name) {
  return reinterpret_cast<F>(dlsym(RTLD_DEFAULT, name));
}

}  // namespace

void LimitBlasThreads(int n) {
  if (auto set = Symbol<void (*)(int)>("openblas_set_num_threads")) set(n);
  if (auto set = Symbol<void (*)(int)>("bli_thread_set_num_threads")) set(n);
}

int BlasThreads() {
  if (auto get = Symbol<int (*)()>("openblas_get_num_threads")) return get();
  if (auto get = Symbol<int (*)()>("bli_thread_get_num_threads")) return get();
  return -1;
}

}  // namespace speakermem::retrieval
