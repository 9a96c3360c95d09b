// Tests for route/topology.cc: the even split (pinned to redis-cli --cluster create's), explicit
// ranges, ranges() and label().
#include "route/topology.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

namespace sp::route {
namespace {

std::vector<ShardAddress> makeShards(size_t n) {
  std::vector<ShardAddress> shards;
  for (size_t i = 0; i < n; ++i) {
    shards.push_back({"shard" + std::to_string(i), "127.0.0.1", static_cast<uint16_t>(7001 + i)});
  }
  return shards;
}

// redis-cli's clusterManagerCommandCreate, verbatim in its arithmetic (float cursor, lround).
std::vector<std::pair<uint32_t, uint32_t>> redisCliSplit(size_t n) {
  std::vector<std::pair<uint32_t, uint32_t>> out;
  const float slots_per_node = 16384 / static_cast<float>(n);
  long first = 0;
  float cursor = 0.0f;
  for (size_t i = 0; i < n; ++i) {
    long last = std::lround(cursor + slots_per_node - 1);
    if (last > 16384 || i == n - 1) {
      last = 16384 - 1;
    }
    if (last < first) {
      last = first;
    }
    out.emplace_back(static_cast<uint32_t>(first), static_cast<uint32_t>(last));
    first = last + 1;
    cursor += slots_per_node;
  }
  return out;
}

void expectWellFormedSplit(const Topology& topo, size_t n) {
  const std::vector<SlotAssignment> ranges = topo.ranges();
  ASSERT_EQ(ranges.size(), n);
  uint32_t next = 0;
  uint32_t smallest = kSlotCount;
  uint32_t largest = 0;
  for (size_t i = 0; i < n; ++i) {
    EXPECT_EQ(ranges[i].shard, i);     // shard i owns the i-th contiguous range
    EXPECT_EQ(ranges[i].first, next);  // no gap, no overlap
    EXPECT_LE(ranges[i].first, ranges[i].last);
    const uint32_t size = ranges[i].last - ranges[i].first + 1u;
    smallest = std::min(smallest, size);
    largest = std::max(largest, size);
    next = ranges[i].last + 1u;
  }
  EXPECT_EQ(next, kSlotCount);  // covers everything
  EXPECT_LE(largest - smallest, 1u) << n << " shards";
}

TEST(TopologyTest, EvenSplitTwoShards) {
  auto topo = Topology::evenSplit(makeShards(2));
  expectWellFormedSplit(*topo, 2);
  EXPECT_EQ(topo->ranges()[0].last, 8191);
  EXPECT_EQ(topo->ranges()[1].first, 8192);
}

TEST(TopologyTest, EvenSplitThreeShardsMatchesRedisCli) {
  auto topo = Topology::evenSplit(makeShards(3));
  expectWellFormedSplit(*topo, 3);
  const auto ranges = topo->ranges();
  // redis-cli --cluster create with three masters: 0-5460, 5461-10922, 10923-16383.
  EXPECT_EQ(ranges[0].first, 0);
  EXPECT_EQ(ranges[0].last, 5460);
  EXPECT_EQ(ranges[1].first, 5461);
  EXPECT_EQ(ranges[1].last, 10922);
  EXPECT_EQ(ranges[2].first, 10923);
  EXPECT_EQ(ranges[2].last, 16383);
}

TEST(TopologyTest, EvenSplitFourAndSixteenShards) {
  auto four = Topology::evenSplit(makeShards(4));
  expectWellFormedSplit(*four, 4);
  EXPECT_EQ(four->ranges()[1].first, 4096);
  EXPECT_EQ(four->ranges()[3].first, 12288);
  auto sixteen = Topology::evenSplit(makeShards(16));
  expectWellFormedSplit(*sixteen, 16);
  for (size_t i = 0; i < 16; ++i) {
    EXPECT_EQ(sixteen->ranges()[i].first, i * 1024);
  }
}

TEST(TopologyTest, EvenSplitMatchesRedisCliForSmallShardCounts) {
  for (size_t n = 1; n <= 64; ++n) {
    auto topo = Topology::evenSplit(makeShards(n));
    const auto expected = redisCliSplit(n);
    const auto ranges = topo->ranges();
    ASSERT_EQ(ranges.size(), expected.size()) << n;
    for (size_t i = 0; i < n; ++i) {
      EXPECT_EQ(ranges[i].first, expected[i].first) << n << " shards, shard " << i;
      EXPECT_EQ(ranges[i].last, expected[i].second) << n << " shards, shard " << i;
    }
    expectWellFormedSplit(*topo, n);
  }
}

// redis-cli's float cursor drifts for large counts (from about 7500 masters it even leaves
// shards without slots); the proxy's split must stay contiguous and balanced for any count.
TEST(TopologyTest, EvenSplitIsBalancedForLargeShardCounts) {
  for (size_t n : {100u, 1000u, 4096u, 7542u, 10000u, 13952u, 16383u, 16384u}) {
    auto topo = Topology::evenSplit(makeShards(n));
    expectWellFormedSplit(*topo, n);
  }
}

TEST(TopologyTest, EvenSplitKeepsShardOrder) {
  auto topo = Topology::evenSplit(makeShards(3));
  ASSERT_EQ(topo->shardCount(), 3u);
  EXPECT_EQ(topo->shards()[1].name, "shard1");
  EXPECT_EQ(topo->shards()[1].port, 7002);
}

TEST(TopologyTest, FromRanges) {
  auto topo = Topology::fromRanges(makeShards(3),
                                   {{0, 99, 2}, {100, 100, 0}, {101, 16000, 1}, {16001, 16383, 2}});
  EXPECT_EQ(topo->shardOfSlot(0), 2);
  EXPECT_EQ(topo->shardOfSlot(99), 2);
  EXPECT_EQ(topo->shardOfSlot(100), 0);
  EXPECT_EQ(topo->shardOfSlot(101), 1);
  EXPECT_EQ(topo->shardOfSlot(16000), 1);
  EXPECT_EQ(topo->shardOfSlot(16001), 2);
  EXPECT_EQ(topo->shardOfSlot(16383), 2);
  const auto ranges = topo->ranges();
  ASSERT_EQ(ranges.size(), 4u);
  EXPECT_EQ(ranges[0].first, 0);
  EXPECT_EQ(ranges[0].last, 99);
  EXPECT_EQ(ranges[0].shard, 2);
  EXPECT_EQ(ranges[1].first, 100);
  EXPECT_EQ(ranges[1].last, 100);
  EXPECT_EQ(ranges[1].shard, 0);
  EXPECT_EQ(ranges[3].first, 16001);
  EXPECT_EQ(ranges[3].shard, 2);
}

TEST(TopologyTest, RangesMergeAdjacentAssignmentsOfOneShard) {
  // Listed in pieces and out of order; ranges() reports contiguous runs in slot order.
  auto topo = Topology::fromRanges(makeShards(2), {{8192, 16383, 1}, {0, 10, 0}, {11, 8191, 0}});
  const auto ranges = topo->ranges();
  ASSERT_EQ(ranges.size(), 2u);
  EXPECT_EQ(ranges[0].first, 0);
  EXPECT_EQ(ranges[0].last, 8191);
  EXPECT_EQ(ranges[0].shard, 0);
  EXPECT_EQ(ranges[1].first, 8192);
  EXPECT_EQ(ranges[1].last, 16383);
}

TEST(TopologyTest, SingleShardOwnsEverything) {
  auto topo = Topology::evenSplit(makeShards(1));
  const auto ranges = topo->ranges();
  ASSERT_EQ(ranges.size(), 1u);
  EXPECT_EQ(ranges[0].first, 0);
  EXPECT_EQ(ranges[0].last, 16383);
  EXPECT_EQ(topo->shardOfKey("anything"), 0);
}

TEST(TopologyTest, ShardOfKeyFollowsKeySlot) {
  auto topo = Topology::evenSplit(makeShards(3));
  EXPECT_EQ(topo->shardOfKey("hello"), 0);  // slot 866
  EXPECT_EQ(topo->shardOfKey("bar"), 0);    // slot 5061
  EXPECT_EQ(topo->shardOfKey("foo"), 2);    // slot 12182
  EXPECT_EQ(topo->shardOfKey("{foo}.x"), topo->shardOfKey("foo"));
  for (int i = 0; i < 1000; ++i) {
    const std::string key = "key:" + std::to_string(i);
    EXPECT_EQ(topo->shardOfKey(key), topo->shardOfSlot(keySlot(key)));
  }
}

TEST(TopologyTest, Label) {
  EXPECT_EQ((ShardAddress{"a", "127.0.0.1", 7001}).label(), "a (127.0.0.1:7001)");
  EXPECT_EQ((ShardAddress{"v6", "::1", 7002}).label(), "v6 ([::1]:7002)");
  EXPECT_EQ((ShardAddress{"n", "redis.local", 1}).label(), "n (redis.local:1)");
  EXPECT_EQ((ShardAddress{"z", "fe80::1%eth0", 65535}).label(), "z ([fe80::1%eth0]:65535)");
}

}  // namespace
}  // namespace sp::route
