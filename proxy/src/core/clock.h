// Monotonic clock helpers in nanoseconds and microseconds.
#pragma once

#include <chrono>
#include <cstdint>

namespace sp {

inline uint64_t monoNanos() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                   std::chrono::steady_clock::now().time_since_epoch())
                                   .count());
}

inline uint64_t monoMicros() { return monoNanos() / 1000; }

}  // namespace sp
