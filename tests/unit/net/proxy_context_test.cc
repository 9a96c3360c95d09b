// ProxyContext's published snapshots and per-shard summaries: nothing before the first publish,
// each publish replacing both snapshots while a reader's copy stays whole; per shard, its slot
// ranges and count, its configured connections, its counters summed over the workers (primary and
// replica apart, matched by shard name), each worker's state and the shard's overall state.
#include "net/proxy_context.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "unit/net/context_with_workers.h"

namespace sp::net {
namespace {

using testing::ContextWithWorkers;

TEST(ProxyContextTest, NothingIsPublishedAtFirst) {
  ProxyContext context;
  EXPECT_EQ(context.config(), nullptr);
  EXPECT_EQ(context.topology(), nullptr);
  EXPECT_EQ(context.serverTls(), nullptr);
  EXPECT_EQ(context.backendTls(), nullptr);
  EXPECT_TRUE(context.shardSummaries().empty());
}

TEST(ProxyContextTest, APublishReplacesBothSnapshotsAndAReadersCopyStaysWhole) {
  ProxyContext context;
  auto first = std::make_shared<config::Config>();
  first->workers = 3;
  auto topology = route::Topology::evenSplit({route::ShardAddress("a", "127.0.0.1", 1)});
  context.publish(first, topology);
  const auto held = context.config();
  EXPECT_EQ(held, first);
  EXPECT_EQ(context.topology(), topology);

  auto second = std::make_shared<config::Config>();
  second->workers = 5;
  auto next = route::Topology::evenSplit(
      {route::ShardAddress("a", "127.0.0.1", 1), route::ShardAddress("b", "127.0.0.1", 2)});
  first.reset();
  context.publish(second, next);
  EXPECT_EQ(context.config()->workers, 5);
  EXPECT_EQ(context.topology()->shardCount(), 2u);
  EXPECT_EQ(held->workers, 3);  // still the snapshot it read
}

TEST(ShardSummariesTest, EachShardHasItsSlotRangesAndConfiguredConnections) {
  ContextWithWorkers proxy(2, [](config::Config& c) { c.backend_connections = 2; });
  const std::vector<ShardSummary> shards = proxy.context().shardSummaries();
  ASSERT_EQ(shards.size(), 3u);
  EXPECT_EQ(shards[0].address.name, "s0");
  EXPECT_EQ(shards[0].slots, "0-5460");
  EXPECT_EQ(shards[1].slots, "5461-10922");
  EXPECT_EQ(shards[2].slots, "10923-16383");
  EXPECT_EQ(shards[0].slot_count, 5461u);
  EXPECT_EQ(shards[1].slot_count, 5462u);
  EXPECT_EQ(shards[2].slot_count, 5461u);
  EXPECT_EQ(shards[0].connections_configured, 4u);  // 2 workers x backend.connections 2
  EXPECT_EQ(shards[0].replica_connections_configured, 0u);
}

TEST(ShardSummariesTest, ScatteredSlotsAreListedInSlotOrder) {
  ProxyContext context;
  auto topology = route::Topology::fromRanges(
      {route::ShardAddress("a", "127.0.0.1", 1), route::ShardAddress("b", "127.0.0.1", 2)},
      {{0, 99, 0}, {100, 100, 1}, {101, 8000, 0}, {8001, 16383, 1}});
  context.publish(std::make_shared<config::Config>(), topology);
  const std::vector<ShardSummary> shards = context.shardSummaries();
  ASSERT_EQ(shards.size(), 2u);
  EXPECT_EQ(shards[0].slots, "0-99 101-8000");
  EXPECT_EQ(shards[0].slot_count, 8000u);
  EXPECT_EQ(shards[1].slots, "100 8001-16383");
  EXPECT_EQ(shards[1].slot_count, 8384u);
}

TEST(ShardSummariesTest, CountersAreSummedOverTheWorkers) {
  ContextWithWorkers proxy(2);
  proxy.shard(0, 1).errors.add(2);
  proxy.shard(1, 1).errors.add(3);
  proxy.shard(0, 1).connects.add(1);
  proxy.shard(1, 1).connects.add(1);
  proxy.worker(1).stats().replica_shards[1].connections_up.set(4);
  const std::vector<ShardSummary> shards = proxy.context().shardSummaries();
  EXPECT_EQ(shards[1].primary.errors, 5u);
  EXPECT_EQ(shards[1].primary.connects, 2u);
  EXPECT_EQ(shards[1].replica.connections_up, 4u);
  EXPECT_EQ(shards[0].primary.errors, 0u);
}

TEST(ShardSummariesTest, EachWorkersStateAndTheShardsOverallState) {
  ContextWithWorkers proxy(3);
  // s0: up everywhere; s1: up in worker 0, ejected in 1, down in 2; s2: down everywhere.
  for (size_t w = 0; w < 3; ++w) {
    proxy.shard(w, 0).connections_up.set(1);
  }
  proxy.shard(0, 1).connections_up.set(1);
  proxy.shard(1, 1).ejected.set(1);
  const std::vector<ShardSummary> shards = proxy.context().shardSummaries();
  EXPECT_EQ(shards[0].worker_states, (std::vector<std::string>{"up", "up", "up"}));
  EXPECT_EQ(shards[1].worker_states, (std::vector<std::string>{"up", "ejected", "down"}));
  EXPECT_EQ(shards[2].worker_states, (std::vector<std::string>{"down", "down", "down"}));
  EXPECT_EQ(shards[0].state(), "up");
  EXPECT_EQ(shards[1].state(), "partial");
  EXPECT_EQ(shards[2].state(), "down");
}

TEST(ShardSummariesTest, AWorkerStillOnAnOlderTopologyIsMatchedByShardName) {
  ContextWithWorkers proxy(1);
  proxy.worker(0).stats().shards.bind({"s2", "gone", "s0"});
  proxy.worker(0).stats().shards[0].requests.add(7);  // s2
  proxy.worker(0).stats().shards[1].requests.add(9);  // a shard no longer in the topology
  const std::vector<ShardSummary> shards = proxy.context().shardSummaries();
  ASSERT_EQ(shards.size(), 3u);
  EXPECT_EQ(shards[2].primary.requests, metrics::kMetricsEnabled ? 7u : 0u);
  EXPECT_EQ(shards[0].primary.requests, 0u);
  EXPECT_EQ(shards[1].primary.requests, 0u);
  EXPECT_EQ(shards[1].worker_states, std::vector<std::string>{"down"});  // not bound: down
}

}  // namespace
}  // namespace sp::net
