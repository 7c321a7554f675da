// Index builds are background work: they should take the CPU only when the foreground (searches,
// a bulk load's decoding, the HTTP thread) leaves it. On Linux a build runs on its own thread
// at a lower scheduling priority (nice +10), and the threads it spawns inherit it; the caller's
// thread (often a libuv pool thread, reused for other work) keeps its priority, since an
// unprivileged process cannot raise one back.
#pragma once
#include <functional>

namespace sable {

// Runs fn on a fresh thread at background priority and waits for it; rethrows its exception.
void run_at_background_priority(const std::function<void()>& fn);

}  // namespace sable
