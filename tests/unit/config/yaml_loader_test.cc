// Tests for config/yaml_loader.cc: the schema, YAML paths in errors, types, syntax errors.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "config/loader.h"
#include "config_errors.h"

namespace sp::config {
namespace {

using test::countPath;
using test::dump;
using test::hasError;

TEST(YamlLoaderTest, FullSchemaIsRead) {
  Config c;
  auto errors = loadYaml(R"(
listen:
  host: 0.0.0.0
  port: 7000
workers: 4
shards:
  - name: a
    address: 10.0.0.1:7001
    slots: [0-8191, 9000, 9001-9100]
  - address: "[::1]:7002"
    slots: ["8192-8999", 9101 - 16383]
backend:
  connections: 2
  connect_timeout_ms: 250
  reconnect_min_ms: 10
  reconnect_max_ms: 900
limits:
  max_bulk_len: 1gb
  max_array_len: 1000
  max_inline_len: 4kb
  max_inflight_per_client: 16
  client_output_buffer: 10MB
  max_clients: 50
shutdown_timeout_ms: 0
log_level: debug
io_uring: false
)",
                         &c);
  ASSERT_TRUE(errors.empty()) << dump(errors);
  EXPECT_EQ(c.listen_host, "0.0.0.0");
  EXPECT_EQ(c.listen_port, 7000);
  EXPECT_EQ(c.workers, 4);
  ASSERT_EQ(c.shards.size(), 2u);
  EXPECT_EQ(c.shards[0].name, "a");
  EXPECT_EQ(c.shards[0].host, "10.0.0.1");
  EXPECT_EQ(c.shards[0].port, 7001);
  ASSERT_EQ(c.shards[0].slots.size(), 3u);
  EXPECT_EQ(c.shards[0].slots[0].first, 0);
  EXPECT_EQ(c.shards[0].slots[0].last, 8191);
  EXPECT_EQ(c.shards[0].slots[1].first, 9000);
  EXPECT_EQ(c.shards[0].slots[1].last, 9000);
  EXPECT_EQ(c.shards[0].slots[2].first, 9001);
  EXPECT_EQ(c.shards[0].slots[2].last, 9100);
  EXPECT_EQ(c.shards[1].name, "shard1");  // default name is shard<index>
  EXPECT_EQ(c.shards[1].host, "::1");
  EXPECT_EQ(c.shards[1].port, 7002);
  ASSERT_EQ(c.shards[1].slots.size(), 2u);
  EXPECT_EQ(c.shards[1].slots[1].first, 9101);
  EXPECT_EQ(c.shards[1].slots[1].last, 16383);
  EXPECT_EQ(c.backend_connections, 2);
  EXPECT_EQ(c.backend_connect_timeout_ms, 250u);
  EXPECT_EQ(c.backend_reconnect_min_ms, 10u);
  EXPECT_EQ(c.backend_reconnect_max_ms, 900u);
  EXPECT_EQ(c.limits.max_bulk_len, 1ull << 30);
  EXPECT_EQ(c.limits.max_array_len, 1000u);
  EXPECT_EQ(c.limits.max_inline_len, 4096u);
  EXPECT_EQ(c.limits.max_inflight_per_client, 16u);
  EXPECT_EQ(c.limits.client_output_buffer, 10ull << 20);
  EXPECT_EQ(c.limits.max_clients, 50u);
  EXPECT_EQ(c.shutdown_timeout_ms, 0u);
  EXPECT_EQ(c.log_level, "debug");
  EXPECT_FALSE(c.io_uring);
}

TEST(YamlLoaderTest, MissingKeysKeepDefaults) {
  Config c;
  auto errors = loadYaml("workers: 2\n", &c);
  ASSERT_TRUE(errors.empty()) << dump(errors);
  const Config defaults;
  EXPECT_EQ(c.workers, 2);
  EXPECT_EQ(c.listen_port, defaults.listen_port);
  EXPECT_EQ(c.limits.max_bulk_len, defaults.limits.max_bulk_len);
  EXPECT_TRUE(loadYaml("", &c).empty());
  EXPECT_TRUE(loadYaml("# only a comment\n", &c).empty());
  EXPECT_TRUE(loadYaml("listen:\nbackend:\nlimits:\n", &c).empty());
}

TEST(YamlLoaderTest, UnknownKeysNameTheirPath) {
  Config c;
  auto errors = loadYaml(R"(
wrokers: 1
backend:
  conections: 2
limits:
  max_bulk: 1
shards:
  - address: 127.0.0.1:1
    priority: 3
)",
                         &c);
  EXPECT_TRUE(hasError(errors, "wrokers", "unknown key (did you mean 'workers'?)"));
  EXPECT_TRUE(hasError(errors, "backend.conections", "unknown key (did you mean 'connections'?)"));
  EXPECT_TRUE(hasError(errors, "limits.max_bulk", "unknown key"));
  EXPECT_TRUE(hasError(errors, "shards[0].priority", "unknown key"));
  EXPECT_EQ(errors.size(), 4u) << dump(errors);
}

TEST(YamlLoaderTest, DuplicateKeys) {
  Config c;
  auto errors = loadYaml("workers: 1\nworkers: 2\nlisten:\n  port: 1\n  port: 2\n", &c);
  EXPECT_TRUE(hasError(errors, "workers", "duplicate key"));
  EXPECT_TRUE(hasError(errors, "listen.port", "duplicate key"));
  EXPECT_EQ(c.workers, 1);
}

TEST(YamlLoaderTest, WrongTypes) {
  Config c;
  auto errors = loadYaml(R"(
listen: 127.0.0.1:6380
workers: [1, 2]
backend:
  connections: {a: 1}
limits: 5
shards: {address: 127.0.0.1:1}
log_level:
shutdown_timeout_ms: [1]
)",
                         &c);
  EXPECT_TRUE(hasError(errors, "listen", "expected a map, got '127.0.0.1:6380'"));
  EXPECT_TRUE(hasError(errors, "workers", "expected an integer, got a list"));
  EXPECT_TRUE(hasError(errors, "backend.connections", "expected an integer, got a map"));
  EXPECT_TRUE(hasError(errors, "limits", "expected a map, got '5'"));
  EXPECT_TRUE(hasError(errors, "shards", "expected a list of shards, got a map"));
  EXPECT_TRUE(hasError(errors, "log_level", "expected a string, got nothing"));
  EXPECT_TRUE(hasError(errors, "shutdown_timeout_ms", "expected an integer, got a list"));
  EXPECT_EQ(errors.size(), 7u) << dump(errors);
}

TEST(YamlLoaderTest, TopLevelMustBeAMap) {
  Config c;
  EXPECT_TRUE(hasError(loadYaml("- 1\n- 2\n", &c), "(top level)", "expected a map, got a list"));
  EXPECT_TRUE(hasError(loadYaml("hello\n", &c), "(top level)", "expected a map, got 'hello'"));
}

TEST(YamlLoaderTest, ShardEntryErrors) {
  Config c;
  auto errors = loadYaml(R"(
shards:
  - address: 127.0.0.1:7001
  - address: 127.0.0.1:7002
  - address: foo
  - 127.0.0.1:7004
  - name: nowhere
  - address: 127.0.0.1:0
  - address: 127.0.0.1:70000
  - address: [::1]
  - address: "::1:7009"
  - address: "[::1]:7010"
    name: [x]
)",
                         &c);
  EXPECT_TRUE(hasError(errors, "shards[2].address", "expected host:port, got 'foo'"));
  EXPECT_TRUE(
      hasError(errors, "shards[3]", "expected a map with an address, got '127.0.0.1:7004'"));
  EXPECT_TRUE(hasError(errors, "shards[4].address", "missing"));
  EXPECT_TRUE(hasError(errors, "shards[5].address", "port must be 1..65535, got '0'"));
  EXPECT_TRUE(hasError(errors, "shards[6].address", "port must be 1..65535, got '70000'"));
  EXPECT_TRUE(hasError(errors, "shards[7].address", "quote IPv6 addresses"));
  EXPECT_TRUE(hasError(errors, "shards[8].address", "write IPv6 as [addr]:port"));
  EXPECT_TRUE(hasError(errors, "shards[9].name", "expected a string, got a list"));
  EXPECT_EQ(errors.size(), 8u) << dump(errors);
  // Broken entries still take their place, so later indices match the file.
  ASSERT_EQ(c.shards.size(), 10u);
  EXPECT_EQ(c.shards[9].host, "::1");
  EXPECT_EQ(c.shards[9].port, 7010);
}

TEST(YamlLoaderTest, UnquotedIPv6AddressIsASyntaxErrorWithPosition) {
  Config c;
  auto errors = loadYaml("shards:\n  - address: [::1]:7001\n", &c);
  ASSERT_EQ(errors.size(), 1u) << dump(errors);
  EXPECT_EQ(errors[0].path, "yaml");
  EXPECT_NE(errors[0].message.find("syntax error at line 2, column"), std::string::npos)
      << errors[0].message;
}

TEST(YamlLoaderTest, SlotEntryErrors) {
  Config c;
  auto errors = loadYaml(R"(
shards:
  - address: 127.0.0.1:7001
    slots: [0-100, abc, 5-, -5, 1-2-3, 70000, 3-99999, [1], 16384, 200-100]
  - address: 127.0.0.1:7002
    slots: 0-16383
)",
                         &c);
  EXPECT_TRUE(hasError(errors, "shards[0].slots[1]", "expected a slot or a range a-b, got 'abc'"));
  EXPECT_TRUE(hasError(errors, "shards[0].slots[2]", "got '5-'"));
  EXPECT_TRUE(hasError(errors, "shards[0].slots[3]", "got '-5'"));
  EXPECT_TRUE(hasError(errors, "shards[0].slots[4]", "got '1-2-3'"));
  EXPECT_TRUE(hasError(errors, "shards[0].slots[5]", "slot 70000 is out of range 0..16383"));
  EXPECT_TRUE(hasError(errors, "shards[0].slots[6]", "slot 99999 is out of range 0..16383"));
  EXPECT_TRUE(hasError(errors, "shards[0].slots[7]", "expected a slot or a range a-b, got a list"));
  EXPECT_TRUE(hasError(errors, "shards[1].slots", "expected a list of slots"));
  EXPECT_EQ(errors.size(), 8u) << dump(errors);
  // In uint16 range but past 16383, and reversed ranges, are stored for validate() to report.
  ASSERT_EQ(c.shards[0].slots.size(), 3u);
  EXPECT_EQ(c.shards[0].slots[1].first, 16384);
  EXPECT_EQ(c.shards[0].slots[2].first, 200);
  EXPECT_EQ(c.shards[0].slots[2].last, 100);
}

TEST(YamlLoaderTest, NumbersRejectGarbageAndNegatives) {
  Config c;
  auto errors = loadYaml(R"(
listen:
  port: 6380x
workers: -1
backend:
  connections: 2.5
  connect_timeout_ms: 4294967296
  reconnect_min_ms: " 5"
limits:
  max_bulk_len: abc
  max_array_len: 10k
  max_inline_len: 4gb
  max_inflight_per_client: -3
  client_output_buffer: -1mb
  max_clients: 1e5
shutdown_timeout_ms: 0x10
)",
                         &c);
  EXPECT_TRUE(hasError(errors, "listen.port", "expected a port number, got '6380x'"));
  EXPECT_TRUE(hasError(errors, "workers", "expected a non-negative integer, got '-1'"));
  EXPECT_TRUE(hasError(errors, "backend.connections", "expected an integer, got '2.5'"));
  EXPECT_TRUE(hasError(errors, "backend.connect_timeout_ms", "too large (at most 4294967295)"));
  EXPECT_TRUE(hasError(errors, "backend.reconnect_min_ms", "expected an integer, got ' 5'"));
  EXPECT_TRUE(hasError(errors, "limits.max_bulk_len",
                       "expected a size (e.g. 512mb, 64kb, 1024), got 'abc'"));
  EXPECT_TRUE(hasError(errors, "limits.max_array_len", "expected an integer, got '10k'"));
  EXPECT_TRUE(hasError(errors, "limits.max_inline_len", "too large (at most 4294967295 bytes)"));
  EXPECT_TRUE(hasError(errors, "limits.max_inflight_per_client", "non-negative"));
  EXPECT_TRUE(hasError(errors, "limits.client_output_buffer", "expected a size"));
  EXPECT_TRUE(hasError(errors, "limits.max_clients", "expected an integer, got '1e5'"));
  EXPECT_TRUE(hasError(errors, "shutdown_timeout_ms", "expected an integer, got '0x10'"));
  EXPECT_EQ(errors.size(), 12u) << dump(errors);
  const Config defaults;  // nothing bad was stored
  EXPECT_EQ(c.listen_port, defaults.listen_port);
  EXPECT_EQ(c.workers, defaults.workers);
  EXPECT_EQ(c.limits.max_inline_len, defaults.limits.max_inline_len);
}

TEST(YamlLoaderTest, WorkersAndConnectionsHaveUpperBounds) {
  Config c;
  auto errors = loadYaml("workers: 1025\nbackend:\n  connections: 100000\n", &c);
  EXPECT_TRUE(hasError(errors, "workers", "too large (at most 1024)"));
  EXPECT_TRUE(hasError(errors, "backend.connections", "too large (at most 1024)"));
}

TEST(YamlLoaderTest, SyntaxErrorsReportLineAndColumn) {
  Config c;
  auto errors = loadYaml("listen:\n  host: a\n  port: [1, 2\nworkers: 1\n", &c);
  ASSERT_EQ(errors.size(), 1u) << dump(errors);
  EXPECT_EQ(errors[0].path, "yaml");
  EXPECT_NE(errors[0].message.find("syntax error at line 4, column"), std::string::npos)
      << errors[0].message;
  errors = loadYaml("a: b: c\n", &c);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].message, "syntax error at line 1, column 5: illegal map value");
  errors = loadYaml("a: *undefined\n", &c);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].message.find("line 1"), std::string::npos) << errors[0].message;
}

TEST(YamlLoaderTest, ExceptionsNeverEscape) {
  Config c;
  for (const char* text : {"{", "[", "\t- a", "a: !<!> 1", "? [a]\n: 1\n", "&a [*a]", "\"\\q\"",
                           "%YAML 9.9\n---\na: 1\n", "a: 1\n---\nb: 2\n..."}) {
    EXPECT_NO_THROW(loadYaml(text, &c)) << text;
  }
  // A non-string key.
  EXPECT_TRUE(hasError(loadYaml("? [a]\n: 1\n", &c), "(top level)", "keys must be strings"));
}

TEST(YamlLoaderTest, FileErrorsNameTheFile) {
  Config c;
  auto errors = loadYamlFile("/nonexistent/dir/proxy.yaml", &c);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].path, "/nonexistent/dir/proxy.yaml");
  EXPECT_NE(errors[0].message.find("cannot open"), std::string::npos);

  const std::string path = ::testing::TempDir() + "yaml_loader_test_bad.yaml";
  {
    std::ofstream out(path);
    out << "workers: 1\nlisten: [\n";
  }
  errors = loadYamlFile(path, &c);
  std::remove(path.c_str());
  ASSERT_EQ(errors.size(), 1u) << dump(errors);
  EXPECT_EQ(errors[0].path, path);
  EXPECT_NE(errors[0].message.find("syntax error at line"), std::string::npos);
}

TEST(YamlLoaderTest, EveryErrorIsCollected) {
  Config c;
  auto errors = loadYaml(R"(
listen:
  port: 65536
  hots: x
workers: many
shards:
  - address: foo
  - address: 127.0.0.1:1
    slots: [x]
limits:
  max_bulk_len: 12q
)",
                         &c);
  EXPECT_EQ(countPath(errors, "listen.port"), 1u);
  EXPECT_EQ(countPath(errors, "listen.hots"), 1u);
  EXPECT_EQ(countPath(errors, "workers"), 1u);
  EXPECT_EQ(countPath(errors, "shards[0].address"), 1u);
  EXPECT_EQ(countPath(errors, "shards[1].slots[0]"), 1u);
  EXPECT_EQ(countPath(errors, "limits.max_bulk_len"), 1u);
  EXPECT_EQ(errors.size(), 6u) << dump(errors);
  // Document order.
  EXPECT_EQ(errors.front().path, "listen.port");
  EXPECT_EQ(errors.back().path, "limits.max_bulk_len");
}

TEST(YamlLoaderTest, ClientTimeoutAndKeepalive) {
  Config c;
  EXPECT_EQ(c.limits.timeout, 0u);          // redis.conf's default: never
  EXPECT_EQ(c.limits.tcp_keepalive, 300u);  // redis.conf's default
  auto errors = loadYaml("limits:\n  timeout: 30\n  tcp_keepalive: 0\n", &c);
  ASSERT_TRUE(errors.empty()) << dump(errors);
  EXPECT_EQ(c.limits.timeout, 30u);
  EXPECT_EQ(c.limits.tcp_keepalive, 0u);
  errors = loadYaml("limits:\n  timeout: 1s\n  tcp_keepalive: -1\n  timout: 5\n", &c);
  EXPECT_TRUE(hasError(errors, "limits.timeout", "expected an integer, got '1s'"));
  EXPECT_TRUE(
      hasError(errors, "limits.tcp_keepalive", "expected a non-negative integer, got '-1'"));
  EXPECT_TRUE(hasError(errors, "limits.timout", "unknown key (did you mean 'timeout'?)"));
  EXPECT_EQ(errors.size(), 3u) << dump(errors);
}

TEST(YamlLoaderTest, BufferPoolBytesIsASize) {
  Config c;
  EXPECT_EQ(c.limits.buffer_pool_bytes, 4ull << 20);  // the default: 4 MB per worker
  auto errors = loadYaml("limits:\n  buffer_pool_bytes: 16mb\n", &c);
  ASSERT_TRUE(errors.empty()) << dump(errors);
  EXPECT_EQ(c.limits.buffer_pool_bytes, 16ull << 20);
  errors = loadYaml("limits:\n  buffer_pool_bytes: 0\n", &c);
  ASSERT_TRUE(errors.empty()) << dump(errors);
  EXPECT_EQ(c.limits.buffer_pool_bytes, 0u);
  errors = loadYaml("limits:\n  buffer_pool_bytes: lots\n", &c);
  EXPECT_TRUE(hasError(errors, "limits.buffer_pool_bytes", "expected a size"));
  EXPECT_EQ(errors.size(), 1u) << dump(errors);
}

}  // namespace
}  // namespace sp::config
