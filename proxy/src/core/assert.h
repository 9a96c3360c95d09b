// SP_ASSERT: broken program invariants crash loudly with the failing expression and location.
#pragma once

#include <cstdio>
#include <cstdlib>

#define SP_ASSERT(cond)                                                                    \
  do {                                                                                     \
    if (!(cond)) [[unlikely]] {                                                            \
      std::fprintf(stderr, "shardproxy: assertion failed: %s at %s:%d\n", #cond, __FILE__, \
                   __LINE__);                                                              \
      std::abort();                                                                        \
    }                                                                                      \
  } while (0)
