#include "common/thread_priority.h"

#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace speakermem {

void MakeThisThreadBackground() {
#ifdef __linux__
  // SCHED_BATCH: a waking thread of this one never preempts a running one.
  sched_param none{};
  (void)sched_setscheduler(0, SCHED_BATCH, &none);
  // On Linux, PRIO_PROCESS with a thread id sets that thread's nice value.
  const auto tid = static_cast<id_t>(syscall(SYS_gettid));
  (void)setpriority(PRIO_PROCESS, tid, 19);
#endif
}

}  // namespace speakermem
