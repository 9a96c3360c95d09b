// Tests the fixed buckets of metrics/latency_histogram.h: bucket edges are inclusive (`le`),
// observations land in exactly one bucket, and totals add up over several histograms.
#include "metrics/latency_histogram.h"

#include <gtest/gtest.h>

namespace sp::metrics {
namespace {

TEST(LatencyHistogramTest, BoundsAreIncreasing) {
  for (size_t i = 1; i < kLatencyBoundsUs.size(); ++i) {
    EXPECT_LT(kLatencyBoundsUs[i - 1], kLatencyBoundsUs[i]);
  }
}

TEST(LatencyHistogramTest, BucketEdgesAreInclusive) {
  EXPECT_EQ(latencyBucket(0), 0u);
  EXPECT_EQ(latencyBucket(25), 0u);
  EXPECT_EQ(latencyBucket(26), 1u);
  EXPECT_EQ(latencyBucket(50), 1u);
  EXPECT_EQ(latencyBucket(1000), 5u);
  EXPECT_EQ(latencyBucket(1001), 6u);
  EXPECT_EQ(latencyBucket(10000000), kLatencyBoundsUs.size() - 1);
  EXPECT_EQ(latencyBucket(10000001), kLatencyBoundsUs.size());  // +Inf
  EXPECT_EQ(latencyBucket(UINT64_MAX), kLatencyBoundsUs.size());
  for (size_t i = 0; i < kLatencyBoundsUs.size(); ++i) {
    EXPECT_EQ(latencyBucket(kLatencyBoundsUs[i]), i);
    EXPECT_EQ(latencyBucket(kLatencyBoundsUs[i] + 1), i + 1);
  }
}

TEST(LatencyHistogramTest, TotalsAddUpOverHistograms) {
  LatencyHistogram a;
  LatencyHistogram b;
  a.observe(10);
  a.observe(30);
  b.observe(30);
  b.observe(20000000);
  HistogramTotals totals;
  a.addTo(&totals);
  b.addTo(&totals);
  if (!kMetricsEnabled) {
    EXPECT_EQ(totals.count(), 0u);
    return;
  }
  EXPECT_EQ(totals.count(), 4u);
  EXPECT_EQ(totals.sum_us, 10u + 30 + 30 + 20000000);
  EXPECT_EQ(totals.buckets[0], 1u);
  EXPECT_EQ(totals.buckets[1], 2u);
  EXPECT_EQ(totals.buckets[kLatencyBoundsUs.size()], 1u);
}

// The shortcut table must agree with a plain linear search for every duration.
size_t linearBucket(uint64_t micros) {
  size_t i = 0;
  while (i < kLatencyBoundsUs.size() && micros > kLatencyBoundsUs[i]) {
    ++i;
  }
  return i;
}

TEST(LatencyHistogramTest, BucketLookupMatchesALinearSearch) {
  for (uint64_t us = 0; us < 300000; ++us) {
    ASSERT_EQ(latencyBucket(us), linearBucket(us)) << us;
  }
  for (uint64_t us = 1; us != 0 && us < (uint64_t{1} << 63); us = us * 3 + 1) {
    ASSERT_EQ(latencyBucket(us), linearBucket(us)) << us;
    ASSERT_EQ(latencyBucket(us - 1), linearBucket(us - 1)) << us - 1;
  }
  for (uint64_t bound : kLatencyBoundsUs) {
    for (uint64_t us = bound - 3; us <= bound + 3; ++us) {
      ASSERT_EQ(latencyBucket(us), linearBucket(us)) << us;
    }
  }
}

}  // namespace
}  // namespace sp::metrics
