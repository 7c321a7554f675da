// A shared mutex whose waiting writer goes before readers that arrive after it. A segment's
// readers are searches, issued continuously by the search threads; its writers are appends and
// removals on the HTTP thread. std::shared_mutex (glibc's default rwlock) lets new readers in
// while a writer waits, so a removal could wait until the search queue ran dry, and the event
// loop with it; here it waits only for the searches already inside. No reader may take it twice
// on one thread (a writer waiting between the two would deadlock it): the segment never does.
#pragma once

#if defined(__linux__) && defined(__GLIBC__)
#include <pthread.h>

#include <system_error>

namespace sable {

class WriterFirstMutex {
 public:
  WriterFirstMutex() {
    pthread_rwlockattr_t attr;
    pthread_rwlockattr_init(&attr);
    pthread_rwlockattr_setkind_np(&attr, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
    const int rc = pthread_rwlock_init(&lock_, &attr);
    pthread_rwlockattr_destroy(&attr);
    if (rc != 0) throw std::system_error(rc, std::generic_category(), "pthread_rwlock_init");
  }
  ~WriterFirstMutex() { pthread_rwlock_destroy(&lock_); }
  WriterFirstMutex(const WriterFirstMutex&) = delete;
  WriterFirstMutex& operator=(const WriterFirstMutex&) = delete;

  void lock() { pthread_rwlock_wrlock(&lock_); }
  bool try_lock() { return pthread_rwlock_trywrlock(&lock_) == 0; }
  void unlock() { pthread_rwlock_unlock(&lock_); }
  void lock_shared() { pthread_rwlock_rdlock(&lock_); }
  bool try_lock_shared() { return pthread_rwlock_tryrdlock(&lock_) == 0; }
  void unlock_shared() { pthread_rwlock_unlock(&lock_); }

 private:
  pthread_rwlock_t lock_;
};

}  // namespace sable
#else
#include <shared_mutex>

namespace sable {
// Elsewhere the standard shared mutex (its policy is the platform's).
using WriterFirstMutex = std::shared_mutex;
}  // namespace sable
#endif
