// Background work (index builds, compaction, snapshot writes, ingestion's embeddings) should take
// the CPU only when the foreground (searches, query embeddings, the HTTP thread) leaves it. On
// Linux it runs on threads at a lower scheduling priority (nice +10), and the threads they spawn
// inherit it; the foreground's threads (the libuv pool's, reused for other work) keep their
// priority, since an unprivileged process cannot raise one back.
#pragma once
#include <functional>

namespace sable {

// Lowers the calling thread to background priority for good (a thread that only does background
// work: an ingestion parser's, a bulk load decoder's).
void lower_this_thread_priority();

// Runs fn at background priority and waits for it: on this thread when it is a background
// thread already, else on a fresh one; rethrows its exception.
void run_at_background_priority(const std::function<void()>& fn);

// Queues job for the background threads: a fixed set (kBackgroundThreads), so background work
// never waits in the libuv pool's queue ahead of searches, and no more of it runs at once than
// the libuv pool used to run. Jobs start in the order posted; a job must not wait for a later one.
constexpr unsigned kBackgroundThreads = 4;
void post_background(std::function<void()> job);

}  // namespace sable
