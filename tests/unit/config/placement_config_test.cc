// Tests for the placement section (config/yaml_loader.cc, config/validator.cc,
// config/topology_builder.cc), the nutcracker.yml reader (config/twemproxy_config.cc) and the
// Codis dump reader (config/codis_dump.cc).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "config/codis_dump.h"
#include "config/loader.h"
#include "config/topology_builder.h"
#include "config/twemproxy_config.h"
#include "config_errors.h"

namespace sp::config {
namespace {

using test::dump;
using test::hasError;

TEST(PlacementConfigTest, TwemproxyPlacementFromYaml) {
  Config c;
  const auto errors = loadAndValidateYaml(R"(
placement: {kind: twemproxy, distribution: modula, hash: murmur, hash_tag: "$$"}
shards:
  - {name: alpha, address: "127.0.0.1:7001", weight: 2}
  - {address: "127.0.0.1:7002"}
)",
                                          &c);
  ASSERT_TRUE(errors.empty()) << dump(errors);
  EXPECT_EQ(c.placement.kind, route::PlacementKind::kTwemproxy);
  EXPECT_EQ(c.placement.distribution, route::Distribution::kModula);
  EXPECT_EQ(c.placement.hash, route::TwemHash::kMurmur);
  EXPECT_EQ(c.placement.hash_tag, "$$");
  EXPECT_EQ(c.shards[0].weight, 2u);
  // ketama hashes a given name, else host:port (nutcracker's rule, port 11211 aside).
  EXPECT_EQ(ketamaName(c.shards[0]), "alpha");
  EXPECT_EQ(ketamaName(c.shards[1]), "127.0.0.1:7002");
  ShardConfig memcached_port = c.shards[1];
  memcached_port.port = 11211;
  EXPECT_EQ(ketamaName(memcached_port), "127.0.0.1");
  const auto topo = makeTopology(c);
  EXPECT_EQ(topo->placementSummary(), "twemproxy modula murmur hash_tag $$");
}

TEST(PlacementConfigTest, BadPlacementValuesAreNamed) {
  Config c;
  const auto errors = loadAndValidateYaml(R"(
placement: {kind: ring, distribution: rendezvous, hash: sha1, hash_tag: "{"}
shards: [{address: "127.0.0.1:7001"}]
)",
                                          &c);
  EXPECT_TRUE(hasError(errors, "placement.kind", "cluster_slots, twemproxy or codis"));
  EXPECT_TRUE(hasError(errors, "placement.distribution", "ketama, modula or random"));
  EXPECT_TRUE(hasError(errors, "placement.hash", "fnv1a_64"));
  EXPECT_TRUE(hasError(errors, "placement.hash_tag", "two characters"));
}

TEST(PlacementConfigTest, EachPlacementRefusesWhatItDoesNotUse) {
  Config c;
  auto errors = loadAndValidateYaml(R"(
placement: {kind: twemproxy}
shards: [{address: "127.0.0.1:7001", slots: [0-16383], weight: 0}]
)",
                                    &c);
  EXPECT_TRUE(hasError(errors, "shards[0].slots", "not used with placement.kind twemproxy"));
  EXPECT_TRUE(hasError(errors, "shards[0].weight", "greater than 0"));

  errors = loadAndValidateYaml(R"(
placement: {hash: md5}
shards: [{address: "127.0.0.1:7001", weight: 3}]
)",
                               &c);
  EXPECT_TRUE(hasError(errors, "shards[0].weight", "only used with placement.kind twemproxy"));
  EXPECT_TRUE(hasError(errors, "placement", "only used with kind twemproxy"));

  errors = loadAndValidateYaml(R"(
placement: {kind: twemproxy}
shards: [{name: )" + std::string(81, 'n') +
                                   R"(, address: "127.0.0.1:7001"}]
)",
                               &c);
  EXPECT_TRUE(hasError(errors, "shards[0].name", "longer than 80"));

  errors = loadAndValidateYaml(R"(
placement: {kind: twemproxy}
backend: {mode: cluster, cluster_seeds: ["127.0.0.1:7001"]}
)",
                               &c);
  EXPECT_TRUE(hasError(errors, "placement.kind", "cluster_slots with backend.mode cluster"));
}

TEST(PlacementConfigTest, CodisSlotsRunFrom0To1023AndMustAllBeOwned) {
  Config c;
  auto errors = loadAndValidateYaml(R"(
placement: {kind: codis}
shards:
  - {address: "127.0.0.1:7001", slots: [0-511]}
  - {address: "127.0.0.1:7002", slots: [512-1100]}
)",
                                    &c);
  EXPECT_TRUE(hasError(errors, "shards[1].slots[0]", "out of range 0..1023"));
  errors = loadAndValidateYaml(R"(
placement: {kind: codis}
shards:
  - {address: "127.0.0.1:7001", slots: [0-511]}
  - {address: "127.0.0.1:7002", slots: [512-1000]}
)",
                               &c);
  EXPECT_TRUE(hasError(errors, "shards", "slots 1001-1023 are not assigned"));
  errors = loadAndValidateYaml(R"(
placement: {kind: codis}
shards: [{address: "127.0.0.1:7001"}]
)",
                               &c);
  EXPECT_TRUE(hasError(errors, "shards[0].slots", "lists its Codis slots"));
  errors = loadAndValidateYaml(R"(
placement: {kind: codis}
shards:
  - {address: "127.0.0.1:7001", slots: [0-99, 612-1023]}
  - {address: "127.0.0.1:7002", slots: [100-611]}
)",
                               &c);
  ASSERT_TRUE(errors.empty()) << dump(errors);
  const auto topo = makeTopology(c);
  EXPECT_EQ(topo->shardOfUnit(99), 0);
  EXPECT_EQ(topo->shardOfUnit(100), 1);
  EXPECT_EQ(topo->shardOfUnit(1023), 0);
}

TEST(CodisDumpTest, GroupsWithSlotsBecomeShards) {
  std::string json = R"({"slots": [)";
  for (int s = 0; s < 1024; ++s) {
    json += (s ? "," : "") + std::string(R"({"id":)") + std::to_string(s) + R"(,"group_id":)" +
            (s < 300 ? "2" : "1") + R"(,"action":{}})";
  }
  json += R"(], "group": [
    {"id": 1, "servers": [{"server": "10.0.0.1:6379"}, {"server": "10.0.0.2:6379"}]},
    {"id": 2, "servers": [{"server": "10.0.0.3:6379"}]},
    {"id": 7, "servers": [{"server": "10.0.0.9:6379"}]}]})";
  std::vector<ShardConfig> shards;
  const auto errors = parseCodisDump(json, "dump.json", &shards);
  ASSERT_TRUE(errors.empty()) << dump(errors);
  ASSERT_EQ(shards.size(), 2u);  // group 7 owns nothing
  EXPECT_EQ(shards[0].name, "group1");
  EXPECT_EQ(shards[0].host, "10.0.0.1");
  ASSERT_EQ(shards[0].replicas.size(), 1u);
  EXPECT_EQ(shards[0].replicas[0].host, "10.0.0.2");
  ASSERT_EQ(shards[0].slots.size(), 1u);
  EXPECT_EQ(shards[0].slots[0].first, 300);
  EXPECT_EQ(shards[0].slots[0].last, 1023);
  EXPECT_EQ(shards[1].slots[0].last, 299);
}

TEST(CodisDumpTest, BrokenDumpsAreRefusedWithTheReason) {
  std::vector<ShardConfig> shards;
  EXPECT_TRUE(hasError(parseCodisDump("{", "d.json", &shards), "d.json", "not valid JSON"));
  EXPECT_TRUE(hasError(parseCodisDump(R"({"proxy": []})", "d.json", &shards), "d.json",
                       "\"slots\" and \"group\""));
  const auto errors = parseCodisDump(
      R"({"slots": [{"id": 0, "group_id": 1, "action": {"state": "migrating", "target_id": 2}},
                    {"id": 1, "group_id": 0}, {"id": 2, "group_id": 3}],
          "group": [{"id": 1, "servers": [{"server": "h:1"}]}, {"id": 3, "servers": []}]})",
      "d.json", &shards);
  EXPECT_TRUE(hasError(errors, "d.json: slots[0]", "being migrated"));
  EXPECT_TRUE(hasError(errors, "d.json: slots[1]", "belongs to no group"));
  EXPECT_TRUE(hasError(errors, "d.json: group[3]", "no server"));
}

constexpr const char* kNutcracker = R"(
alpha:
  listen: 127.0.0.1:22121
  hash: fnv1a_64
  hash_tag: "{}"
  distribution: ketama
  auto_eject_hosts: true
  redis: true
  redis_auth: secret
  timeout: 400
  server_retry_timeout: 30000
  server_failure_limit: 2
  server_connections: 4
  client_connections: 1000
  preconnect: true
  backlog: 512
  servers:
   - 127.0.0.1:6379:1
   - 127.0.0.1:6380:3 big
beta:
  listen: 127.0.0.1:22122
  redis: true
  redis_db: 3
  servers:
   - 127.0.0.1:6381:1
)";

TEST(TwemproxyConfigTest, APoolMapsKeyByKey) {
  Config c;
  std::vector<std::string> notes;
  const auto errors = loadTwemproxyYaml(kNutcracker, "n.yml", "alpha", &c, &notes);
  ASSERT_TRUE(errors.empty()) << dump(errors);
  EXPECT_TRUE(validate(c).empty()) << dump(validate(c));
  EXPECT_EQ(c.listen_port, 22121);
  EXPECT_EQ(c.placement.kind, route::PlacementKind::kTwemproxy);
  EXPECT_EQ(c.placement.hash_tag, "{}");
  EXPECT_EQ(c.auth.password, "secret");
  EXPECT_EQ(c.backend_password, "secret");
  EXPECT_EQ(c.backend_timeout_ms, 400u);
  EXPECT_EQ(c.backend_retry_timeout_ms, 30000u);
  EXPECT_GE(c.backend_retry_timeout_max_ms, 30000u);
  EXPECT_EQ(c.backend_failure_limit, 2u);
  EXPECT_EQ(c.backend_connections, 4);
  EXPECT_EQ(c.limits.max_clients, 1000u);
  ASSERT_EQ(c.shards.size(), 2u);
  EXPECT_FALSE(c.shards[0].name_given);
  EXPECT_EQ(ketamaName(c.shards[0]), "127.0.0.1:6379");
  EXPECT_EQ(c.shards[1].name, "big");
  EXPECT_EQ(c.shards[1].weight, 3u);
  std::string all;
  for (const std::string& n : notes) {
    all += n + "\n";
  }
  EXPECT_NE(all.find("alpha.auto_eject_hosts"), std::string::npos) << all;
  EXPECT_NE(all.find("alpha.backlog"), std::string::npos) << all;
  EXPECT_NE(all.find("alpha.preconnect"), std::string::npos) << all;
}

TEST(TwemproxyConfigTest, WhatCannotBeHonouredIsAnError) {
  Config c;
  std::vector<std::string> notes;
  EXPECT_TRUE(
      hasError(loadTwemproxyYaml(kNutcracker, "n.yml", "", &c, &notes), "--pool", "alpha, beta"));
  EXPECT_TRUE(hasError(loadTwemproxyYaml(kNutcracker, "n.yml", "gamma", &c, &notes), "--pool",
                       "no pool 'gamma'"));
  c = Config{};
  EXPECT_TRUE(hasError(loadTwemproxyYaml(kNutcracker, "n.yml", "beta", &c, &notes), "beta.redis_db",
                       "must be 0"));
  c = Config{};
  EXPECT_TRUE(hasError(loadTwemproxyYaml("m:\n  listen: 127.0.0.1:1\n  servers: [\"h:1:1\"]\n",
                                         "n.yml", "", &c, &notes),
                       "m.redis", "memcached"));
  c = Config{};
  EXPECT_TRUE(hasError(
      loadTwemproxyYaml("m:\n  listen: /tmp/s.sock 0666\n  redis: true\n  servers: [\"h:1:x\"]\n",
                        "n.yml", "", &c, &notes),
      "m.servers[0]", "host:port:weight"));
  EXPECT_TRUE(hasError(loadTwemproxyYaml("m: [", "n.yml", "", &c, &notes), "n.yml", "YAML"));
}

TEST(TwemproxyConfigTest, AUnixListenKeepsItsMode) {
  Config c;
  std::vector<std::string> notes;
  auto errors = loadTwemproxyYaml(
      "m:\n  listen: /run/nutcracker.sock 0666\n  redis: true\n  servers: [\"127.0.0.1:7001:1\"]\n",
      "n.yml", "", &c, &notes);
  ASSERT_TRUE(errors.empty()) << dump(errors);
  EXPECT_EQ(c.listen_unix, "/run/nutcracker.sock");
  EXPECT_EQ(c.listen_unix_perm, 0666u);
  EXPECT_EQ(c.listen_port, 0);  // nutcracker's pool listens on the socket only
  c = Config{};
  EXPECT_TRUE(
      hasError(loadTwemproxyYaml("m:\n  listen: /run/n.sock 9999\n  redis: true\n  servers: "
                                 "[\"127.0.0.1:7001:1\"]\n",
                                 "n.yml", "", &c, &notes),
               "m.listen", "octal file mode"));
}

}  // namespace
}  // namespace sp::config
