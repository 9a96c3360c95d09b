// LatencyHistogram: a log-linear, HDR-style histogram of nanosecond values. Each power of two is
// split into 128 linear sub-buckets, so a reported value (the middle of its bucket) is within
// 0.4% of every value recorded in that bucket, from 1 ns to about 73 minutes. One per command
// per thread; merged after the run (and across machines by `shardbench merge`).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace sp::bench {

class LatencyHistogram {
 public:
  static constexpr int kSubBucketBits = 7;
  static constexpr uint64_t kSubBuckets = 1ull << kSubBucketBits;  // 128
  static constexpr int kMaxExponent = 42;  // values from 2^42 ns (~73 min) on share the top bucket
  static constexpr size_t kBucketCount = (kMaxExponent - kSubBucketBits + 2) * kSubBuckets;

  LatencyHistogram();

  void record(uint64_t value) {
    counts_[indexOf(value)]++;
    count_++;
    sum_ += value;
    if (value < min_) {
      min_ = value;
    }
    if (value > max_) {
      max_ = value;
    }
  }

  void merge(const LatencyHistogram& other);
  void reset();

  // Adds `count` values in bucket `index` (used when loading a saved histogram). min/max/sum are
  // restored separately with restoreExtremes. False when the index is out of range.
  bool addToBucket(size_t index, uint64_t count);
  void restoreExtremes(uint64_t min, uint64_t max, uint64_t sum);

  uint64_t count() const { return count_; }
  uint64_t min() const { return count_ ? min_ : 0; }
  uint64_t max() const { return max_; }
  uint64_t sum() const { return sum_; }
  double mean() const { return count_ ? static_cast<double>(sum_) / count_ : 0.0; }

  // The value at or below which `percent` of the values lie (rank ceil(p/100 * count), at least
  // 1), reported as the middle of its bucket and clamped to [min, max]; the first and last ranks
  // are the exact min and max. 0 when empty.
  uint64_t percentile(double percent) const;

  const std::vector<uint64_t>& buckets() const { return counts_; }

  static size_t indexOf(uint64_t value) {
    if (value < kSubBuckets) {
      return static_cast<size_t>(value);
    }
    int exponent = 63 - __builtin_clzll(value);
    if (exponent > kMaxExponent) {
      return kBucketCount - 1;
    }
    const int shift = exponent - kSubBucketBits;
    return static_cast<size_t>(exponent - kSubBucketBits + 1) * kSubBuckets +
           static_cast<size_t>((value >> shift) - kSubBuckets);
  }
  static uint64_t bucketLow(size_t index);    // smallest value in the bucket
  static uint64_t bucketWidth(size_t index);  // number of values in the bucket
  static uint64_t bucketMiddle(size_t index) {
    return bucketLow(index) + (bucketWidth(index) - 1) / 2;
  }

 private:
  std::vector<uint64_t> counts_;
  uint64_t count_ = 0;
  uint64_t sum_ = 0;
  uint64_t min_ = UINT64_MAX;
  uint64_t max_ = 0;
};

}  // namespace sp::bench
