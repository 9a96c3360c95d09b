// Counter: a statistic written by one thread (its worker) and read by any (INFO, metrics scrape).
// Relaxed load+store compiles to a plain add on x86: no lock prefix on the request path.
#pragma once

#include <atomic>
#include <cstdint>

namespace sp {

class Counter {
 public:
  void add(uint64_t n = 1) {
    v_.store(v_.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
  }
  void sub(uint64_t n = 1) {
    v_.store(v_.load(std::memory_order_relaxed) - n, std::memory_order_relaxed);
  }
  void set(uint64_t n) { v_.store(n, std::memory_order_relaxed); }
  uint64_t get() const { return v_.load(std::memory_order_relaxed); }

 private:
  std::atomic<uint64_t> v_{0};
};

}  // namespace sp
