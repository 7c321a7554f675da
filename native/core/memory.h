// Returning freed heap memory to the operating system.
#pragma once

namespace sable {

// Index builds free hundreds of MB of scratch (training samples, assignment buffers) that glibc
// keeps in its arenas; a sealed segment then looks that much larger in RSS than it is. Hands the
// free pages back (malloc_trim on glibc, nothing elsewhere).
void release_free_memory();

}  // namespace sable
