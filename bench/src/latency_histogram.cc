// Log-linear histogram: bucket arithmetic, merge and percentile queries.
#include "latency_histogram.h"

#include <algorithm>
#include <cmath>

namespace sp::bench {

LatencyHistogram::LatencyHistogram() : counts_(kBucketCount, 0) {}

void LatencyHistogram::merge(const LatencyHistogram& other) {
  for (size_t i = 0; i < kBucketCount; ++i) {
    counts_[i] += other.counts_[i];
  }
  count_ += other.count_;
  sum_ += other.sum_;
  min_ = std::min(min_, other.min_);
  max_ = std::max(max_, other.max_);
}

void LatencyHistogram::reset() {
  std::fill(counts_.begin(), counts_.end(), 0);
  count_ = 0;
  sum_ = 0;
  min_ = UINT64_MAX;
  max_ = 0;
}

bool LatencyHistogram::addToBucket(size_t index, uint64_t count) {
  if (index >= kBucketCount) {
    return false;
  }
  counts_[index] += count;
  count_ += count;
  const uint64_t low = bucketLow(index);
  const uint64_t high = low + bucketWidth(index) - 1;
  if (count > 0) {
    min_ = std::min(min_, low);
    max_ = std::max(max_, high);
    sum_ += count * bucketMiddle(index);
  }
  return true;
}

void LatencyHistogram::restoreExtremes(uint64_t min, uint64_t max, uint64_t sum) {
  if (count_ == 0) {
    return;
  }
  min_ = min;
  max_ = max;
  sum_ = sum;
}

uint64_t LatencyHistogram::bucketLow(size_t index) {
  if (index < kSubBuckets) {
    return index;
  }
  const size_t octave = index / kSubBuckets;  // 1 -> exponent 7
  const uint64_t sub = index % kSubBuckets;
  const int shift = static_cast<int>(octave) - 1;
  return (kSubBuckets + sub) << shift;
}

uint64_t LatencyHistogram::bucketWidth(size_t index) {
  if (index < kSubBuckets) {
    return 1;
  }
  return 1ull << (index / kSubBuckets - 1);
}

uint64_t LatencyHistogram::percentile(double percent) const {
  if (count_ == 0) {
    return 0;
  }
  percent = std::clamp(percent, 0.0, 100.0);
  // p * count first: 99.9 * 1000 / 100 is exactly 999, while 99.9 / 100 * 1000 rounds above it.
  auto rank = static_cast<uint64_t>(std::ceil(percent * static_cast<double>(count_) / 100.0));
  rank = std::clamp<uint64_t>(rank, 1, count_);
  if (rank == count_) {
    return max_;  // the largest value is known exactly
  }
  if (rank == 1) {
    return min_;
  }
  uint64_t seen = 0;
  for (size_t i = 0; i < kBucketCount; ++i) {
    seen += counts_[i];
    if (seen >= rank) {
      return std::clamp(bucketMiddle(i), min_, max_);
    }
  }
  return max_;
}

}  // namespace sp::bench
