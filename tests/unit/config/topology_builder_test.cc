// Tests for config/topology_builder.cc: Config -> route::Topology.
#include "config/topology_builder.h"

#include <gtest/gtest.h>

#include "config/loader.h"
#include "config_errors.h"

namespace sp::config {
namespace {

using test::dump;

TEST(TopologyBuilderTest, EvenSplitWithoutSlots) {
  Config c;
  ASSERT_TRUE(parseShardList("127.0.0.1:7001,127.0.0.1:7002,[::1]:7003", &c.shards).empty());
  ASSERT_TRUE(validate(c).empty());
  auto topo = makeTopology(c);
  ASSERT_EQ(topo->shardCount(), 3u);
  EXPECT_EQ(topo->shards()[2].name, "shard2");
  EXPECT_EQ(topo->shards()[2].host, "::1");
  EXPECT_EQ(topo->shards()[2].port, 7003);
  // The same split route::Topology::evenSplit makes (its own tests pin it to redis-cli's).
  auto expected = route::Topology::evenSplit(
      {{"shard0", "127.0.0.1", 7001}, {"shard1", "127.0.0.1", 7002}, {"shard2", "::1", 7003}});
  auto ranges = topo->ranges();
  auto expected_ranges = expected->ranges();
  ASSERT_EQ(ranges.size(), 3u);
  ASSERT_EQ(ranges.size(), expected_ranges.size());
  for (size_t i = 0; i < ranges.size(); ++i) {
    EXPECT_EQ(ranges[i].first, expected_ranges[i].first);
    EXPECT_EQ(ranges[i].last, expected_ranges[i].last);
    EXPECT_EQ(ranges[i].shard, i);
  }
  EXPECT_EQ(ranges[0].first, 0);
  EXPECT_EQ(ranges[2].last, 16383);
}

TEST(TopologyBuilderTest, ExplicitSlots) {
  Config c;
  auto errors = loadAndValidateYaml(R"(
shards:
  - name: left
    address: 127.0.0.1:7001
    slots: [0-99, 200-16383]
  - name: right
    address: 127.0.0.1:7002
    slots: [100-199]
)",
                                    &c);
  ASSERT_TRUE(errors.empty()) << dump(errors);
  auto topo = makeTopology(c);
  EXPECT_EQ(topo->shards()[0].name, "left");
  EXPECT_EQ(topo->shardOfSlot(0), 0);
  EXPECT_EQ(topo->shardOfSlot(99), 0);
  EXPECT_EQ(topo->shardOfSlot(100), 1);
  EXPECT_EQ(topo->shardOfSlot(199), 1);
  EXPECT_EQ(topo->shardOfSlot(200), 0);
  EXPECT_EQ(topo->shardOfSlot(16383), 0);
  EXPECT_EQ(topo->ranges().size(), 3u);
  EXPECT_EQ(topo->shardOfKey("foo"), topo->shardOfSlot(12182));
}

}  // namespace
}  // namespace sp::config
