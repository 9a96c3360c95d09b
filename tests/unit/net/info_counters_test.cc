// The state INFO keeps between calls: CONFIG RESETSTAT's baseline (nothing subtracted before the
// first reset, every counter less its value at the reset and never below zero, per command and
// per error code, codes back at zero dropped) and the samples the instantaneous_* rates run from
// (the oldest within about 2 s, or the latest before them; at most one sample per 100 ms).
#include "net/info_counters.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

namespace sp::net {
namespace {

InfoCounters counters(uint64_t base) {
  InfoCounters c;
  c.accepted = base + 1;
  c.rejected = base + 2;
  c.commands = base + 3;
  c.local = base + 4;
  c.split = base + 5;
  c.refused = base + 6;
  c.perr_client = base + 7;
  c.perr_backend = base + 8;
  c.out_limit = base + 9;
  c.paused = base + 10;
  c.in = base + 11;
  c.sent = base + 12;
  c.slow = base + 13;
  c.auth_failures = base + 14;
  c.errors = base + 15;
  c.reads = base + 16;
  c.writes = base + 17;
  return c;
}

TEST(InfoBaselineTest, BeforeAnyResetTheCountersAreReportedAsTheyAre) {
  InfoBaseline baseline;
  InfoCounters now = counters(100);
  now.by_code = {{"ERR", 4}};
  const InfoCounters got = baseline.since(now);
  EXPECT_EQ(got.accepted, 101u);
  EXPECT_EQ(got.writes, 117u);
  EXPECT_EQ(got.by_code, (std::map<std::string, uint64_t>{{"ERR", 4}}));
}

TEST(InfoBaselineTest, EveryCounterIsReportedLessItsValueAtTheReset) {
  InfoBaseline baseline;
  baseline.reset(counters(100));
  const InfoCounters got = baseline.since(counters(1000));
  for (uint64_t v : {got.accepted, got.rejected, got.commands, got.local, got.split, got.refused,
                     got.perr_client, got.perr_backend, got.out_limit, got.paused, got.in, got.sent,
                     got.slow, got.auth_failures, got.errors, got.reads, got.writes}) {
    EXPECT_EQ(v, 900u);
  }
}

TEST(InfoBaselineTest, ACounterBelowItsBaselineIsReportedAsZero) {
  InfoBaseline baseline;
  baseline.reset(counters(50));
  const InfoCounters got = baseline.since(counters(10));
  EXPECT_EQ(got.accepted, 0u);
  EXPECT_EQ(got.writes, 0u);
}

TEST(InfoBaselineTest, PerCommandCountersAndBucketsAreSubtractedPositionByPosition) {
  InfoBaseline baseline;
  InfoCounters base;
  base.by_command.resize(2);
  base.by_command[0].calls = 5;
  base.by_command[0].usec = 500;
  base.by_command[0].failed = 1;
  base.by_command[0].buckets[2] = 4;
  baseline.reset(base);
  InfoCounters now;
  now.by_command.resize(2);
  now.by_command[0].calls = 8;
  now.by_command[0].usec = 800;
  now.by_command[0].failed = 1;
  now.by_command[0].buckets[2] = 6;
  now.by_command[1].calls = 2;
  const InfoCounters got = baseline.since(now);
  EXPECT_EQ(got.by_command[0].calls, 3u);
  EXPECT_EQ(got.by_command[0].usec, 300u);
  EXPECT_EQ(got.by_command[0].failed, 0u);
  EXPECT_EQ(got.by_command[0].buckets[2], 2u);
  EXPECT_EQ(got.by_command[1].calls, 2u);
}

TEST(InfoBaselineTest, ErrorCodesBackAtTheirBaselineAreDroppedAndNewOnesKept) {
  InfoBaseline baseline;
  InfoCounters base;
  base.by_code = {{"ERR", 3}, {"MOVED", 2}};
  baseline.reset(base);
  InfoCounters now;
  now.by_code = {{"ERR", 5}, {"MOVED", 2}, {"WRONGTYPE", 1}};
  EXPECT_EQ(baseline.since(now).by_code,
            (std::map<std::string, uint64_t>{{"ERR", 2}, {"WRONGTYPE", 1}}));
}

TEST(InfoBaselineTest, ALaterResetReplacesTheEarlierBaseline) {
  InfoBaseline baseline;
  baseline.reset(counters(10));
  baseline.reset(counters(40));
  EXPECT_EQ(baseline.since(counters(45)).commands, 5u);
}

RateSampler::Sample at(uint64_t micros, uint64_t commands = 0) {
  RateSampler::Sample s;
  s.micros = micros;
  s.commands = commands;
  return s;
}

TEST(RateSamplerTest, TheFirstSampleIsItsOwnBase) {
  RateSampler sampler;
  const RateSampler::Sample base = sampler.base(at(5000000, 42));
  EXPECT_EQ(base.micros, 5000000u);
  EXPECT_EQ(base.commands, 42u);
}

TEST(RateSamplerTest, RatesRunFromTheOldestSampleWithinTheWindow) {
  RateSampler sampler;
  sampler.base(at(0, 1));
  EXPECT_EQ(sampler.base(at(1000000, 2)).commands, 1u);
  EXPECT_EQ(sampler.base(at(2500000, 3)).commands, 1u);  // 0 is the latest before the window
  // At 3.1 s, 1.0 s is the latest sample at least 2 s old: 0 is dropped.
  EXPECT_EQ(sampler.base(at(3100000, 4)).commands, 2u);
}

TEST(RateSamplerTest, SamplesCloserThan100msToTheLastAreNotKept) {
  RateSampler sampler;
  sampler.base(at(0, 1));
  sampler.base(at(50000, 2));     // not kept
  sampler.base(at(2100000, 3));   // kept; 0 is still the latest before the window
  sampler.base(at(2149999, 99));  // not kept
  // At 4.1 s, 2.1 s is the latest sample at least 2 s old; 0.05 s was never kept.
  EXPECT_EQ(sampler.base(at(4100000, 4)).commands, 3u);
}

}  // namespace
}  // namespace sp::net
