// FdLifecycleGuard: orders, for ThreadSanitizer, the creation and closing of descriptors by the
// client threads of different runs in one process (scenario and matrix points run several at once).
//
// libuv closes descriptors with syscall(SYS_close), which TSAN does not intercept, while it does
// see socket(), pipe2(), eventfd() and epoll_create1() as writes to the descriptor number. When one
// run's thread closes fd N and another run's thread then gets N from socket() with nothing ordering
// the two threads, TSAN reports a data race on "file descriptor N" although the kernel ordered
// them. Holding one process-wide lock around every place where a BenchThread's loop creates or
// closes descriptors gives TSAN that order. Only in TSAN builds: elsewhere the guard is empty.
#pragma once

#if defined(__SANITIZE_THREAD__)
#define SP_BENCH_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define SP_BENCH_TSAN 1
#endif
#endif

#ifdef SP_BENCH_TSAN
#include <mutex>
#endif

namespace sp::bench {

// [[maybe_unused]]: outside TSAN builds a guard is an empty object that only marks the place.
class [[maybe_unused]] FdLifecycleGuard {
 public:
  FdLifecycleGuard() = default;
  FdLifecycleGuard(const FdLifecycleGuard&) = delete;
  FdLifecycleGuard& operator=(const FdLifecycleGuard&) = delete;

#ifdef SP_BENCH_TSAN
 private:
  static std::mutex& mutex() {
    static std::mutex mu;
    return mu;
  }
  std::lock_guard<std::mutex> lock_{mutex()};
#endif
};

}  // namespace sp::bench
