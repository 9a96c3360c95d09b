// Tests for config/command_line.cc: flag forms, values, errors naming the flag, --shards.
#include <gtest/gtest.h>

#include <initializer_list>
#include <string>
#include <vector>

#include "config/loader.h"
#include "config/value_parser.h"
#include "config_errors.h"

namespace sp::config {
namespace {

using test::dump;
using test::hasError;

std::vector<ConfigError> parse(std::initializer_list<const char*> args, CommandLine* out) {
  std::vector<const char*> argv = {"shardproxy"};
  argv.insert(argv.end(), args.begin(), args.end());
  *out = CommandLine{};
  return parseCommandLine(static_cast<int>(argv.size()), argv.data(), out);
}

TEST(CommandLineTest, NoArgumentsGiveNoOverrides) {
  CommandLine cl;
  EXPECT_TRUE(parse({}, &cl).empty());
  EXPECT_TRUE(cl.config_path.empty());
  EXPECT_FALSE(cl.check_config);
  EXPECT_FALSE(cl.show_help);
  EXPECT_FALSE(cl.show_version);
  EXPECT_TRUE(cl.listen_host.empty());
  EXPECT_EQ(cl.port, -1);
  EXPECT_EQ(cl.workers, -1);
  EXPECT_TRUE(cl.shards.empty());
  EXPECT_TRUE(cl.log_level.empty());
}

TEST(CommandLineTest, SpaceAndEqualsForms) {
  CommandLine a;
  auto errors = parse({"--config", "p.yaml", "--listen", "0.0.0.0", "--port", "7000", "--workers",
                       "3", "--shards", "127.0.0.1:1,127.0.0.1:2", "--log-level", "debug"},
                      &a);
  ASSERT_TRUE(errors.empty()) << dump(errors);
  CommandLine b;
  errors = parse({"--config=p.yaml", "--listen=0.0.0.0", "--port=7000", "--workers=3",
                  "--shards=127.0.0.1:1,127.0.0.1:2", "--log-level=debug"},
                 &b);
  ASSERT_TRUE(errors.empty()) << dump(errors);
  for (const CommandLine* cl : {&a, &b}) {
    EXPECT_EQ(cl->config_path, "p.yaml");
    EXPECT_EQ(cl->listen_host, "0.0.0.0");
    EXPECT_EQ(cl->port, 7000);
    EXPECT_EQ(cl->workers, 3);
    EXPECT_EQ(cl->shards, "127.0.0.1:1,127.0.0.1:2");
    EXPECT_EQ(cl->log_level, "debug");
    EXPECT_FALSE(cl->check_config);
  }
}

TEST(CommandLineTest, ShortForms) {
  CommandLine cl;
  ASSERT_TRUE(parse({"-c", "x.yaml", "-h"}, &cl).empty());
  EXPECT_EQ(cl.config_path, "x.yaml");
  EXPECT_TRUE(cl.show_help);
}

TEST(CommandLineTest, HelpAndVersion) {
  CommandLine cl;
  ASSERT_TRUE(parse({"--help", "--version"}, &cl).empty());
  EXPECT_TRUE(cl.show_help);
  EXPECT_TRUE(cl.show_version);
  EXPECT_TRUE(hasError(parse({"--help=yes"}, &cl), "--help", "takes no value"));
  const std::string text = usage();
  for (const char* flag : {"--config", "-c", "--check-config", "--listen", "--port", "--workers",
                           "--shards", "--log-level", "--help", "--version"}) {
    EXPECT_NE(text.find(flag), std::string::npos) << flag;
  }
}

TEST(CommandLineTest, CheckConfig) {
  CommandLine cl;
  ASSERT_TRUE(parse({"--check-config", "conf/proxy.yaml"}, &cl).empty());
  EXPECT_TRUE(cl.check_config);
  EXPECT_EQ(cl.config_path, "conf/proxy.yaml");
  ASSERT_TRUE(parse({"--check-config=a.yaml", "--workers", "2"}, &cl).empty());
  EXPECT_TRUE(cl.check_config);
  EXPECT_EQ(cl.config_path, "a.yaml");
  EXPECT_EQ(cl.workers, 2);
  EXPECT_TRUE(hasError(parse({"--check-config"}, &cl), "--check-config", "missing value"));
}

TEST(CommandLineTest, WorkersZeroMeansOnePerCore) {
  CommandLine cl;
  ASSERT_TRUE(parse({"--workers", "0"}, &cl).empty());
  EXPECT_EQ(cl.workers, 0);  // resolved to a core count by main, not here
}

TEST(CommandLineTest, NoIoUringTurnsTheRingOff) {
  CommandLine cl;
  ASSERT_TRUE(parse({"--shards", "127.0.0.1:1"}, &cl).empty());
  Config on;
  ASSERT_TRUE(buildConfig(cl, &on).empty());
  EXPECT_TRUE(on.io_uring);  // the default
  ASSERT_TRUE(parse({"--shards", "127.0.0.1:1", "--no-io-uring"}, &cl).empty());
  EXPECT_TRUE(cl.no_io_uring);
  Config off;
  auto errors = buildConfig(cl, &off);
  ASSERT_TRUE(errors.empty()) << dump(errors);
  EXPECT_FALSE(off.io_uring);
  EXPECT_TRUE(hasError(parse({"--no-io-uring=yes"}, &cl), "--no-io-uring", "takes no value"));
}

TEST(CommandLineTest, UnknownFlagsAndStrayArguments) {
  CommandLine cl;
  auto errors = parse({"--bogus", "--portt=1", "-x", "stray", "--"}, &cl);
  EXPECT_TRUE(hasError(errors, "--bogus", "unknown flag"));
  EXPECT_TRUE(hasError(errors, "--portt", "unknown flag"));
  EXPECT_TRUE(hasError(errors, "-x", "unknown flag"));
  EXPECT_TRUE(hasError(errors, "stray", "unexpected argument"));
  EXPECT_TRUE(hasError(errors, "--", "unknown flag"));
  EXPECT_EQ(errors.size(), 5u) << dump(errors);
}

TEST(CommandLineTest, LogFileAndPidfile) {
  CommandLine cl;
  ASSERT_TRUE(parse({"--log-file", "/var/log/sp.log", "--pidfile=/run/sp.pid"}, &cl).empty());
  EXPECT_EQ(cl.log_file, "/var/log/sp.log");
  EXPECT_EQ(cl.pidfile, "/run/sp.pid");
  Config c;
  cl.shards = "127.0.0.1:7001";
  ASSERT_TRUE(buildConfig(cl, &c).empty());
  EXPECT_EQ(c.log_file, "/var/log/sp.log");
  EXPECT_EQ(c.pidfile, "/run/sp.pid");
}

TEST(CommandLineTest, MissingValues) {
  CommandLine cl;
  EXPECT_TRUE(hasError(parse({"--config"}, &cl), "--config", "missing value"));
  EXPECT_TRUE(hasError(parse({"-c"}, &cl), "-c", "missing value"));  // named as typed
  EXPECT_TRUE(hasError(parse({"--port="}, &cl), "--port", "missing value"));
  EXPECT_TRUE(hasError(parse({"--log-file="}, &cl), "--log-file", "missing value"));
  EXPECT_TRUE(hasError(parse({"--pidfile"}, &cl), "--pidfile", "missing value"));
  auto errors = parse({"--config", "--port", "1"}, &cl);  // a flag is not a value
  EXPECT_TRUE(hasError(errors, "--config", "missing value"));
  EXPECT_EQ(cl.port, 1);
}

TEST(CommandLineTest, BadValuesNameTheFlag) {
  CommandLine cl;
  auto errors = parse({"--port", "70000", "--workers", "-1", "--log-level", "loud", "--shards",
                       "127.0.0.1:1,foo", "--listen", "bad host"},
                      &cl);
  EXPECT_TRUE(hasError(errors, "--port", "port must be 1..65535, got '70000'"));
  EXPECT_TRUE(hasError(errors, "--workers", "expected a non-negative integer, got '-1'"));
  EXPECT_TRUE(hasError(errors, "--log-level", "unknown level 'loud'"));
  EXPECT_TRUE(hasError(errors, "--shards", "expected host:port, got 'foo'"));
  EXPECT_TRUE(hasError(errors, "--listen", "expected HOST or HOST:PORT"));
  EXPECT_EQ(errors.size(), 5u) << dump(errors);
  EXPECT_TRUE(hasError(parse({"--port", "65536"}, &cl), "--port", "got '65536'"));
  EXPECT_TRUE(hasError(parse({"--port", "80x"}, &cl), "--port", "expected a port number"));
  EXPECT_TRUE(hasError(parse({"--workers", "2x"}, &cl), "--workers", "expected an integer"));
  EXPECT_TRUE(hasError(parse({"--workers", "5000"}, &cl), "--workers", "too large"));
}

TEST(CommandLineTest, ListenForms) {
  struct Case {
    const char* arg;
    const char* host;
    int port;
  } cases[] = {
      {"0.0.0.0", "0.0.0.0", -1},
      {"localhost:7000", "localhost", 7000},
      {"[::1]:7001", "::1", 7001},
      {"[::]", "::", -1},
      {"::", "::", -1},
      {"2001:db8::1", "2001:db8::1", -1},
  };
  for (const Case& c : cases) {
    CommandLine cl;
    auto errors = parse({"--listen", c.arg}, &cl);
    ASSERT_TRUE(errors.empty()) << c.arg << "\n" << dump(errors);
    EXPECT_EQ(cl.listen_host, c.host) << c.arg;
    EXPECT_EQ(cl.port, c.port) << c.arg;
  }
  CommandLine cl;
  EXPECT_TRUE(hasError(parse({"--listen", "h:0"}, &cl), "--listen", "port must be 1..65535"));
  EXPECT_TRUE(hasError(parse({"--listen", "[::1"}, &cl), "--listen", ""));
  // --port wins over a port in --listen, in either order.
  ASSERT_TRUE(parse({"--port", "9", "--listen", "h:8"}, &cl).empty());
  EXPECT_EQ(cl.port, 9);
  ASSERT_TRUE(parse({"--listen", "h:8", "--port", "9"}, &cl).empty());
  EXPECT_EQ(cl.port, 9);
}

TEST(CommandLineTest, LaterFlagsWin) {
  CommandLine cl;
  ASSERT_TRUE(parse({"--workers", "1", "--workers=2"}, &cl).empty());
  EXPECT_EQ(cl.workers, 2);
}

TEST(ShardListTest, ParsesAddressesIntoNamedShards) {
  std::vector<ShardConfig> shards;
  auto errors = parseShardList("127.0.0.1:7001, [::1]:7002,redis.local:7003", &shards);
  ASSERT_TRUE(errors.empty()) << dump(errors);
  ASSERT_EQ(shards.size(), 3u);
  EXPECT_EQ(shards[0].name, "shard0");
  EXPECT_EQ(shards[0].host, "127.0.0.1");
  EXPECT_EQ(shards[0].port, 7001);
  EXPECT_EQ(shards[1].name, "shard1");
  EXPECT_EQ(shards[1].host, "::1");
  EXPECT_EQ(shards[1].port, 7002);
  EXPECT_EQ(shards[2].name, "shard2");
  EXPECT_EQ(shards[2].host, "redis.local");
  EXPECT_TRUE(shards[2].slots.empty());
}

TEST(ShardListTest, ReportsEveryBadEntry) {
  std::vector<ShardConfig> shards;
  auto errors = parseShardList("foo,127.0.0.1:1,,h:0,::1:5", &shards);
  EXPECT_TRUE(hasError(errors, "--shards", "expected host:port, got 'foo'"));
  EXPECT_TRUE(hasError(errors, "--shards", "entry 2 is empty"));
  EXPECT_TRUE(hasError(errors, "--shards", "port must be 1..65535, got '0'"));
  EXPECT_TRUE(hasError(errors, "--shards", "write IPv6 as [addr]:port"));
  EXPECT_EQ(errors.size(), 4u) << dump(errors);
  EXPECT_TRUE(hasError(parseShardList("", &shards), "--shards", "entry 0 is empty"));
}

TEST(ShardListTest, UnixSocketShards) {
  std::vector<ShardConfig> shards;
  auto errors = parseShardList("unix:/run/redis/a.sock,/run/redis/b.sock,127.0.0.1:7001", &shards);
  ASSERT_TRUE(errors.empty()) << dump(errors);
  ASSERT_EQ(shards.size(), 3u);
  EXPECT_EQ(shards[0].host, "/run/redis/a.sock");
  EXPECT_EQ(shards[0].port, 0);
  EXPECT_EQ(shards[1].host, "/run/redis/b.sock");
  EXPECT_EQ(formatHostPort(shards[1].host, shards[1].port), "unix:/run/redis/b.sock");
  EXPECT_EQ(shards[2].port, 7001);
  errors = parseShardList("unix:relative.sock,/" + std::string(kMaxUnixPathBytes, 'x'), &shards);
  EXPECT_TRUE(hasError(errors, "--shards", "a Unix socket needs an absolute path")) << dump(errors);
  EXPECT_TRUE(hasError(errors, "--shards", "is longer than 107 bytes")) << dump(errors);
}

TEST(CommandLineTest, UnixListener) {
  CommandLine cl;
  auto errors = parse({"--listen", "unix:/run/sp.sock", "--unix-perm", "660"}, &cl);
  ASSERT_TRUE(errors.empty()) << dump(errors);
  EXPECT_EQ(cl.listen_unix, "/run/sp.sock");
  EXPECT_EQ(cl.unix_perm, 0660);
  EXPECT_EQ(cl.port, 0);  // alone: no TCP listener
  cl = CommandLine{};
  errors = parse({"--listen", "unix:/run/sp.sock", "--port", "7000"}, &cl);
  ASSERT_TRUE(errors.empty()) << dump(errors);
  EXPECT_EQ(cl.port, 7000);  // beside TCP
  cl = CommandLine{};
  errors = parse({"--listen", "unix:/run/sp.sock", "--listen", "127.0.0.1"}, &cl);
  ASSERT_TRUE(errors.empty()) << dump(errors);
  EXPECT_EQ(cl.port, -1);  // a TCP --listen keeps the configured port
  EXPECT_EQ(cl.listen_host, "127.0.0.1");
  errors = parse({"--listen", "unix:sp.sock", "--unix-perm", "0999"}, &cl);
  EXPECT_TRUE(hasError(errors, "--listen", "needs an absolute path")) << dump(errors);
  EXPECT_TRUE(hasError(errors, "--unix-perm", "expected an octal file mode")) << dump(errors);
}

}  // namespace
}  // namespace sp::config
