// StallWatch: a connection is stalled only after a whole limit with no byte moved.
#include "backend/stall_watch.h"

#include <gtest/gtest.h>

namespace sp::backend {
namespace {

constexpr size_t kUnknown = StallWatch::kUnknown;

TEST(StallWatchTest, NothingMovingStallsAfterTheLimit) {
  StallWatch w;
  w.restart(1000, 0);
  EXPECT_EQ(w.check(1400, 0, kUnknown, 1000), 600u);  // checked early: wait for the rest
  EXPECT_EQ(w.check(1999, 0, kUnknown, 1000), 1u);
  EXPECT_EQ(w.check(2000, 0, kUnknown, 1000), 0u);
}

TEST(StallWatchTest, RepliesAndCompletedWritesRestartTheClock) {
  StallWatch w;
  w.restart(0, 0);
  w.progress(900);  // a reply (or part of one) was read
  EXPECT_EQ(w.check(1000, 0, kUnknown, 1000), 900u);
  w.progress(1800);  // a write completed
  EXPECT_EQ(w.check(2700, 0, kUnknown, 1000), 100u);
  EXPECT_EQ(w.check(2800, 0, kUnknown, 1000), 0u);
}

TEST(StallWatchTest, IdleIsTheTimeSinceTheLastByteMoved) {
  StallWatch w;
  w.restart(1000, 0);
  EXPECT_EQ(w.idleMs(1000), 0u);
  EXPECT_EQ(w.idleMs(1099), 99u);
  w.progress(1150);
  EXPECT_EQ(w.idleMs(1200), 50u);
  EXPECT_EQ(w.idleMs(1100), 0u);  // a clock read before the last progress is not negative
}

TEST(StallWatchTest, AShrinkingWriteQueueIsProgress) {
  // A 200 MB request going out: the queue shrinks between checks, so it is never a stall,
  // however long the whole write takes.
  StallWatch w;
  w.restart(0, 200u << 20);
  uint64_t now = 0;
  size_t queue = 200u << 20;
  for (int i = 0; i < 10; ++i) {
    now += 1000;
    queue -= 10u << 20;
    EXPECT_EQ(w.check(now, queue, kUnknown, 1000), 1000u) << i;
  }
  // The shard stops reading: the queue stays put, and one limit later it is a stall.
  EXPECT_EQ(w.check(now + 500, queue, kUnknown, 1000), 500u);
  EXPECT_EQ(w.check(now + 1000, queue, kUnknown, 1000), 0u);
}

TEST(StallWatchTest, AWriteHandedOverSetsTheBaseline) {
  // Requests queued (nothing in libuv's queue yet), then a 200 MB write handed over with most of
  // it left queued: the queue shrinking from there is progress, from the first check on.
  StallWatch w;
  w.restart(0, 0);
  w.restart(10, 190u << 20);
  EXPECT_EQ(w.check(1010, 180u << 20, kUnknown, 1000), 1000u);
  EXPECT_EQ(w.check(2010, 180u << 20, kUnknown, 1000), 0u);
}

TEST(StallWatchTest, AGrowingWriteQueueIsNotProgress) {
  // More requests queued behind a stuck one do not hide the stall.
  StallWatch w;
  w.restart(0, 100);
  EXPECT_EQ(w.check(600, 5000, kUnknown, 1000), 400u);
  EXPECT_EQ(w.check(1000, 9000, kUnknown, 1000), 0u);
}

TEST(StallWatchTest, TheLimitIsTheCallersAtEachCheck) {
  // A slow command outstanding raises the limit (backend.slow_timeout_ms); once it is answered
  // the ordinary one applies again.
  StallWatch w;
  w.restart(0, 0);
  EXPECT_EQ(w.check(1500, 0, kUnknown, 60000), 58500u);
  EXPECT_EQ(w.check(1500, 0, kUnknown, 1000), 0u);
}

TEST(StallWatchTest, AShrinkingKernelQueueIsProgress) {
  // libuv has handed the last bytes of a large request to the kernel (its write completed), and
  // the shard is still reading the megabytes the socket buffers hold: progress, until the kernel's
  // queue stops shrinking for a whole limit.
  StallWatch w;
  w.restart(0, 0, 6u << 20);
  EXPECT_EQ(w.check(1000, 0, 4u << 20, 1000), 1000u);
  EXPECT_EQ(w.check(2000, 0, 1u << 20, 1000), 1000u);
  EXPECT_EQ(w.check(3000, 0, 1u << 20, 1000), 0u);
  // Not read (kUnknown) is never progress, on either side of the comparison.
  w.restart(0, 0);
  EXPECT_EQ(w.check(1000, 0, 1u << 20, 1000), 0u);
  EXPECT_EQ(w.check(2000, 0, kUnknown, 1000), 0u);
}

TEST(StallWatchTest, AZeroLimitIsAStallAtTheFirstCheck) {
  StallWatch w;
  w.restart(500, 0);
  EXPECT_EQ(w.check(500, 0, kUnknown, 0), 0u);
}

TEST(StallWatchTest, AClockBehindTheLastByteWaitsTheWholeLimit) {
  // A check whose clock reads earlier than the last progress (a cached loop time) counts no idle
  // time, rather than wrapping around into a stall.
  StallWatch w;
  w.restart(0, 0);
  w.progress(2000);
  EXPECT_EQ(w.check(1500, 0, kUnknown, 1000), 1000u);
  EXPECT_EQ(w.check(3000, 0, kUnknown, 1000), 0u);
}

TEST(StallWatchTest, AGrowingKernelQueueIsNotProgress) {
  StallWatch w;
  w.restart(0, 0, 1u << 20);
  EXPECT_EQ(w.check(600, 0, 2u << 20, 1000), 400u);
  EXPECT_EQ(w.check(1000, 0, 3u << 20, 1000), 0u);
}

TEST(StallWatchTest, EachCheckSetsTheQueueBaselineForTheNext) {
  // The write queue shrank once, then stood still: the limit runs from the check that saw it
  // shrink, not from the restart.
  StallWatch w;
  w.restart(0, 1000);
  EXPECT_EQ(w.check(800, 600, kUnknown, 1000), 1000u);
  EXPECT_EQ(w.check(1500, 600, kUnknown, 1000), 300u);
  EXPECT_EQ(w.check(1800, 600, kUnknown, 1000), 0u);
}

TEST(StallWatchTest, ProgressLeavesTheQueueBaselinesAlone) {
  // A reply read while a large write waits: the clock restarts, and the queue shrinking after it
  // still counts against the size seen at the restart.
  StallWatch w;
  w.restart(0, 5000, 9000);
  w.progress(400);
  EXPECT_EQ(w.check(1300, 5000, 9000, 1000), 100u);
  EXPECT_EQ(w.check(1400, 5000, 8999, 1000), 1000u);  // the kernel took a byte
  EXPECT_EQ(w.check(2400, 5000, 8999, 1000), 0u);
}

}  // namespace
}  // namespace sp::backend
