#include "priority.h"

#include <exception>
#include <thread>

#if defined(__linux__)
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace sable {

void run_at_background_priority(const std::function<void()>& fn) {
  std::exception_ptr error;
  std::thread worker([&] {
#if defined(__linux__)
    // Per-thread on Linux: PRIO_PROCESS with a thread id sets that thread's nice value.
    setpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid)), 10);
#endif
    try {
      fn();
    } catch (...) {
      error = std::current_exception();
    }
  });
  worker.join();
  if (error) std::rethrow_exception(error);
}

}  // namespace sable
