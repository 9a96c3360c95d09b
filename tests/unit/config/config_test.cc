// Tests that conf/proxy.yaml (the documented defaults) and the Config struct defaults agree, and
// that the shipped example configs validate.
#include "config/config.h"

#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <string>

#include "config/loader.h"
#include "config_errors.h"

namespace sp::config {
namespace {

using test::dump;

const std::string kConfDir = std::string(SP_SOURCE_DIR) + "/conf/";

TEST(ConfigDefaultsTest, ProxyYamlDocumentsTheStructDefaults) {
  Config loaded;
  CommandLine cl;
  cl.config_path = kConfDir + "proxy.yaml";
  auto errors = buildConfig(cl, &loaded);
  ASSERT_TRUE(errors.empty()) << dump(errors);

  const Config d;
  EXPECT_EQ(loaded.listen_host, d.listen_host);
  EXPECT_EQ(loaded.listen_port, d.listen_port);
  EXPECT_EQ(loaded.listen_unix, d.listen_unix);
  EXPECT_EQ(loaded.listen_unix_perm, d.listen_unix_perm);
  EXPECT_EQ(loaded.workers, d.workers);
  EXPECT_EQ(loaded.backend_connections, d.backend_connections);
  EXPECT_EQ(loaded.backend_connect_timeout_ms, d.backend_connect_timeout_ms);
  EXPECT_EQ(loaded.backend_reconnect_min_ms, d.backend_reconnect_min_ms);
  EXPECT_EQ(loaded.backend_reconnect_max_ms, d.backend_reconnect_max_ms);
  EXPECT_EQ(loaded.backend_timeout_ms, d.backend_timeout_ms);
  EXPECT_EQ(loaded.backend_slow_timeout_ms, d.backend_slow_timeout_ms);
  EXPECT_EQ(loaded.backend_slow_commands, d.backend_slow_commands);
  EXPECT_EQ(loaded.backend_ping_interval_ms, d.backend_ping_interval_ms);
  EXPECT_EQ(loaded.backend_failure_limit, d.backend_failure_limit);
  EXPECT_EQ(loaded.backend_retry_timeout_ms, d.backend_retry_timeout_ms);
  EXPECT_EQ(loaded.backend_retry_timeout_max_ms, d.backend_retry_timeout_max_ms);
  EXPECT_EQ(loaded.read_from, d.read_from);
  EXPECT_EQ(loaded.backend_username, d.backend_username);
  EXPECT_EQ(loaded.backend_password, d.backend_password);
  EXPECT_TRUE(loaded.sentinel.addresses.empty());
  EXPECT_EQ(loaded.cluster_mode, d.cluster_mode);
  EXPECT_TRUE(loaded.cluster_seeds.empty());
  EXPECT_EQ(loaded.cluster_refresh_ms, d.cluster_refresh_ms);
  EXPECT_EQ(loaded.max_redirects, d.max_redirects);
  EXPECT_EQ(loaded.sentinel.master_name_prefix, d.sentinel.master_name_prefix);
  EXPECT_EQ(loaded.shutdown_timeout_ms, d.shutdown_timeout_ms);
  EXPECT_EQ(loaded.log_level, d.log_level);
  EXPECT_EQ(loaded.metrics_listen, d.metrics_listen);
  EXPECT_EQ(loaded.slowlog_threshold_us, d.slowlog_threshold_us);
  EXPECT_EQ(loaded.slowlog_max_len, d.slowlog_max_len);
  EXPECT_EQ(loaded.auth.password, d.auth.password);
  EXPECT_TRUE(loaded.auth.users.empty());
  EXPECT_FALSE(loaded.auth.required());
  EXPECT_EQ(loaded.deny_commands, d.deny_commands);
  EXPECT_EQ(loaded.allow_config_set, d.allow_config_set);
  EXPECT_EQ(loaded.keyless_scripts, d.keyless_scripts);
  EXPECT_EQ(loaded.io_uring, d.io_uring);
  EXPECT_EQ(loaded.limits.max_bulk_len, d.limits.max_bulk_len);
  EXPECT_EQ(loaded.limits.max_array_len, d.limits.max_array_len);
  EXPECT_EQ(loaded.limits.max_inline_len, d.limits.max_inline_len);
  EXPECT_EQ(loaded.limits.max_inflight_per_client, d.limits.max_inflight_per_client);
  EXPECT_EQ(loaded.limits.client_output_buffer, d.limits.client_output_buffer);
  EXPECT_EQ(loaded.limits.max_clients, d.limits.max_clients);
  EXPECT_EQ(loaded.limits.timeout, d.limits.timeout);
  EXPECT_EQ(loaded.limits.tcp_keepalive, d.limits.tcp_keepalive);
  EXPECT_EQ(loaded.limits.buffer_pool_bytes, d.limits.buffer_pool_bytes);

  ASSERT_EQ(loaded.shards.size(), 2u);
  EXPECT_EQ(loaded.shards[0].name, "shard0");
  EXPECT_EQ(loaded.shards[0].host, "127.0.0.1");
  EXPECT_EQ(loaded.shards[0].port, 7001);
  EXPECT_EQ(loaded.shards[1].name, "shard1");
  EXPECT_EQ(loaded.shards[1].port, 7002);
  EXPECT_TRUE(loaded.shards[0].slots.empty());
}

// Every key the loader knows appears in proxy.yaml: a key present in the file but missing from
// this list (or the other way round) fails here.
TEST(ConfigDefaultsTest, ProxyYamlListsEveryKey) {
  Config c;
  auto errors = loadYamlFile(kConfDir + "proxy.yaml", &c);
  ASSERT_TRUE(errors.empty()) << dump(errors);
  std::ifstream in(kConfDir + "proxy.yaml");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (const char* key : {"listen:",
                          "host:",
                          "port:",
                          "workers:",
                          "shards:",
                          "name:",
                          "address:",
                          "slots:",
                          "backend:",
                          "connections:",
                          "connect_timeout_ms:",
                          "reconnect_min_ms:",
                          "reconnect_max_ms:",
                          "timeout_ms:",
                          "slow_timeout_ms:",
                          "slow_commands:",
                          "ping_interval_ms:",
                          "failure_limit:",
                          "retry_timeout_ms:",
                          "retry_timeout_max_ms:",
                          "read_from:",
                          "username:",
                          "password:",
                          "replicas:",
                          "sentinel:",
                          "master_name_prefix:",
                          "mode:",
                          "cluster_seeds:",
                          "cluster_refresh_ms:",
                          "max_redirects:",
                          "limits:",
                          "max_bulk_len:",
                          "max_array_len:",
                          "max_inline_len:",
                          "max_inflight_per_client:",
                          "client_output_buffer:",
                          "max_clients:",
                          "timeout:",
                          "tcp_keepalive:",
                          "buffer_pool_bytes:",
                          "shutdown_timeout_ms:",
                          "log_level:",
                          "metrics:",
                          "threshold_us:",
                          "max_len:",
                          "slowlog:",
                          "auth:",
                          "users:",
                          "read_only:",
                          "admin:",
                          "deny_commands:",
                          "allow_config_set:",
                          "keyless_scripts:",
                          "io_uring:"}) {
    EXPECT_NE(text.find(key), std::string::npos) << key;
  }
}

TEST(ConfigDefaultsTest, CommentedSlotExampleIsValid) {
  // The commented-out explicit-slots example in proxy.yaml, uncommented.
  Config c;
  auto errors = loadAndValidateYaml(R"(
shards:
  - address: 127.0.0.1:7001
    slots: [0-8191]
  - address: 127.0.0.1:7002
    slots: [8192-16000, 16001-16383]
)",
                                    &c);
  EXPECT_TRUE(errors.empty()) << dump(errors);
}

TEST(ConfigDefaultsTest, FourShardExampleValidates) {
  Config c;
  CommandLine cl;
  cl.config_path = kConfDir + "proxy-4shards.yaml";
  auto errors = buildConfig(cl, &c);
  ASSERT_TRUE(errors.empty()) << dump(errors);
  ASSERT_EQ(c.shards.size(), 4u);
  EXPECT_EQ(c.shards[3].slots.back().last, 16383);
}

}  // namespace
}  // namespace sp::config
