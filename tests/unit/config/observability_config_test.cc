// Tests the observability keys of the config: metrics.listen (YAML, --metrics-listen, "off"),
// slowlog.threshold_us and slowlog.max_len, each error naming its path or flag.
#include <gtest/gtest.h>

#include <initializer_list>
#include <string>
#include <vector>

#include "config/loader.h"
#include "config_errors.h"

namespace sp::config {
namespace {

using test::dump;
using test::hasError;

constexpr const char* kShards = "shards:\n  - address: 127.0.0.1:7001\n";

std::vector<ConfigError> parseFlags(std::initializer_list<const char*> args, CommandLine* out) {
  std::vector<const char*> argv = {"shardproxy"};
  argv.insert(argv.end(), args.begin(), args.end());
  *out = CommandLine{};
  return parseCommandLine(static_cast<int>(argv.size()), argv.data(), out);
}

TEST(ObservabilityConfigTest, DefaultsServeMetricsOnLoopback) {
  const Config c;
  EXPECT_EQ(c.metrics_listen, "127.0.0.1:9121");
  EXPECT_EQ(c.ready_quorum_percent, 100u);
  EXPECT_EQ(c.slowlog_threshold_us, 10000u);
  EXPECT_EQ(c.slowlog_max_len, 128u);
}

TEST(ObservabilityConfigTest, YamlKeysAreRead) {
  Config c;
  auto errors = loadAndValidateYaml(std::string(kShards) +
                                        "metrics:\n  listen: \"[::1]:9200\"\n"
                                        "  ready_quorum: 50\n"
                                        "log:\n  level: warn\n  file: /var/log/sp.log\n"
                                        "pidfile: /run/sp.pid\n"
                                        "slowlog:\n  threshold_us: 0\n  max_len: 5\n",
                                    &c);
  ASSERT_TRUE(errors.empty()) << dump(errors);
  EXPECT_EQ(c.metrics_listen, "[::1]:9200");
  EXPECT_EQ(c.ready_quorum_percent, 50u);
  EXPECT_EQ(c.log_level, "warn");
  EXPECT_EQ(c.log_file, "/var/log/sp.log");
  EXPECT_EQ(c.pidfile, "/run/sp.pid");
  EXPECT_EQ(c.slowlog_threshold_us, 0u);
  EXPECT_EQ(c.slowlog_max_len, 5u);
}

TEST(ObservabilityConfigTest, EmptyListenDisablesMetrics) {
  Config c;
  auto errors = loadAndValidateYaml(std::string(kShards) + "metrics:\n  listen: \"\"\n", &c);
  ASSERT_TRUE(errors.empty()) << dump(errors);
  EXPECT_EQ(c.metrics_listen, "");
}

TEST(ObservabilityConfigTest, BadValuesNameTheirPath) {
  Config c;
  auto errors = loadAndValidateYaml(std::string(kShards) +
                                        "metrics:\n  listen: nowhere\n  port: 1\n"
                                        "  ready_quorum: 101\n"
                                        "log:\n  level: loud\n  rotate: 3\n"
                                        "slowlog:\n  threshold_us: -1\n  max_len: 2000000\n"
                                        "  size: 3\n",
                                    &c);
  EXPECT_TRUE(hasError(errors, "metrics.listen", "")) << dump(errors);
  EXPECT_TRUE(hasError(errors, "metrics.port", "unknown key")) << dump(errors);
  EXPECT_TRUE(hasError(errors, "metrics.ready_quorum", "")) << dump(errors);
  EXPECT_TRUE(hasError(errors, "log_level", "unknown level 'loud'")) << dump(errors);
  EXPECT_TRUE(hasError(errors, "log.rotate", "unknown key")) << dump(errors);
  EXPECT_TRUE(hasError(errors, "slowlog.threshold_us", "")) << dump(errors);
  EXPECT_TRUE(hasError(errors, "slowlog.max_len", "")) << dump(errors);
  EXPECT_TRUE(hasError(errors, "slowlog.size", "unknown key")) << dump(errors);
}

TEST(ObservabilityConfigTest, FlagOverridesTheFileAndOffDisables) {
  CommandLine cl;
  auto errors =
      parseFlags({"--shards", "127.0.0.1:7001", "--metrics-listen", "127.0.0.1:9999"}, &cl);
  ASSERT_TRUE(errors.empty()) << dump(errors);
  Config c;
  errors = buildConfig(cl, &c);
  ASSERT_TRUE(errors.empty()) << dump(errors);
  EXPECT_EQ(c.metrics_listen, "127.0.0.1:9999");

  errors = parseFlags({"--shards", "127.0.0.1:7001", "--metrics-listen=off"}, &cl);
  ASSERT_TRUE(errors.empty()) << dump(errors);
  errors = buildConfig(cl, &c);
  ASSERT_TRUE(errors.empty()) << dump(errors);
  EXPECT_EQ(c.metrics_listen, "");
}

TEST(ObservabilityConfigTest, BadFlagValueIsAnError) {
  CommandLine cl;
  auto errors = parseFlags({"--metrics-listen", "9121"}, &cl);
  EXPECT_TRUE(hasError(errors, "--metrics-listen", "off")) << dump(errors);
  EXPECT_TRUE(cl.metrics_listen.empty());
}

TEST(ObservabilityConfigTest, UsageMentionsTheFlag) {
  EXPECT_NE(usage().find("--metrics-listen"), std::string::npos);
}

}  // namespace
}  // namespace sp::config
