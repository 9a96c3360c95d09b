// The shards' INFO combined into the proxy's (combinedSection, combinedField): sums, maxima, the
// oldest save, the worst status, the first shard's settings, *_human and ratios recomputed from
// the totals; bytesToHuman as redis-server prints it; and KeyspacePoller filling the cache from
// fake shards on loopback.
#include "control/keyspace_poller.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "fakes/scripted_shard.h"
#include "fakes/worker_harness.h"
#include "net/keyspace_cache.h"
#include "route/topology.h"

namespace sp::control {
namespace {

using fakes::ScriptedShard;
using net::ShardKeyspace;

// A shard that answered the last poll with `info` (INFO's text, "\r\n" or "\n" lines).
ShardKeyspace answered(const std::string& name, const std::string& info) {
  ShardKeyspace shard;
  shard.shard = name;
  shard.ok = true;
  shard.info = net::parseInfo(info);
  shard.dbs = net::parseKeyspace(info);
  return shard;
}

// The value of `key` in combinedSection's "key:value\r\n" lines ("<absent>" when not there).
std::string valueIn(const std::string& lines, const std::string& key) {
  const std::string prefix = key + ":";
  size_t at = 0;
  while (at < lines.size()) {
    const size_t end = lines.find("\r\n", at);
    const std::string line = lines.substr(at, end - at);
    if (line.starts_with(prefix)) {
      return line.substr(prefix.size());
    }
    at = end == std::string::npos ? lines.size() : end + 2;
  }
  return "<absent>";
}

TEST(BytesToHumanTest, BelowOneKibibyteIsPlainBytes) {
  EXPECT_EQ(bytesToHuman(0), "0B");
  EXPECT_EQ(bytesToHuman(512), "512B");
  EXPECT_EQ(bytesToHuman(1023), "1023B");
}

TEST(BytesToHumanTest, EachUnitStartsAtItsPowerOf1024WithTwoDecimals) {
  EXPECT_EQ(bytesToHuman(1024), "1.00K");
  EXPECT_EQ(bytesToHuman(1536), "1.50K");
  EXPECT_EQ(bytesToHuman(1024 * 1024 - 1), "1024.00K");  // as redis-server rounds it
  EXPECT_EQ(bytesToHuman(1024 * 1024), "1.00M");
  EXPECT_EQ(bytesToHuman(3460300), "3.30M");
  EXPECT_EQ(bytesToHuman(uint64_t{1} << 30), "1.00G");
  EXPECT_EQ(bytesToHuman(uint64_t{5} << 39), "2.50T");
  EXPECT_EQ(bytesToHuman(uint64_t{1} << 50), "1.00P");
  EXPECT_EQ(bytesToHuman((uint64_t{1} << 60) - 1), "1024.00P");
}

TEST(BytesToHumanTest, FromOneExbibyteUpIsPlainBytesAsInRedisServer) {
  // redis-server (util.c bytesToHuman) has no unit past P: "Let's hope we never need this".
  EXPECT_EQ(bytesToHuman(uint64_t{1} << 60), "1152921504606846976B");
  EXPECT_EQ(bytesToHuman(UINT64_MAX), "18446744073709551615B");
}

TEST(CombinedSectionTest, CountersAndSizesAreSummed) {
  const std::vector<ShardKeyspace> shards = {
      answered("a", "# Memory\r\nused_memory:1000\r\nused_memory_dataset:600\r\n"),
      answered("b", "# Memory\r\nused_memory:3000\r\nused_memory_dataset:400\r\n")};
  EXPECT_EQ(combinedSection(shards, "memory"), "used_memory:4000\r\nused_memory_dataset:1000\r\n");
}

TEST(CombinedSectionTest, OnlyTheAskedSectionsFieldsInFirstAppearanceOrder) {
  const std::vector<ShardKeyspace> shards = {
      answered("a", "# Memory\r\nused_memory:1\r\n# Stats\r\nexpired_keys:5\r\n"),
      answered("b", "# Memory\r\nused_memory_rss:7\r\nused_memory:2\r\n")};
  EXPECT_EQ(combinedSection(shards, "memory"), "used_memory:3\r\nused_memory_rss:7\r\n");
  EXPECT_EQ(combinedSection(shards, "stats"), "expired_keys:5\r\n");
  EXPECT_EQ(combinedSection(shards, "cpu"), "");
}

TEST(CombinedSectionTest, ShardsThatDidNotAnswerAreLeftOut) {
  ShardKeyspace silent = answered("b", "# Memory\r\nused_memory:9999\r\n");
  silent.ok = false;
  const std::vector<ShardKeyspace> shards = {answered("a", "# Memory\r\nused_memory:10\r\n"),
                                             silent};
  EXPECT_EQ(combinedSection(shards, "memory"), "used_memory:10\r\n");
  EXPECT_EQ(combinedSection({silent}, "memory"), "");
}

TEST(CombinedSectionTest, PeaksDurationsAndFlagsTakeTheLargest) {
  const std::vector<ShardKeyspace> shards = {
      answered("a",
               "# Persistence\r\nloading:0\r\nrdb_bgsave_in_progress:1\r\n"
               "rdb_last_bgsave_time_sec:-1\r\naof_last_rewrite_time_sec:-1\r\n"
               "current_fork_perc:0.00\r\n"),
      answered("b",
               "# Persistence\r\nloading:0\r\nrdb_bgsave_in_progress:0\r\n"
               "rdb_last_bgsave_time_sec:4\r\naof_last_rewrite_time_sec:-1\r\n"
               "current_fork_perc:12.34\r\n")};
  const std::string persistence = combinedSection(shards, "persistence");
  EXPECT_EQ(valueIn(persistence, "loading"), "0");
  EXPECT_EQ(valueIn(persistence, "rdb_bgsave_in_progress"), "1");
  EXPECT_EQ(valueIn(persistence, "rdb_last_bgsave_time_sec"), "4");
  EXPECT_EQ(valueIn(persistence, "aof_last_rewrite_time_sec"), "-1");  // never, on every shard
  EXPECT_EQ(valueIn(persistence, "current_fork_perc"), "12.34");
}

TEST(CombinedSectionTest, LastSaveTimeIsTheOldestShards) {
  const std::vector<ShardKeyspace> shards = {
      answered("a", "# Persistence\r\nrdb_last_save_time:1700000500\r\n"),
      answered("b", "# Persistence\r\nrdb_last_save_time:1700000100\r\n"),
      answered("c", "# Persistence\r\nrdb_last_save_time:1700000900\r\n")};
  EXPECT_EQ(combinedSection(shards, "persistence"), "rdb_last_save_time:1700000100\r\n");
}

TEST(CombinedSectionTest, AStatusIsOkOnlyWhenEveryShardSaysOk) {
  const std::string ok =
      "# Persistence\r\nrdb_last_bgsave_status:ok\r\naof_last_write_status:ok\r\n";
  const std::string failed =
      "# Persistence\r\nrdb_last_bgsave_status:err\r\naof_last_write_status:ok\r\n";
  EXPECT_EQ(
      combinedSection({answered("a", ok), answered("b", failed), answered("c", ok)}, "persistence"),
      "rdb_last_bgsave_status:err\r\naof_last_write_status:ok\r\n");
  EXPECT_EQ(combinedSection({answered("a", ok), answered("b", ok)}, "persistence"),
            "rdb_last_bgsave_status:ok\r\naof_last_write_status:ok\r\n");
}

TEST(CombinedSectionTest, SettingsAndNamesAreTheFirstShards) {
  const std::vector<ShardKeyspace> shards = {
      answered("a", "# Memory\r\nmaxmemory_policy:allkeys-lru\r\nmem_allocator:jemalloc-5.3.0\r\n"),
      answered("b", "# Memory\r\nmaxmemory_policy:noeviction\r\nmem_allocator:libc\r\n")};
  EXPECT_EQ(combinedSection(shards, "memory"),
            "maxmemory_policy:allkeys-lru\r\nmem_allocator:jemalloc-5.3.0\r\n");
}

TEST(CombinedSectionTest, AFieldThatIsNotANumberOnEveryShardIsTheFirstShards) {
  const std::vector<ShardKeyspace> shards = {answered("a", "# Memory\r\nodd_field:12\r\n"),
                                             answered("b", "# Memory\r\nodd_field:n/a\r\n")};
  EXPECT_EQ(combinedSection(shards, "memory"), "odd_field:12\r\n");
}

TEST(CombinedSectionTest, MaxmemoryIsTheTotalUnlessAShardHasNoLimit) {
  const std::string limited = "# Memory\r\nmaxmemory:1048576\r\nmaxmemory_human:1.00M\r\n";
  const std::string unlimited = "# Memory\r\nmaxmemory:0\r\nmaxmemory_human:0B\r\n";
  EXPECT_EQ(combinedSection({answered("a", limited), answered("b", limited)}, "memory"),
            "maxmemory:2097152\r\nmaxmemory_human:2.00M\r\n");
  EXPECT_EQ(combinedSection({answered("a", limited), answered("b", unlimited)}, "memory"),
            "maxmemory:0\r\nmaxmemory_human:0B\r\n");
}

TEST(CombinedSectionTest, HumanFieldsAreRecomputedFromTheTotals) {
  const std::vector<ShardKeyspace> shards = {
      answered("a",
               "# Memory\r\nused_memory:1048576\r\nused_memory_human:1.00M\r\n"
               "total_system_memory:4294967296\r\ntotal_system_memory_human:4.00G\r\n"),
      answered("b",
               "# Memory\r\nused_memory:524288\r\nused_memory_human:512.00K\r\n"
               "total_system_memory:4294967296\r\ntotal_system_memory_human:4.00G\r\n")};
  const std::string memory = combinedSection(shards, "memory");
  EXPECT_EQ(valueIn(memory, "used_memory"), "1572864");
  EXPECT_EQ(valueIn(memory, "used_memory_human"), "1.50M");
  // The same machine's memory, not twice it.
  EXPECT_EQ(valueIn(memory, "total_system_memory"), "4294967296");
  EXPECT_EQ(valueIn(memory, "total_system_memory_human"), "4.00G");
}

TEST(CombinedSectionTest, RatiosAreRecomputedFromTheTotals) {
  const std::vector<ShardKeyspace> shards = {
      answered("a",
               "# Memory\r\nused_memory:1000\r\nused_memory_rss:3000\r\nused_memory_peak:2000\r\n"
               "used_memory_peak_perc:50.00%\r\nused_memory_startup:100\r\n"
               "used_memory_dataset:300\r\nused_memory_dataset_perc:33.33%\r\n"
               "allocator_allocated:1000\r\nallocator_active:1500\r\nallocator_resident:2000\r\n"
               "allocator_frag_ratio:1.50\r\nallocator_rss_ratio:1.33\r\n"
               "rss_overhead_ratio:1.50\r\nmem_fragmentation_ratio:3.00\r\n"),
      answered("b",
               "# Memory\r\nused_memory:3000\r\nused_memory_rss:3000\r\nused_memory_peak:6000\r\n"
               "used_memory_peak_perc:50.00%\r\nused_memory_startup:100\r\n"
               "used_memory_dataset:2500\r\nused_memory_dataset_perc:86.21%\r\n"
               "allocator_allocated:3000\r\nallocator_active:3500\r\nallocator_resident:3000\r\n"
               "allocator_frag_ratio:1.17\r\nallocator_rss_ratio:0.86\r\n"
               "rss_overhead_ratio:1.00\r\nmem_fragmentation_ratio:1.00\r\n")};
  const std::string memory = combinedSection(shards, "memory");
  EXPECT_EQ(valueIn(memory, "used_memory_peak_perc"), "50.00%");     // 4000 / 8000
  EXPECT_EQ(valueIn(memory, "used_memory_dataset_perc"), "73.68%");  // 2800 / (4000 - 200)
  EXPECT_EQ(valueIn(memory, "allocator_frag_ratio"), "1.25");        // 5000 / 4000
  EXPECT_EQ(valueIn(memory, "allocator_rss_ratio"), "1.00");         // 5000 / 5000
  EXPECT_EQ(valueIn(memory, "rss_overhead_ratio"), "1.20");          // 6000 / 5000
  EXPECT_EQ(valueIn(memory, "mem_fragmentation_ratio"), "1.50");     // 6000 / 4000
}

TEST(CombinedSectionTest, ARatioOverAZeroTotalIsZeroNotInfinite) {
  const std::vector<ShardKeyspace> shards = {answered(
      "a",
      "# Memory\r\nused_memory:0\r\nused_memory_rss:4096\r\nmem_fragmentation_ratio:0.00\r\n")};
  EXPECT_EQ(valueIn(combinedSection(shards, "memory"), "mem_fragmentation_ratio"), "0.00");
}

TEST(CombinedSectionTest, DecimalFieldsSumWithTwoDecimals) {
  const std::vector<ShardKeyspace> shards = {
      answered("a", "# Stats\r\ninstantaneous_input_repl_kbps:0.50\r\n"),
      answered("b", "# Stats\r\ninstantaneous_input_repl_kbps:1.25\r\n")};
  EXPECT_EQ(combinedSection(shards, "stats"), "instantaneous_input_repl_kbps:1.75\r\n");
}

TEST(CombinedFieldTest, OneFieldByItsRuleOrZeroWhenNoShardHasIt) {
  const std::vector<ShardKeyspace> shards = {
      answered("a", "# Server\r\nhz:10\r\n# Clients\r\nblocked_clients:2\r\n"),
      answered("b", "# Server\r\nhz:100\r\n# Clients\r\nblocked_clients:3\r\n")};
  EXPECT_EQ(combinedField(shards, "blocked_clients"), "5");
  EXPECT_EQ(combinedField(shards, "hz"), "10");  // the first shard's setting
  EXPECT_EQ(combinedField(shards, "no_such_field"), "0");
  EXPECT_EQ(combinedField({}, "blocked_clients"), "0");
}

// One shard on loopback that answers INFO with `info` (and +OK to AUTH).
ScriptedShard::Script infoShard(const std::string& info) {
  return [info](const ScriptedShard::Argv& argv) {
    if (argv[0] == "AUTH") {
      return ScriptedShard::reply("+OK\r\n");
    }
    return ScriptedShard::reply("$" + std::to_string(info.size()) + "\r\n" + info + "\r\n");
  };
}

// The cache once the poller has stored its first round (waits up to 10 s).
std::vector<ShardKeyspace> firstPoll(const net::KeyspaceCache& cache) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (cache.refreshedAt() == 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return cache.snapshot();
}

TEST(KeyspacePollerTest, StoresEachShardsParsedInfo) {
  ScriptedShard shard(infoShard(
      "# Server\r\nredis_version:7.2.4\r\n\r\n# Keyspace\r\ndb0:keys=3,expires=1,avg_ttl=100"));
  net::KeyspaceCache cache;
  const route::TopologyPtr topology = fakes::oneShard(shard.port());
  KeyspacePoller poller(
      cache, [&] { return topology; }, std::chrono::milliseconds(10));
  poller.start();
  const std::vector<ShardKeyspace> polled = firstPoll(cache);
  poller.stop();
  ASSERT_EQ(polled.size(), 1u);
  EXPECT_EQ(polled[0].shard, "s0");
  EXPECT_TRUE(polled[0].ok);
  EXPECT_EQ(polled[0].field("redis_version"), "7.2.4");
  EXPECT_EQ(polled[0].keys(), 3u);
  EXPECT_EQ(cache.serverVersion(), "7.2.4");
  EXPECT_EQ(shard.commandsOn(0).at(0), ScriptedShard::Argv{"INFO"});
}

TEST(KeyspacePollerTest, AuthenticatesWithTheShardsCredentialsFirst) {
  ScriptedShard shard(infoShard("# Server\r\nredis_version:7.0.0"));
  net::KeyspaceCache cache;
  route::ShardAddress address("s0", "127.0.0.1", shard.port());
  address.username = "proxy";
  address.password = "secret";
  const route::TopologyPtr topology = route::Topology::evenSplit({address});
  KeyspacePoller poller(
      cache, [&] { return topology; }, std::chrono::milliseconds(10));
  poller.start();
  ASSERT_TRUE(firstPoll(cache).at(0).ok);
  poller.stop();
  const std::vector<ScriptedShard::Argv> commands = shard.commandsOn(0);
  ASSERT_GE(commands.size(), 2u);
  EXPECT_EQ(commands[0], (ScriptedShard::Argv{"AUTH", "proxy", "secret"}));
  EXPECT_EQ(commands[1], ScriptedShard::Argv{"INFO"});
}

TEST(KeyspacePollerTest, AShardThatRefusesTheConnectionIsStoredAsNotAnswering) {
  uint16_t port = 0;
  const int refusing = fakes::boundLoopbackSocket(&port);
  ASSERT_GE(refusing, 0);
  net::KeyspaceCache cache;
  const route::TopologyPtr topology = fakes::oneShard(port);
  KeyspacePoller poller(
      cache, [&] { return topology; }, std::chrono::milliseconds(10));
  poller.start();
  const std::vector<ShardKeyspace> polled = firstPoll(cache);
  poller.stop();
  ::close(refusing);
  ASSERT_EQ(polled.size(), 1u);
  EXPECT_EQ(polled[0].shard, "s0");
  EXPECT_FALSE(polled[0].ok);
  EXPECT_EQ(cache.serverVersion(), "");
}

TEST(KeyspacePollerTest, StopWithoutStartAndWithoutATopologyIsQuiet) {
  net::KeyspaceCache cache;
  {
    KeyspacePoller idle(
        cache, [] { return route::TopologyPtr(); }, std::chrono::milliseconds(1));
  }
  KeyspacePoller poller(
      cache, [] { return route::TopologyPtr(); }, std::chrono::milliseconds(1));
  poller.start();
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  poller.stop();
  EXPECT_EQ(cache.refreshedAt(), 0u);  // nothing to poll: nothing stored
}

}  // namespace
}  // namespace sp::control
