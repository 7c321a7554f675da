// Returning freed heap memory to the operating system.
#pragma once

namespace sable {

// Index builds free hundreds of MB of scratch (training samples, assignment buffers) that glibc
// keeps in its arenas; a sealed segment then looks that much larger in RSS than it is. Hands the
// free pages back (malloc_trim on glibc, nothing elsewhere).
void release_free_memory();

// glibc raises its mmap threshold each time a large block is freed (up to 32 MB), so after the
// growing store's first reallocation every block below it comes from the brk heap, where freed
// scratch stays resident behind live blocks. A fixed threshold keeps large blocks in their own
// mappings, returned whole on free (measured: 12 MB less RSS after an MNIST build). Idempotent.
void fix_mmap_threshold();

}  // namespace sable
