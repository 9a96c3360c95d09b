// Process-wide malloc settings and giving freed memory back to the system, so that the resident
// size comes back down after a burst of large values or of many clients (glibc malloc).
#pragma once

#include <cstddef>

namespace sp {

// Allocations of at least this many bytes get their own mapping, which free() returns to the
// system at once. glibc's default raises its threshold after every large free (up to 32 MB), after
// which big buffers come from the heap and stay resident; fixing it keeps them mapped. The
// steady state allocates nothing, so this costs the hot path nothing.
inline constexpr size_t kMmapThresholdBytes = 256 * 1024;

// At start-up, before the workers: fixes the mmap threshold (above). Safe to call more than once.
void configureAllocator();

// Returns the free pages of every malloc arena to the system (malloc_trim). Takes a while on a
// large heap: call it rarely, after large amounts were freed, never per request.
void returnFreeMemory();

}  // namespace sp
