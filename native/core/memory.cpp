#include "memory.h"

// Any C library header defines __GLIBC__ (through <features.h>); test it only after one.
#include <cstdlib>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace sable {

void release_free_memory() {
#if defined(__GLIBC__)
  malloc_trim(0);
#endif
}

void fix_mmap_threshold() {
#if defined(__GLIBC__)
  mallopt(M_MMAP_THRESHOLD, 1 << 20);
#endif
}

}  // namespace sable
