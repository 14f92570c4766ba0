#include "common/thread_priority.h"

#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace speakermem {

void MakeThisThreadBackground() {
#ifdef __linux__
  // SCHED_IDLE: the lowest weight the kernel has, and a normal thread that
  // wakes preempts this one at once (SCHED_BATCH at nice 19 made a waking
  // request thread wait for its turn: bulk loads ran a third slower).
  sched_param none{};
  (void)sched_setscheduler(0, SCHED_IDLE, &none);
  // Nice 19 too, for kernels that refuse SCHED_IDLE. On Linux, PRIO_PROCESS
  // with a thread id sets that thread's nice value.
  const auto tid = static_cast<id_t>(syscall(SYS_gettid));
  (void)setpriority(PRIO_PROCESS, tid, 19);
#endif
}

}  // namespace speakermem
