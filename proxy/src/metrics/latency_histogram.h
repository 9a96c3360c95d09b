// LatencyHistogram: a duration histogram with fixed buckets, written by one worker and summed by
// the scrape. Each observation is one plain counter increment (the bucket it falls in) plus the
// sum; the cumulative counts Prometheus wants are built at scrape time. Compiled out with
// SHARDPROXY_METRICS=0.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "metrics/hot_counter.h"

namespace sp::metrics {

// Upper bounds in microseconds (Prometheus `le`, exported in seconds): from 25 us, what a request
// through the proxy on loopback costs, to 10 s.
inline constexpr std::array<uint64_t, 18> kLatencyBoundsUs = {
    25,    50,    100,    250,    500,    1000,    2500,    5000,    10000,
    25000, 50000, 100000, 250000, 500000, 1000000, 2500000, 5000000, 10000000};
inline constexpr size_t kLatencyBuckets = kLatencyBoundsUs.size() + 1;  // the last is +Inf

namespace detail {

// For each bit width w of a duration (0..64), the first bucket whose bound is >= 2^(w-1), the
// smallest duration of that width: the bucket search starts there and moves at most two steps
// (bounds grow by 2x to 2.5x), so observing costs the same at 30 us and at 3 s.
constexpr std::array<uint8_t, 65> bucketStarts() {
  std::array<uint8_t, 65> out{};
  for (size_t w = 0; w <= 64; ++w) {
    const uint64_t smallest = w == 0 ? 0 : uint64_t{1} << (w - 1);
    size_t i = 0;
    while (i < kLatencyBoundsUs.size() && smallest > kLatencyBoundsUs[i]) {
      ++i;
    }
    out[w] = static_cast<uint8_t>(i);
  }
  return out;
}

inline constexpr std::array<uint8_t, 65> kBucketStart = bucketStarts();

}  // namespace detail

// Bucket of a duration: the first whose bound is >= micros (Prometheus buckets are `le`).
inline size_t latencyBucket(uint64_t micros) {
  const int width = micros == 0 ? 0 : 64 - __builtin_clzll(micros);
  size_t i = detail::kBucketStart[static_cast<size_t>(width)];
  while (i < kLatencyBoundsUs.size() && micros > kLatencyBoundsUs[i]) {
    ++i;
  }
  return i;
}

// What a scrape adds up over workers: per-bucket (not cumulative) counts and the sum.
struct HistogramTotals {
  std::array<uint64_t, kLatencyBuckets> buckets{};
  uint64_t sum_us = 0;

  uint64_t count() const {
    uint64_t n = 0;
    for (uint64_t b : buckets) {
      n += b;
    }
    return n;
  }
};

class LatencyHistogram {
 public:
  void observe(uint64_t micros) { observe(micros, latencyBucket(micros)); }
  // When the caller already knows the bucket (latencyBucket(micros)).
  void observe(uint64_t micros, size_t bucket) {
    if constexpr (kMetricsEnabled) {
      buckets_[bucket].add();
      sum_us_.add(micros);
    }
  }

  // Any thread: adds this histogram's counts to *totals.
  void addTo(HistogramTotals* totals) const {
    for (size_t i = 0; i < kLatencyBuckets; ++i) {
      totals->buckets[i] += buckets_[i].get();
    }
    totals->sum_us += sum_us_.get();
  }

 private:
  std::array<HotCounter, kLatencyBuckets> buckets_;
  HotCounter sum_us_;
};

}  // namespace sp::metrics
