// infoReport: which sections INFO's words select (redis-server's order, defaults, all, any case,
// shards for admins only), the text's shape, and where each section's figures come from: the
// shards' last polled INFO, the workers' counters (since CONFIG RESETSTAT), the context.
#include "control/info_report.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <string>
#include <string_view>
#include <vector>

#include "metrics/hot_counter.h"
#include "metrics/latency_histogram.h"
#include "net/keyspace_cache.h"
#include "net/proxy_context.h"
#include "resp/command_table.h"
#include "unit/control/proxy_with_workers.h"

namespace sp::control {
namespace {

using testing::ProxyWithWorkers;

// The "# Title" lines of an INFO reply, in order.
std::vector<std::string> titles(const std::string& info) {
  std::vector<std::string> out;
  size_t at = 0;
  while ((at = info.find("# ", at)) != std::string::npos) {
    if (at == 0 || info.compare(at - 2, 2, "\r\n") == 0) {
      out.push_back(info.substr(at + 2, info.find("\r\n", at) - at - 2));
    }
    at += 2;
  }
  return out;
}

// The value of `key` in INFO's "key:value\r\n" lines ("<absent>" when not there).
std::string valueIn(const std::string& info, const std::string& key) {
  const std::string needle = "\r\n" + key + ":";
  const size_t at = info.find(needle);
  if (at == std::string::npos) {
    return "<absent>";
  }
  const size_t start = at + needle.size();
  return info.substr(start, info.find("\r\n", start) - start);
}

net::ShardKeyspace polled(const std::string& name, const std::string& info) {
  net::ShardKeyspace shard;
  shard.shard = name;
  shard.ok = true;
  shard.info = net::parseInfo(info);
  shard.dbs = net::parseKeyspace(info);
  return shard;
}

// Privileged ports that nothing listens on: the workers' shard connections are refused.
const route::ShardAddress kS0("s0", "127.0.0.1", 1);
const route::ShardAddress kS1("s1", "127.0.0.1", 2);

TEST(InfoReportTest, SectionsComeInRedisServersOrderWhateverTheOrderAsked) {
  ProxyWithWorkers proxy({kS0});
  EXPECT_EQ(titles(infoReport(proxy.context(), "keyspace cluster server", true)),
            (std::vector<std::string>{"Server", "Cluster", "Keyspace"}));
}

TEST(InfoReportTest, NoWordOrDefaultIsRedisServersDefaultsAndTheShards) {
  ProxyWithWorkers proxy({kS0});
  const std::vector<std::string> defaults = {"Server",     "Clients",     "Memory",   "Persistence",
                                             "Stats",      "Replication", "CPU",      "Modules",
                                             "Errorstats", "Cluster",     "Keyspace", "Shards"};
  EXPECT_EQ(titles(infoReport(proxy.context(), "", true)), defaults);
  EXPECT_EQ(titles(infoReport(proxy.context(), "default", true)), defaults);
}

TEST(InfoReportTest, AllAndEverythingAddCommandstatsAndLatencystats) {
  ProxyWithWorkers proxy({kS0});
  const std::vector<std::string> all = {
      "Server",  "Clients",      "Memory",     "Persistence",  "Stats",   "Replication", "CPU",
      "Modules", "Commandstats", "Errorstats", "Latencystats", "Cluster", "Keyspace",    "Shards"};
  EXPECT_EQ(titles(infoReport(proxy.context(), "all", true)), all);
  EXPECT_EQ(titles(infoReport(proxy.context(), "everything", true)), all);
}

TEST(InfoReportTest, SectionNamesAreCaseInsensitiveAndExtraSpacesIgnored) {
  ProxyWithWorkers proxy({kS0});
  EXPECT_EQ(titles(infoReport(proxy.context(), "  MeMoRy   CPU ", true)),
            (std::vector<std::string>{"Memory", "CPU"}));
}

TEST(InfoReportTest, UnknownSectionNamesAddNothing) {
  ProxyWithWorkers proxy({kS0});
  EXPECT_EQ(infoReport(proxy.context(), "nosuch", true), "");
  EXPECT_EQ(titles(infoReport(proxy.context(), "nosuch cluster", true)),
            std::vector<std::string>{"Cluster"});
}

TEST(InfoReportTest, NonAdminsNeverSeeTheShardsSection) {
  ProxyWithWorkers proxy({kS0});
  EXPECT_EQ(infoReport(proxy.context(), "shards", false), "");
  EXPECT_EQ(titles(infoReport(proxy.context(), "all", false)).back(), "Keyspace");
  EXPECT_EQ(titles(infoReport(proxy.context(), "shards", true)),
            std::vector<std::string>{"Shards"});
}

TEST(InfoReportTest, ABlankLineBetweenSectionsAndNoneAfterTheLast) {
  ProxyWithWorkers proxy({kS0});
  EXPECT_EQ(infoReport(proxy.context(), "cluster modules", true),
            "# Modules\r\n\r\n# Cluster\r\ncluster_enabled:0\r\n");
}

TEST(InfoReportTest, ReplicationIsAPrimaryWithoutReplicasNamedByTheRunId) {
  ProxyWithWorkers proxy({kS0});
  const std::string info = infoReport(proxy.context(), "server replication", true);
  EXPECT_EQ(valueIn(info, "role"), "master");
  EXPECT_EQ(valueIn(info, "connected_slaves"), "0");
  EXPECT_EQ(valueIn(info, "run_id").size(), 40u);
  EXPECT_EQ(valueIn(info, "master_replid"), valueIn(info, "run_id"));
  EXPECT_EQ(valueIn(info, "master_replid2"), std::string(40, '0'));
  EXPECT_EQ(valueIn(info, "second_repl_offset"), "-1");
}

TEST(InfoReportTest, ServerHasTheProxysOwnFiguresAndTheShardsVersionAndHz) {
  ProxyWithWorkers proxy({kS0, kS1});
  proxy.context().bound_port = 6399;
  proxy.context().config_file = "/etc/shardproxy/proxy.yaml";
  std::string info = infoReport(proxy.context(), "server", true);
  // Before any shard answered: the version the command table was made from.
  EXPECT_EQ(valueIn(info, "redis_version"), resp::CommandTable::redisVersion());
  EXPECT_EQ(valueIn(info, "hz"), "0");
  EXPECT_EQ(valueIn(info, "redis_mode"), "standalone");
  EXPECT_EQ(valueIn(info, "tcp_port"), "6399");
  EXPECT_EQ(valueIn(info, "config_file"), "/etc/shardproxy/proxy.yaml");
  EXPECT_EQ(valueIn(info, "process_id"), std::to_string(::getpid()));
  EXPECT_EQ(valueIn(info, "workers"), "0");

  proxy.context().keyspace.store(
      {polled("s0", "# Server\r\nredis_version:7.2.4\r\nhz:10\r\nconfigured_hz:10\r\n"),
       polled("s1", "# Server\r\nredis_version:7.0.15\r\nhz:100\r\nconfigured_hz:100\r\n")},
      1);
  info = infoReport(proxy.context(), "server", true);
  EXPECT_EQ(valueIn(info, "redis_version"), "7.2.4");  // the first shard's
  EXPECT_EQ(valueIn(info, "hz"), "10");
  EXPECT_EQ(valueIn(info, "configured_hz"), "10");
}

TEST(InfoReportTest, MaxclientsIsTheLowerOfTheConfigAndTheDescriptorBudget) {
  ProxyWithWorkers proxy({kS0}, 0, [](config::Config& c) { c.limits.max_clients = 1000; });
  EXPECT_EQ(valueIn(infoReport(proxy.context(), "clients", true), "maxclients"), "1000");
  proxy.context().max_clients = 250;
  EXPECT_EQ(valueIn(infoReport(proxy.context(), "clients", true), "maxclients"), "250");
}

TEST(InfoReportTest, BlockedClientsAreTheShardsSum) {
  ProxyWithWorkers proxy({kS0, kS1});
  proxy.context().keyspace.store(
      {polled("s0", "# Clients\r\nblocked_clients:2\r\nclients_in_timeout_table:1\r\n"),
       polled("s1", "# Clients\r\nblocked_clients:5\r\nclients_in_timeout_table:4\r\n")},
      1);
  const std::string info = infoReport(proxy.context(), "clients", true);
  EXPECT_EQ(valueIn(info, "blocked_clients"), "7");
  EXPECT_EQ(valueIn(info, "clients_in_timeout_table"), "5");
}

TEST(InfoReportTest, MemoryBeforeAnyShardAnsweredIsZerosAndTheProxysOwnRss) {
  ProxyWithWorkers proxy({kS0});
  const std::string info = infoReport(proxy.context(), "memory", true);
  EXPECT_TRUE(info.starts_with("# Memory\r\nused_memory:0\r\nused_memory_human:0B\r\n")) << info;
  EXPECT_EQ(valueIn(info, "maxmemory_human"), "0B");
  EXPECT_NE(valueIn(info, "shardproxy_used_memory_rss"), "0");
  EXPECT_NE(valueIn(info, "shardproxy_used_memory_rss_human"), "<absent>");
}

TEST(InfoReportTest, MemoryAndPersistenceAreTheShardsCombined) {
  ProxyWithWorkers proxy({kS0, kS1});
  proxy.context().keyspace.store(
      {polled("s0",
              "# Memory\r\nused_memory:1048576\r\nused_memory_human:1.00M\r\n"
              "# Persistence\r\nloading:0\r\nrdb_last_save_time:1700000500\r\n"),
       polled("s1",
              "# Memory\r\nused_memory:2097152\r\nused_memory_human:2.00M\r\n"
              "# Persistence\r\nloading:1\r\nrdb_last_save_time:1700000100\r\n")},
      1);
  const std::string info = infoReport(proxy.context(), "memory persistence", true);
  EXPECT_EQ(valueIn(info, "used_memory"), "3145728");
  EXPECT_EQ(valueIn(info, "used_memory_human"), "3.00M");
  EXPECT_EQ(valueIn(info, "loading"), "1");
  EXPECT_EQ(valueIn(info, "rdb_last_save_time"), "1700000100");
}

TEST(InfoReportTest, PersistenceBeforeAnyShardAnsweredIsNotLoading) {
  ProxyWithWorkers proxy({kS0});
  EXPECT_EQ(infoReport(proxy.context(), "persistence", true), "# Persistence\r\nloading:0\r\n");
}

TEST(InfoReportTest, KeyspaceSumsTheShardsDatabasesWeightingTtlByExpires) {
  ProxyWithWorkers proxy({kS0, kS1});
  proxy.context().keyspace.store(
      {polled("s0", "# Keyspace\r\ndb0:keys=2,expires=1,avg_ttl=100\r\n"),
       polled(
           "s1",
           "# Keyspace\r\ndb0:keys=3,expires=3,avg_ttl=300\r\ndb2:keys=1,expires=0,avg_ttl=0\r\n")},
      1);
  EXPECT_EQ(infoReport(proxy.context(), "keyspace", true),
            "# Keyspace\r\ndb0:keys=5,expires=4,avg_ttl=250\r\ndb2:keys=1,expires=0,avg_ttl=0\r\n");
}

TEST(InfoReportTest, StatsHaveTheReloadsAndTheShardsDataFigures) {
  ProxyWithWorkers proxy({kS0, kS1});
  proxy.context().reloads.succeeded = 3;
  proxy.context().reloads.failed = 1;
  proxy.context().keyspace.store(
      {polled("s0", "# Stats\r\nkeyspace_hits:10\r\nlatest_fork_usec:300\r\n"),
       polled("s1", "# Stats\r\nkeyspace_hits:5\r\nlatest_fork_usec:700\r\n")},
      1);
  const std::string info = infoReport(proxy.context(), "stats", true);
  EXPECT_EQ(valueIn(info, "config_reloads_ok"), "3");
  EXPECT_EQ(valueIn(info, "config_reloads_failed"), "1");
  EXPECT_EQ(valueIn(info, "keyspace_hits"), "15");
  EXPECT_EQ(valueIn(info, "latest_fork_usec"), "700");
  EXPECT_EQ(valueIn(info, "evicted_keys"), "0");  // no shard reports it
}

TEST(InfoReportTest, ShardsNameEachShardsAddressSlotsAndReplicas) {
  route::ShardAddress with_replicas = kS1;
  with_replicas.replicas = {route::ShardAddress("", "127.0.0.1", 3),
                            route::ShardAddress("", "::1", 4)};
  ProxyWithWorkers proxy({kS0, with_replicas}, 1);
  const std::string info = infoReport(proxy.context(), "shards", true);
  const std::string s0 = valueIn(info, "s0");
  EXPECT_TRUE(s0.starts_with("addr=127.0.0.1:1,state=down,connections_up=0/1,slots=0-8191,")) << s0;
  EXPECT_NE(s0.find(",requests=0,"), std::string::npos) << s0;
  EXPECT_NE(s0.find(",worker0="), std::string::npos) << s0;
  EXPECT_TRUE(valueIn(info, "s1").starts_with("addr=127.0.0.1:2,")) << info;
  EXPECT_NE(valueIn(info, "s1").find(",slots=8192-16383,"), std::string::npos) << info;
  EXPECT_EQ(valueIn(info, "s1_replicas"), "addrs=127.0.0.1:3 [::1]:4,connections_up=0/2,reads=0");
  EXPECT_EQ(valueIn(info, "s0_replicas"), "<absent>");
}

TEST(InfoReportTest, ClientsAndStatsAreSummedOverTheWorkers) {
  ProxyWithWorkers proxy({kS0}, 2);
  proxy.stats(0).connections_accepted.add(2);
  proxy.stats(1).connections_accepted.add(3);
  proxy.stats(1).connections_rejected.add();
  proxy.stats(0).connections_open.add(4);
  const std::string info = infoReport(proxy.context(), "server clients stats", true);
  EXPECT_EQ(valueIn(info, "workers"), "2");
  EXPECT_EQ(valueIn(info, "connected_clients"), "4");
  EXPECT_EQ(valueIn(info, "worker0_clients"), "4");
  EXPECT_EQ(valueIn(info, "worker1_clients"), "0");
  EXPECT_EQ(valueIn(info, "total_connections_received"), "5");
  EXPECT_EQ(valueIn(info, "rejected_connections"), "1");
}

TEST(InfoReportTest, ResetStartsTheCountersAgainButNotTheClientsConnected) {
  ProxyWithWorkers proxy({kS0}, 1);
  proxy.stats(0).connections_accepted.add(7);
  proxy.stats(0).connections_open.add(2);
  resetInfoCounters(proxy.context());
  EXPECT_EQ(valueIn(infoReport(proxy.context(), "stats", true), "total_connections_received"), "0");
  proxy.stats(0).connections_accepted.add(2);
  const std::string info = infoReport(proxy.context(), "clients stats", true);
  EXPECT_EQ(valueIn(info, "total_connections_received"), "2");
  EXPECT_EQ(valueIn(info, "connected_clients"), "2");
}

TEST(InfoReportTest, ErrorstatsCountTheErrorRepliesByCode) {
  ProxyWithWorkers proxy({kS0}, 2);
  proxy.stats(0).error_codes.count("-WRONGTYPE Operation against a key\r\n");
  proxy.stats(0).error_codes.count("-ERR unknown command\r\n");
  proxy.stats(1).error_codes.count("-ERR syntax error\r\n");
  EXPECT_EQ(infoReport(proxy.context(), "errorstats", true),
            "# Errorstats\r\nerrorstat_ERR:count=2\r\nerrorstat_WRONGTYPE:count=1\r\n");
  EXPECT_EQ(valueIn(infoReport(proxy.context(), "stats", true), "total_error_replies"), "3");
}

TEST(InfoReportTest, CommandstatsAndLatencystatsListTheCommandsServed) {
  if constexpr (!metrics::kMetricsEnabled) {
    GTEST_SKIP() << "command statistics are compiled out (SHARDPROXY_METRICS=0)";
  }
  ProxyWithWorkers proxy({kS0}, 2);
  const resp::CommandInfo* get = resp::CommandTable::instance().find("get");
  ASSERT_NE(get, nullptr);
  // Nine fast calls (80 us: the 100 us bucket) and one slow failed one (4 ms: 5000 us).
  for (int i = 0; i < 9; ++i) {
    proxy.stats(i % 2).commands_by_name.observe(get, 80, metrics::latencyBucket(80), false);
  }
  proxy.stats(1).commands_by_name.observe(get, 4000, metrics::latencyBucket(4000), true);
  EXPECT_EQ(infoReport(proxy.context(), "commandstats", true),
            "# Commandstats\r\n"
            "cmdstat_get:calls=10,usec=4720,usec_per_call=472.00,rejected_calls=0,failed_calls=1"
            "\r\n");
  EXPECT_EQ(infoReport(proxy.context(), "latencystats", true),
            "# Latencystats\r\n"
            "latency_percentiles_usec_get:p50=100.000,p99=5000.000,p99.9=5000.000\r\n");
}

}  // namespace
}  // namespace sp::control
