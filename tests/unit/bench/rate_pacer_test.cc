// --rate schedule: even spacing, round-robin over connections, totals over a simulated second.
#include "rate_pacer.h"

#include <gtest/gtest.h>

#include <cmath>

namespace sp::bench {
namespace {

constexpr uint64_t kStart = 1000000000ull;

TEST(RatePacerTest, DisabledByDefault) {
  RatePacer p;
  EXPECT_FALSE(p.enabled());
  EXPECT_TRUE(RatePacer(1000, 4, kStart).enabled());
}

TEST(RatePacerTest, SlotsAreEvenlySpaced) {
  RatePacer p(1000, 1, kStart);  // one request per millisecond
  EXPECT_DOUBLE_EQ(p.periodNs(), 1e6);
  EXPECT_EQ(p.slotTime(0), kStart);
  EXPECT_EQ(p.slotTime(1), kStart + 1000000);
  EXPECT_EQ(p.slotsDue(kStart - 1), 0u);
  EXPECT_EQ(p.slotsDue(kStart), 1u);
  EXPECT_EQ(p.slotsDue(kStart + 999999), 1u);
  EXPECT_EQ(p.slotsDue(kStart + 1000000), 2u);
  EXPECT_EQ(p.slotsDue(kStart + 1000000000), 1001u);
}

TEST(RatePacerTest, ConnectionsTakeSlotsRoundRobin) {
  RatePacer p(1000, 4, kStart);
  // Connection c sends its i-th request at slot c + 4i.
  EXPECT_EQ(p.intendedTime(0, 0), kStart);
  EXPECT_EQ(p.intendedTime(1, 0), kStart + 1000000);
  EXPECT_EQ(p.intendedTime(3, 0), kStart + 3000000);
  EXPECT_EQ(p.intendedTime(0, 1), kStart + 4000000);
  EXPECT_EQ(p.intendedTime(2, 5), kStart + 22000000);
  // Due counts agree with the intended times.
  for (uint32_t c = 0; c < 4; ++c) {
    for (uint64_t i = 0; i < 50; ++i) {
      const uint64_t t = p.intendedTime(c, i);
      EXPECT_EQ(p.dueCount(c, t), i + 1) << c << "/" << i;
      EXPECT_EQ(p.dueCount(c, t - 1), i) << c << "/" << i;
    }
  }
}

// Over one simulated second at 12345 requests/s on 7 connections, the connections together have
// exactly the slots of that second due, spread evenly (each within one of the others).
TEST(RatePacerTest, TotalOverASecondMatchesTheRate) {
  RatePacer p(12345, 7, kStart);
  const uint64_t end = kStart + 1000000000ull - 1;
  uint64_t total = 0;
  uint64_t lo = UINT64_MAX;
  uint64_t hi = 0;
  for (uint32_t c = 0; c < 7; ++c) {
    const uint64_t n = p.dueCount(c, end);
    total += n;
    lo = std::min(lo, n);
    hi = std::max(hi, n);
  }
  EXPECT_EQ(total, p.slotsDue(end));
  EXPECT_NEAR(static_cast<double>(total), 12345, 1);
  EXPECT_LE(hi - lo, 1u);
}

TEST(RatePacerTest, NonIntegerPeriods) {
  RatePacer p(3, 1, kStart);  // 333333333.33 ns apart, truncated to whole nanoseconds
  EXPECT_EQ(p.slotTime(1), kStart + 333333333);
  EXPECT_EQ(p.slotsDue(kStart + 333333332), 1u);
  EXPECT_EQ(p.slotsDue(kStart + 333333333), 2u);
  EXPECT_EQ(p.slotsDue(kStart + 1000000000), 4u);
  // slotsDue is consistent with slotTime at every boundary.
  RatePacer q(7777, 3, kStart);
  for (uint64_t k = 0; k < 5000; ++k) {
    EXPECT_EQ(q.slotsDue(q.slotTime(k)), k + 1);
    EXPECT_EQ(q.slotsDue(q.slotTime(k) - 1), k);
  }
}

}  // namespace
}  // namespace sp::bench
