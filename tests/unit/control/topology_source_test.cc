// resolveTopology: the shards list as it stands, each shard's primary as Sentinel names it
// (written into the config), or the masters of CLUSTER SLOTS from the seeds, and the errors that
// name every sentinel or seed asked; TopologyWatcher publishing a Sentinel failover. The sentinels
// and seeds are fake servers on loopback.
#include "control/topology_source.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include "config/config.h"
#include "fakes/scripted_shard.h"
#include "fakes/worker_harness.h"
#include "unit/control/proxy_with_workers.h"

namespace sp::control {
namespace {

using fakes::ScriptedShard;

config::ShardConfig shard(const std::string& name, uint16_t port) {
  config::ShardConfig s;
  s.name = name;
  s.host = "127.0.0.1";
  s.port = port;
  return s;
}

std::string bulk(const std::string& text) {
  return "$" + std::to_string(text.size()) + "\r\n" + text + "\r\n";
}

// A sentinel that knows "pfx-a" at 127.0.0.1:7101 and "pfx-b" at 127.0.0.1:2, and no other
// master; it takes SUBSCRIBE +switch-master.
ScriptedShard::Answer sentinel(const ScriptedShard::Argv& argv) {
  if (argv[0] == "SUBSCRIBE") {
    return ScriptedShard::reply("*3\r\n" + bulk("subscribe") + bulk("+switch-master") + ":1\r\n");
  }
  if (argv.size() == 3 && argv[0] == "SENTINEL" && argv[1] == "get-master-addr-by-name") {
    if (argv[2] == "pfx-a") {
      return ScriptedShard::reply("*2\r\n" + bulk("127.0.0.1") + bulk("7101"));
    }
    if (argv[2] == "pfx-b") {
      return ScriptedShard::reply("*2\r\n" + bulk("127.0.0.1") + bulk("2"));
    }
    return ScriptedShard::reply("*-1\r\n");
  }
  return ScriptedShard::reply("-ERR unknown command\r\n");
}

TEST(ResolveTopologyTest, StaticShardsAreTheTopologyInTheirOrder) {
  config::Config config;
  config.shards = {shard("a", 1), shard("b", 2)};
  route::TopologyPtr topology;
  const Status resolved = resolveTopology(&config, &topology);
  const std::string& error = resolved.message();
  ASSERT_TRUE(resolved.ok()) << error;
  ASSERT_EQ(topology->shardCount(), 2u);
  EXPECT_EQ(topology->shards()[0].name, "a");
  EXPECT_EQ(topology->shards()[1].port, 2);
  EXPECT_EQ(topology->shardOfSlot(0), 0);
  EXPECT_EQ(topology->shardOfSlot(16383), 1);
}

TEST(ResolveTopologyTest, SentinelWritesEachShardsPrimaryIntoTheConfig) {
  ScriptedShard fake(sentinel);
  config::Config config;
  config.shards = {shard("a", 0), shard("b", 0)};
  config.sentinel.addresses = {{"127.0.0.1", fake.port()}};
  config.sentinel.master_name_prefix = "pfx-";
  route::TopologyPtr topology;
  const Status resolved = resolveTopology(&config, &topology);
  const std::string& error = resolved.message();
  ASSERT_TRUE(resolved.ok()) << error;
  EXPECT_EQ(config.shards[0].port, 7101);
  EXPECT_EQ(config.shards[1].port, 2);
  EXPECT_EQ(topology->shards()[0].port, 7101);
  EXPECT_EQ(topology->shards()[0].host, "127.0.0.1");
  EXPECT_EQ(fake.commands().at(0),
            (ScriptedShard::Argv{"SENTINEL", "get-master-addr-by-name", "pfx-a"}));
}

TEST(ResolveTopologyTest, AMasterNoSentinelKnowsFailsWithItsName) {
  ScriptedShard fake(sentinel);
  config::Config config;
  config.shards = {shard("a", 0), shard("c", 0)};
  config.sentinel.addresses = {{"127.0.0.1", fake.port()}};
  config.sentinel.master_name_prefix = "pfx-";
  route::TopologyPtr topology;
  const Status resolved = resolveTopology(&config, &topology);
  const std::string& error = resolved.message();
  EXPECT_FALSE(resolved.ok());
  EXPECT_EQ(error, "no sentinel gave the primary of 'pfx-c' (127.0.0.1:" +
                       std::to_string(fake.port()) + ": does not know master 'pfx-c')");
  EXPECT_EQ(topology, nullptr);
}

TEST(ResolveTopologyTest, WithNoSentinelAnsweringTheErrorNamesEveryOne) {
  uint16_t p1 = 0;
  uint16_t p2 = 0;
  const int s1 = fakes::boundLoopbackSocket(&p1);
  const int s2 = fakes::boundLoopbackSocket(&p2);
  ASSERT_GE(s1, 0);
  ASSERT_GE(s2, 0);
  config::Config config;
  config.shards = {shard("a", 0)};
  config.sentinel.addresses = {{"127.0.0.1", p1}, {"127.0.0.1", p2}};
  route::TopologyPtr topology;
  const Status resolved = resolveTopology(&config, &topology);
  const std::string& error = resolved.message();
  EXPECT_FALSE(resolved.ok());
  ::close(s1);
  ::close(s2);
  const std::string first = "no sentinel gave the primary of 'a' (127.0.0.1:" + std::to_string(p1);
  EXPECT_TRUE(error.starts_with(first)) << error;
  EXPECT_NE(error.find("; 127.0.0.1:" + std::to_string(p2) + ": "), std::string::npos) << error;
}

TEST(ResolveTopologyTest, ClusterModeTakesTheMastersOfClusterSlots) {
  // Two masters, the second with a replica.
  const std::string slots =
      "*2\r\n"
      "*3\r\n:0\r\n:8191\r\n*3\r\n" +
      bulk("127.0.0.1") + ":7001\r\n" + bulk("id1") + "*4\r\n:8192\r\n:16383\r\n*3\r\n" +
      bulk("127.0.0.1") + ":7002\r\n" + bulk("id2") + "*3\r\n" + bulk("127.0.0.1") + ":7003\r\n" +
      bulk("id3");
  ScriptedShard seed([&](const ScriptedShard::Argv& argv) {
    return argv[0] == "AUTH" ? ScriptedShard::reply("+OK\r\n") : ScriptedShard::reply(slots);
  });
  config::Config config;
  config.cluster_mode = true;
  config.cluster_seeds = {{"127.0.0.1", seed.port()}};
  config.backend_password = "secret";
  route::TopologyPtr topology;
  const Status resolved = resolveTopology(&config, &topology);
  const std::string& error = resolved.message();
  ASSERT_TRUE(resolved.ok()) << error;
  ASSERT_EQ(topology->shardCount(), 2u);
  EXPECT_EQ(topology->shards()[0].name, "127.0.0.1:7001");
  EXPECT_EQ(topology->shards()[1].name, "127.0.0.1:7002");
  EXPECT_EQ(topology->shards()[0].password, "secret");
  ASSERT_EQ(topology->shards()[1].replicas.size(), 1u);
  EXPECT_EQ(topology->shards()[1].replicas[0].port, 7003);
  EXPECT_EQ(topology->shardOfSlot(8192), 1);
  EXPECT_EQ(seed.commands().at(0), (ScriptedShard::Argv{"AUTH", "secret"}));
  EXPECT_EQ(seed.commands().at(1), (ScriptedShard::Argv{"CLUSTER", "SLOTS"}));
}

TEST(ResolveTopologyTest, ClusterModeWithNoSeedAnsweringFailsNamingTheSeed) {
  uint16_t port = 0;
  const int refusing = fakes::boundLoopbackSocket(&port);
  ASSERT_GE(refusing, 0);
  config::Config config;
  config.cluster_mode = true;
  config.cluster_seeds = {{"127.0.0.1", port}};
  route::TopologyPtr topology;
  const Status resolved = resolveTopology(&config, &topology);
  const std::string& error = resolved.message();
  EXPECT_FALSE(resolved.ok());
  ::close(refusing);
  EXPECT_TRUE(
      error.starts_with("no seed answered CLUSTER SLOTS (127.0.0.1:" + std::to_string(port) + ": "))
      << error;
}

TEST(TopologyWatcherTest, ASentinelFailoverIsPublishedForThatShardOnly) {
  ScriptedShard fake(sentinel);
  testing::ProxyWithWorkers proxy(
      {route::ShardAddress("a", "127.0.0.1", 1), route::ShardAddress("b", "127.0.0.1", 2)}, 0,
      [&](config::Config& c) {
        c.sentinel.addresses = {{"127.0.0.1", fake.port()}};
        c.sentinel.master_name_prefix = "pfx-";
      });
  net::ProxyContext& context = proxy.context();
  const auto before = context.config();
  TopologyWatcher watcher(context);
  watcher.start();
  // Once following +switch-master, the watcher asks for every primary it may have missed.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (context.config()->shards[0].port != 7101 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  watcher.stop();
  EXPECT_EQ(context.config()->shards[0].port, 7101);
  EXPECT_EQ(context.topology()->shards()[0].port, 7101);
  EXPECT_EQ(context.topology()->shards()[1].port, 2);
  EXPECT_EQ(before->shards[0].port, 1);  // a new snapshot, not a change to the old one
}

}  // namespace
}  // namespace sp::control
