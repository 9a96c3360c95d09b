// HotCounter: a statistic updated on the request path. With SHARDPROXY_METRICS=1 it is an
// sp::Counter (one writer, relaxed load+store: a plain add, no lock prefix); with
// SHARDPROXY_METRICS=0 every update compiles to nothing and reads return 0, which is what
// tools/bench-metrics.sh compares against. Rare events (connects, closes, errors) use sp::Counter
// directly and are kept in both builds.
#pragma once

#include <cstdint>

#include "core/counter.h"

#ifndef SHARDPROXY_METRICS
#define SHARDPROXY_METRICS 1
#endif

namespace sp::metrics {

inline constexpr bool kMetricsEnabled = SHARDPROXY_METRICS != 0;

#if SHARDPROXY_METRICS
using HotCounter = Counter;
#else
class HotCounter {
 public:
  void add(uint64_t = 1) {}
  void sub(uint64_t = 1) {}
  void set(uint64_t) {}
  uint64_t get() const { return 0; }
};
#endif

}  // namespace sp::metrics
