#include "priority.h"

#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <thread>

#if defined(__linux__)
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace sable {

namespace {

thread_local bool background_thread = false;

void lower_this_thread() {
#if defined(__linux__)
  // Per-thread on Linux: PRIO_PROCESS with a thread id sets that thread's nice value.
  setpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid)), 10);
#endif
  background_thread = true;
}

class BackgroundThreads {
 public:
  void post(std::function<void()> job) {
    std::lock_guard lock(mu_);
    if (threads_ == 0) start();
    jobs_.push_back(std::move(job));
    ready_.notify_one();
  }

 private:
  // Started on first use and never joined: they live as long as the process (a job in flight at
  // exit ends with it, as a libuv pool task would).
  void start() {
    for (; threads_ < kBackgroundThreads; ++threads_) std::thread([this] { loop(); }).detach();
  }

  void loop() {
    lower_this_thread();
    for (;;) {
      std::function<void()> job;
      {
        std::unique_lock lock(mu_);
        ready_.wait(lock, [&] { return !jobs_.empty(); });
        job = std::move(jobs_.front());
        jobs_.pop_front();
      }
      job();  // jobs catch their own exceptions (the binding's tasks do)
    }
  }

  std::mutex mu_;
  std::condition_variable ready_;
  std::deque<std::function<void()>> jobs_;
  unsigned threads_ = 0;
};

}  // namespace

void lower_this_thread_priority() { lower_this_thread(); }

void run_at_background_priority(const std::function<void()>& fn) {
  if (background_thread) return fn();
  std::exception_ptr error;
  std::thread worker([&] {
    lower_this_thread();
    try {
      fn();
    } catch (...) {
      error = std::current_exception();
    }
  });
  worker.join();
  if (error) std::rethrow_exception(error);
}

void post_background(std::function<void()> job) {
  // Leaked on purpose: detached threads may still use it while static destructors run at exit.
  static BackgroundThreads* const threads = new BackgroundThreads();
  threads->post(std::move(job));
}

}  // namespace sable
