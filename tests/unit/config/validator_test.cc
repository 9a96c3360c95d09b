// Tests for config/validator.cc: shard lists, slot coverage, cross-field bounds.
#include <gtest/gtest.h>

#include <string>

#include "config/loader.h"
#include "config_errors.h"

namespace sp::config {
namespace {

using test::dump;
using test::hasError;

ShardConfig shard(std::string name, std::string host, uint16_t port,
                  std::vector<SlotRange> slots = {}) {
  ShardConfig s;
  s.name = std::move(name);
  s.host = std::move(host);
  s.port = port;
  s.slots = std::move(slots);
  return s;
}

Config twoShards() {
  Config c;
  c.shards = {shard("a", "127.0.0.1", 7001), shard("b", "127.0.0.1", 7002)};
  return c;
}

TEST(ValidatorTest, DefaultsWithShardsAreValid) {
  auto errors = validate(twoShards());
  EXPECT_TRUE(errors.empty()) << dump(errors);
}

TEST(ValidatorTest, KeylessScriptsNameAShardOrRefuse) {
  Config c = twoShards();
  c.keyless_scripts = "b";
  EXPECT_TRUE(validate(c).empty()) << dump(validate(c));
  c.keyless_scripts = "nowhere";
  auto errors = validate(c);
  ASSERT_EQ(errors.size(), 1u) << dump(errors);
  EXPECT_EQ(errors[0].toString(),
            "keyless_scripts: 'nowhere' is neither \"refuse\" nor the name of a shard in shards");
  c.keyless_scripts = "refuse";
  EXPECT_TRUE(validate(c).empty()) << dump(validate(c));
}

TEST(ValidatorTest, KeylessScriptsMustRefuseInClusterMode) {
  Config c;
  c.cluster_mode = true;
  c.cluster_seeds = {Endpoint{"127.0.0.1", 7000}};
  c.keyless_scripts = "a";
  EXPECT_TRUE(hasError(validate(c), "keyless_scripts", "must be \"refuse\" in cluster mode"));
}

TEST(ValidatorTest, ZeroShards) {
  Config c;
  auto errors = validate(c);
  ASSERT_EQ(errors.size(), 1u) << dump(errors);
  EXPECT_EQ(errors[0].toString(),
            "shards: at least one shard is required (use --shards or a config file)");
}

TEST(ValidatorTest, TooManyShards) {
  Config c;
  for (int i = 0; i < 16385; ++i) {
    c.shards.push_back(shard("s" + std::to_string(i), "10.0.0.1", static_cast<uint16_t>(i + 1)));
  }
  EXPECT_TRUE(hasError(validate(c), "shards", "at most 16384 shards are supported, got 16385"));
  c.shards.pop_back();
  auto errors = validate(c);
  EXPECT_TRUE(errors.empty()) << dump(errors);
}

TEST(ValidatorTest, DuplicateNamesAndAddresses) {
  Config c;
  c.shards = {shard("a", "127.0.0.1", 7001), shard("b", "127.0.0.1", 7002),
              shard("a", "127.0.0.1", 7003), shard("c", "127.0.0.1", 7001),
              shard("d", "::1", 7001),       shard("e", "::1", 7001),
              shard("f", "Redis.Local", 1),  shard("g", "redis.local", 1)};
  auto errors = validate(c);
  EXPECT_TRUE(hasError(errors, "shards[2].name", "duplicate name 'a' (also shards[0])"));
  EXPECT_TRUE(
      hasError(errors, "shards[3].address", "duplicate address 127.0.0.1:7001 (also shards[0])"));
  EXPECT_TRUE(
      hasError(errors, "shards[5].address", "duplicate address [::1]:7001 (also shards[4])"));
  EXPECT_TRUE(hasError(errors, "shards[7].address", "duplicate address"));
  EXPECT_EQ(errors.size(), 4u) << dump(errors);
}

TEST(ValidatorTest, BadShardFields) {
  Config c;
  c.shards = {shard("", "127.0.0.1", 7001), shard("b", "", 7002), shard("c", "127.0.0.1", 0),
              shard("d", "bad host", 1)};
  auto errors = validate(c);
  EXPECT_TRUE(hasError(errors, "shards[0].name", "must not be empty"));
  EXPECT_TRUE(hasError(errors, "shards[1].address", "missing host"));
  EXPECT_TRUE(hasError(errors, "shards[2].address", "port must be 1..65535, got '0'"));
  EXPECT_TRUE(hasError(errors, "shards[3].address", "invalid host 'bad host'"));
  EXPECT_EQ(errors.size(), 4u) << dump(errors);
}

TEST(ValidatorTest, ExplicitSlotsCoveringEverythingAreValid) {
  Config c = twoShards();
  c.shards[0].slots = {{0, 100}, {200, 8191}};
  c.shards[1].slots = {{101, 199}, {8192, 16383}};
  auto errors = validate(c);
  EXPECT_TRUE(errors.empty()) << dump(errors);
}

TEST(ValidatorTest, OverlappingSlotsNameBothShards) {
  Config c;
  c.shards = {shard("a", "h", 1, {{0, 8191}}), shard("b", "h", 2, {{100, 200}, {8192, 16383}}),
              shard("c", "h", 3, {{5000, 5000}, {9000, 9001}})};
  auto errors = validate(c);
  EXPECT_TRUE(hasError(errors, "shards[1].slots[0]", "slots 100-200 overlap shards[0]"));
  EXPECT_TRUE(hasError(errors, "shards[2].slots[0]", "slot 5000 overlaps shards[0]"));
  EXPECT_TRUE(hasError(errors, "shards[2].slots[1]", "slots 9000-9001 overlap shards[1]"));
  EXPECT_EQ(errors.size(), 3u) << dump(errors);
}

TEST(ValidatorTest, OverlapSpanningSeveralOwnersIsSplitPerOwner) {
  Config c;
  c.shards = {shard("a", "h", 1, {{0, 99}, {251, 16383}}), shard("b", "h", 2, {{100, 199}}),
              shard("c", "h", 3, {{50, 250}})};
  auto errors = validate(c);
  EXPECT_TRUE(hasError(errors, "shards[2].slots[0]", "slots 50-99 overlap shards[0]"));
  EXPECT_TRUE(hasError(errors, "shards[2].slots[0]", "slots 100-199 overlap shards[1]"));
  EXPECT_EQ(errors.size(), 2u) << dump(errors);  // 200-250 were free and are now c's
}

TEST(ValidatorTest, OverlapWithinOneShard) {
  Config c;
  c.shards = {shard("a", "h", 1, {{0, 16383}, {10, 20}})};
  EXPECT_TRUE(hasError(validate(c), "shards[0].slots[1]",
                       "slots 10-20 overlap another range of this shard"));
}

TEST(ValidatorTest, UncoveredSlotsAreReportedAsCompactRanges) {
  Config c = twoShards();
  c.shards[0].slots = {{0, 8191}};
  c.shards[1].slots = {{9000, 9000}};
  auto errors = validate(c);
  ASSERT_EQ(errors.size(), 1u) << dump(errors);
  EXPECT_EQ(errors[0].toString(),
            "shards: slots 8192-8999, 9001-16383 are not assigned to any shard");

  c.shards[0].slots = {{0, 16382}};
  c.shards[1].slots = {{0, 0}};
  errors = validate(c);
  EXPECT_TRUE(hasError(errors, "shards", "slot 16383 is not assigned to any shard"))
      << dump(errors);

  c.shards[0].slots = {{0, 8191}};
  c.shards[1].slots = {{8192, 16383}};
  c.shards[1].slots.clear();
  for (uint16_t s = 8192; s < 16384; s += 2) {
    c.shards[1].slots.push_back({s, s});
  }
  errors = validate(c);
  ASSERT_EQ(errors.size(), 1u) << dump(errors);
  EXPECT_EQ(errors[0].toString(),
            "shards: slots 8193, 8195, 8197, 8199, 8201, 8203, 8205, 8207 and 4088 more ranges are "
            "not assigned to any shard");
}

TEST(ValidatorTest, SlotRangeBounds) {
  Config c;
  c.shards = {shard("a", "h", 1, {{0, 16383}, {16384, 16384}, {10, 65535}, {200, 100}})};
  auto errors = validate(c);
  EXPECT_TRUE(hasError(errors, "shards[0].slots[1]", "slot 16384 is out of range 0..16383"));
  EXPECT_TRUE(hasError(errors, "shards[0].slots[2]", "slot 65535 is out of range 0..16383"));
  EXPECT_TRUE(hasError(errors, "shards[0].slots[3]", "reversed range 200-100 (write 100-200)"));
  EXPECT_EQ(errors.size(), 3u) << dump(errors);
}

TEST(ValidatorTest, SlotsOnSomeShardsButNotOthers) {
  Config c;
  c.shards = {shard("a", "h", 1, {{0, 16383}}), shard("b", "h", 2), shard("c", "h", 3)};
  auto errors = validate(c);
  EXPECT_TRUE(hasError(errors, "shards[1].slots", "when any shard lists slots, every shard must"));
  EXPECT_TRUE(hasError(errors, "shards[2].slots", "when any shard lists slots, every shard must"));
  EXPECT_EQ(errors.size(), 2u) << dump(errors);
}

TEST(ValidatorTest, ScalarBounds) {
  Config c = twoShards();
  c.listen_host = "";
  c.listen_port = 0;
  c.workers = -1;
  c.backend_connections = 0;
  c.backend_connect_timeout_ms = 0;
  c.backend_reconnect_min_ms = 0;
  c.log_level = "verbose";
  auto errors = validate(c);
  EXPECT_TRUE(hasError(errors, "listen.host", "must not be empty"));
  EXPECT_TRUE(hasError(errors, "listen.port", "0 turns the TCP listener off"));
  EXPECT_TRUE(hasError(errors, "workers", "must be 0 (one per core) to 1024, got -1"));
  EXPECT_TRUE(hasError(errors, "backend.connections", "must be 1 to 1024, got 0"));
  EXPECT_TRUE(hasError(errors, "backend.connect_timeout_ms", "must be greater than 0"));
  EXPECT_TRUE(hasError(errors, "backend.reconnect_min_ms", "must be greater than 0"));
  EXPECT_TRUE(hasError(errors, "log_level", "unknown level 'verbose'"));
  EXPECT_EQ(errors.size(), 7u) << dump(errors);

  c = twoShards();
  c.listen_host = "not a host";
  c.workers = 1025;
  c.backend_reconnect_min_ms = 1000;
  c.backend_reconnect_max_ms = 999;
  errors = validate(c);
  EXPECT_TRUE(hasError(errors, "listen.host", "invalid host 'not a host'"));
  EXPECT_TRUE(hasError(errors, "workers", "got 1025"));
  EXPECT_TRUE(hasError(errors, "backend.reconnect_max_ms",
                       "must be at least backend.reconnect_min_ms (1000), got 999"));
  EXPECT_EQ(errors.size(), 3u) << dump(errors);
}

TEST(ValidatorTest, LimitsOfZero) {
  Config c = twoShards();
  c.limits = Limits{0, 0, 0, 0, 0, 0};
  auto errors = validate(c);
  for (const char* path :
       {"limits.max_bulk_len", "limits.max_array_len", "limits.max_inline_len",
        "limits.max_inflight_per_client", "limits.client_output_buffer", "limits.max_clients"}) {
    EXPECT_TRUE(hasError(errors, path, "must be greater than 0"));
  }
  EXPECT_EQ(errors.size(), 6u) << dump(errors);
}

TEST(ValidatorTest, TcpKeepaliveRange) {
  Config c = twoShards();
  for (uint32_t seconds : {0u, 1u, 300u, 32767u}) {
    c.limits.tcp_keepalive = seconds;
    EXPECT_TRUE(validate(c).empty()) << seconds;
  }
  c.limits.tcp_keepalive = 32768;
  c.limits.timeout = 4000000000u;  // any number of seconds is a timeout
  auto errors = validate(c);
  EXPECT_TRUE(
      hasError(errors, "limits.tcp_keepalive", "must be 0 (off) to 32767 seconds, got 32768"));
  EXPECT_EQ(errors.size(), 1u) << dump(errors);
}

TEST(ValidatorTest, BufferPoolBytesRange) {
  Config c = twoShards();
  for (uint64_t bytes : {0ull, 4ull << 20, 1ull << 30}) {
    c.limits.buffer_pool_bytes = bytes;
    EXPECT_TRUE(validate(c).empty()) << bytes;
  }
  c.limits.buffer_pool_bytes = (1ull << 30) + 1;
  auto errors = validate(c);
  EXPECT_TRUE(
      hasError(errors, "limits.buffer_pool_bytes",
               "must be 0 (keep no free buffer) to 1073741824 bytes (1gb), got 1073741825"));
  EXPECT_EQ(errors.size(), 1u) << dump(errors);
}

TEST(ValidatorTest, AllLogLevels) {
  Config c = twoShards();
  for (const char* level : {"trace", "debug", "info", "warn", "error", "critical", "off"}) {
    c.log_level = level;
    EXPECT_TRUE(validate(c).empty()) << level;
  }
}

}  // namespace
}  // namespace sp::config

namespace sp::config {
namespace {

TEST(ClusterModeConfigTest, SeedsRequiredAndShardsRefused) {
  Config c;
  auto errors = loadAndValidateYaml("backend:\n  mode: cluster\n", &c);
  ASSERT_FALSE(errors.empty());
  EXPECT_EQ(errors[0].path, "backend.cluster_seeds");
  errors = loadAndValidateYaml(
      "backend:\n  mode: cluster\n  cluster_seeds: [127.0.0.1:7000]\nshards:\n"
      "  - address: 127.0.0.1:7001\n",
      &c);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].path, "shards");
  Config ok;
  errors =
      loadAndValidateYaml("backend:\n  mode: cluster\n  cluster_seeds: [127.0.0.1:7000]\n", &ok);
  EXPECT_TRUE(errors.empty());
  EXPECT_TRUE(ok.cluster_mode);
  ASSERT_EQ(ok.cluster_seeds.size(), 1u);
  EXPECT_EQ(ok.cluster_seeds[0].port, 7000);
}

TEST(ClusterModeConfigTest, BadModeNamesThePath) {
  Config c;
  auto errors = loadAndValidateYaml("backend:\n  mode: sharded\nshards:\n  - address: a:1\n", &c);
  ASSERT_FALSE(errors.empty());
  EXPECT_EQ(errors[0].toString(), "backend.mode: expected static or cluster, got 'sharded'");
}

TEST(ClusterModeConfigTest, ClusterFlagSelectsClusterMode) {
  const char* argv[] = {"shardproxy", "--cluster", "127.0.0.1:7000,127.0.0.1:7001"};
  CommandLine cmdline;
  ASSERT_TRUE(parseCommandLine(3, argv, &cmdline).empty());
  Config c;
  EXPECT_TRUE(buildConfig(cmdline, &c).empty());
  EXPECT_TRUE(c.cluster_mode);
  EXPECT_EQ(c.cluster_seeds.size(), 2u);
}

}  // namespace
}  // namespace sp::config
