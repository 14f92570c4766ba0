#include "common/thread_priority.h"

#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace speakermem {

void LowerThisThreadPriority(int nice) {
#ifdef __linux__
  // On Linux, PRIO_PROCESS with a thread id sets that thread's nice value.
  const auto tid = static_cast<id_t>(syscall(SYS_gettid));
  (void)setpriority(PRIO_PROCESS, tid, nice);
#else
  (void)nice;
#endif
}

}  // namespace speakermem
