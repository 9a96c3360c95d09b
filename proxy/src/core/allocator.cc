// glibc malloc tuning: a fixed mmap threshold and malloc_trim.
#include "core/allocator.h"

#include <malloc.h>

namespace sp {

void configureAllocator() { mallopt(M_MMAP_THRESHOLD, static_cast<int>(kMmapThresholdBytes)); }

void returnFreeMemory() { malloc_trim(0); }

}  // namespace sp
