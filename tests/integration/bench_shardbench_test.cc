// shardbench against a real redis-server: key counts, --verify (clean and with a value corrupted
// behind its back), short connections really reconnecting, JSON output and merge, and the bad
// conditions (refused, stalled server, AUTH failure, error replies, killed connections, Ctrl-C).
// Every run is bounded: a shardbench that does not exit in time is killed and the test fails.
#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "integration/harness.h"

namespace sp::test {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;
using std::chrono::seconds;

struct BenchRun {
  int exit_code = -1;  // -1: killed by a signal or hung
  std::string log;     // stdout + stderr
  double seconds = 0;
};

class Bench {
 public:
  Bench(uint16_t port, std::vector<std::string> args) {
    std::vector<std::string> argv = {SP_SHARDBENCH_BIN, "-p", std::to_string(port),
                                     "--no-progress"};
    argv.insert(argv.end(), args.begin(), args.end());
    started_ = Clock::now();
    process_ = std::make_unique<Process>(argv, dir_.path() + "/bench.log");
  }
  Process& process() { return *process_; }
  const std::string& dir() const { return dir_.path(); }

  // Waits for the exit; past `timeout` the run counts as hung and is killed.
  BenchRun wait(std::chrono::milliseconds timeout = seconds(60)) {
    BenchRun r;
    const auto deadline = started_ + timeout;
    while (process_->alive() && Clock::now() < deadline) {
      std::this_thread::sleep_for(milliseconds(5));
    }
    r.seconds = std::chrono::duration<double>(Clock::now() - started_).count();
    if (process_->alive()) {
      process_->stop(SIGKILL);
      r.log = process_->log() + "\n[test: shardbench hung and was killed]";
      return r;
    }
    const int st = process_->exitStatus();
    r.exit_code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    r.log = process_->log();
    return r;
  }

 private:
  TempDir dir_;
  Clock::time_point started_;
  std::unique_ptr<Process> process_;
};

BenchRun runBench(uint16_t port, std::vector<std::string> args,
                  std::chrono::milliseconds timeout = seconds(60)) {
  Bench b(port, std::move(args));
  return b.wait(timeout);
}

long long integerReply(const std::string& rendered) {
  const std::string prefix = "(integer) ";
  if (rendered.rfind(prefix, 0) != 0) {
    return -1;
  }
  return std::stoll(rendered.substr(prefix.size()));
}

long long infoField(Client& c, const std::string& field) {
  const std::string info = c.cmd({"INFO", "stats"});
  const size_t at = info.find(field + ":");
  if (at == std::string::npos) {
    return -1;
  }
  return std::stoll(info.substr(at + field.size() + 1));
}

// redis-benchmark's -r n means keys key:000000000000 .. key:<n-1>. With the sequential pattern all
// connections together walk that range in order, so -n 10000 -r 1000 writes every one of the
// 1000 keys (10 times each) and -n 500 -r 1000 writes exactly key:0..key:499: exact DBSIZEs.
TEST(BenchIntegrationTest, KeyCountMatchesTheKeySpace) {
  RedisServer redis;
  Client c(redis.port());
  BenchRun r =
      runBench(redis.port(), {"-n", "10000", "-r", "1000", "-t", "set", "-q", "--key-pattern=S"});
  ASSERT_EQ(r.exit_code, 0) << r.log;
  EXPECT_NE(r.log.find("SET: "), std::string::npos) << r.log;
  EXPECT_EQ(integerReply(c.cmd({"DBSIZE"})), 1000);
  EXPECT_EQ(c.cmd({"EXISTS", "key:000000000000", "key:000000000999"}), "(integer) 2");
  EXPECT_EQ(c.cmd({"EXISTS", "key:000000001000"}), "(integer) 0");
  EXPECT_EQ(c.cmd({"STRLEN", "key:000000000123"}), "(integer) 3");  // -d defaults to 3

  ASSERT_EQ(c.cmd({"FLUSHALL"}), "OK");
  r = runBench(redis.port(),
               {"-n", "500", "-r", "1000", "-t", "set", "-q", "--key-pattern=S", "-d", "256"});
  ASSERT_EQ(r.exit_code, 0) << r.log;
  EXPECT_EQ(integerReply(c.cmd({"DBSIZE"})), 500);
  EXPECT_EQ(c.cmd({"EXISTS", "key:000000000499", "key:000000000500"}), "(integer) 1");
  EXPECT_EQ(c.cmd({"STRLEN", "key:000000000499"}), "(integer) 256");
}

// The default (uniform random, as in redis-benchmark) over 1000 keys with 10000 requests: the
// expected number of keys never drawn is 1000 * (1 - 1/1000)^10000 ~ 0.05, so the count is 1000
// or a hair below, and never a key outside the range. With 100000 requests a miss has a
// probability of about 1e-40: exactly 1000.
TEST(BenchIntegrationTest, RandomKeysStayInsideTheRange) {
  RedisServer redis;
  Client c(redis.port());
  BenchRun r = runBench(redis.port(), {"-n", "10000", "-r", "1000", "-t", "set", "-q"});
  ASSERT_EQ(r.exit_code, 0) << r.log;
  const long long n = integerReply(c.cmd({"DBSIZE"}));
  EXPECT_GE(n, 995);
  EXPECT_LE(n, 1000);
  EXPECT_EQ(c.cmd({"KEYS", "key:00000000[1-9]???"}), "[]");
  r = runBench(redis.port(), {"-n", "100000", "-r", "1000", "-t", "set", "-q", "-P", "16"});
  ASSERT_EQ(r.exit_code, 0) << r.log;
  EXPECT_EQ(integerReply(c.cmd({"DBSIZE"})), 1000);
}

TEST(BenchIntegrationTest, WithoutRAllRequestsUseOneLiteralKey) {
  RedisServer redis;
  Client c(redis.port());
  BenchRun r = runBench(redis.port(), {"-n", "1000", "-t", "set,get", "-q"});
  ASSERT_EQ(r.exit_code, 0) << r.log;
  EXPECT_EQ(integerReply(c.cmd({"DBSIZE"})), 1);
  EXPECT_EQ(c.cmd({"GET", "key:__rand_int__"}), "xxx");
}

TEST(BenchIntegrationTest, VerifyPassesOnACleanServer) {
  RedisServer redis;
  BenchRun r = runBench(redis.port(), {"-t", "set,get", "-r", "2000", "-n", "20000", "-P", "8",
                                       "-c", "20", "--threads", "2", "--verify", "-q"});
  EXPECT_EQ(r.exit_code, 0) << r.log;
  EXPECT_NE(r.log.find("Verify: 0 mismatches"), std::string::npos) << r.log;
  // The mixed memtier workload with pipelined reads right behind writes of the same keys.
  r = runBench(redis.port(), {"--ratio=1:1", "--key-maximum=999", "-n", "20000", "-P", "16", "-c",
                              "10", "--key-pattern=S:S", "--verify", "-d", "100"});
  EXPECT_EQ(r.exit_code, 0) << r.log;
  EXPECT_NE(r.log.find("Verify: 0 mismatches"), std::string::npos) << r.log;
}

// Each of the 200 keys is written once in the SET phase (sequentially, key 199 last) and read
// once in the GET phase (key 199 last again); under --rate 100 each phase takes 2 s. As soon as
// key 199 exists the writes are over, and the test overwrites it with garbage about 2 s before
// shardbench reads it back.
TEST(BenchIntegrationTest, VerifyCatchesAValueCorruptedBehindItsBack) {
  RedisServer redis;
  Client c(redis.port());
  Bench b(redis.port(), {"-t", "set,get", "-r", "200", "-n", "200", "-c", "4", "--rate", "100",
                         "--key-pattern=S:S", "--verify", "-d", "64"});
  const auto deadline = Clock::now() + seconds(20);
  while (c.cmd({"EXISTS", "key:000000000199"}) != "(integer) 1" && Clock::now() < deadline) {
    std::this_thread::sleep_for(milliseconds(5));
  }
  const std::string before = c.cmd({"GET", "key:000000000199"});
  EXPECT_EQ(before.rfind("sbv1:199:", 0), 0u) << before;
  ASSERT_EQ(c.cmd({"SET", "key:000000000199", "garbage"}), "OK");
  BenchRun r = b.wait(seconds(30));
  EXPECT_EQ(r.exit_code, 3) << r.log;
  EXPECT_NE(r.log.find("Verify: 1 mismatches"), std::string::npos) << r.log;
  EXPECT_NE(r.log.find("key number 199"), std::string::npos) << r.log;
  EXPECT_NE(r.log.find("foreign value 'garbage'"), std::string::npos) << r.log;
}

TEST(BenchIntegrationTest, ShortConnectionsReallyReconnect) {
  RedisServer redis;
  Client c(redis.port());
  const long long before = infoField(c, "total_connections_received");
  // 10 connections x 200 requests, a new connection every 10 requests: 200 connections.
  BenchRun r = runBench(redis.port(), {"-t", "set", "-n", "2000", "-c", "10", "-r", "100",
                                       "--reconnect-interval=10"});
  ASSERT_EQ(r.exit_code, 0) << r.log;
  const long long mid = infoField(c, "total_connections_received");
  EXPECT_GE(mid - before, 200) << r.log;
  EXPECT_NE(r.log.find("Connections: 200 opened, 190 reconnects"), std::string::npos) << r.log;
  // redis-benchmark's -k 0: one connection per request.
  r = runBench(redis.port(), {"-t", "get", "-n", "300", "-c", "5", "-k", "0", "-q"});
  ASSERT_EQ(r.exit_code, 0) << r.log;
  EXPECT_GE(infoField(c, "total_connections_received") - mid, 300) << r.log;
}

std::string jsonSummary(const std::string& file) {
  // Python's json module is the independent parser; it prints "phase:ops:histogram total".
  return commandOutput(
      "/usr/bin/python3 -c 'import json,sys\n"
      "d=json.load(open(sys.argv[1]))\n"
      "print(\" \".join(\"%s:%d:%d\" % (p[\"name\"], r[\"ops\"], "
      "sum(c for _, c in r[\"histogram\"][\"buckets\"])) for p in d[\"phases\"] for r in "
      "p[\"rows\"]))' " +
      file + " 2>&1");
}

TEST(BenchIntegrationTest, JsonOutputParsesAndMergeDoublesTheCounts) {
  RedisServer redis;
  TempDir dir;
  const std::string a = dir.path() + "/a.json";
  const std::string b = dir.path() + "/b.json";
  const std::string m = dir.path() + "/m.json";
  BenchRun r = runBench(redis.port(),
                        {"-t", "set,get", "-n", "2000", "-r", "100", "-q", "--json-out-file", a});
  ASSERT_EQ(r.exit_code, 0) << r.log;
  r = runBench(redis.port(),
               {"-t", "set,get", "-n", "2000", "-r", "100", "-q", "--json-out-file=" + b});
  ASSERT_EQ(r.exit_code, 0) << r.log;
  EXPECT_EQ(jsonSummary(a), "SET:2000:2000 GET:2000:2000\n");
  EXPECT_EQ(jsonSummary(b), "SET:2000:2000 GET:2000:2000\n");

  Process merge({SP_SHARDBENCH_BIN, "merge", "--json-out-file", m, a, b}, dir.path() + "/m.log");
  const auto deadline = Clock::now() + seconds(30);
  while (merge.alive() && Clock::now() < deadline) {
    std::this_thread::sleep_for(milliseconds(5));
  }
  ASSERT_FALSE(merge.alive());
  EXPECT_TRUE(WIFEXITED(merge.exitStatus()) && WEXITSTATUS(merge.exitStatus()) == 0) << merge.log();
  EXPECT_NE(merge.log().find("SET: 4000 requests"), std::string::npos) << merge.log();
  EXPECT_EQ(jsonSummary(m), "SET:4000:4000 GET:4000:4000\n");
}

TEST(BenchIntegrationTest, UnreachablePortIsAClearError) {
  const uint16_t port = freePort();  // nothing listens there
  BenchRun r = runBench(port, {"-t", "set", "-n", "100"}, seconds(20));
  EXPECT_EQ(r.exit_code, 1) << r.log;
  EXPECT_NE(r.log.find("cannot connect to 127.0.0.1:" + std::to_string(port)), std::string::npos)
      << r.log;
  EXPECT_NE(r.log.find("refused"), std::string::npos) << r.log;
}

// A listener that never accepts, its accept queue already full: the kernel drops further SYNs,
// so a connect neither succeeds nor fails and only the connect timeout ends it.
TEST(BenchIntegrationTest, ConnectTimeout) {
  const int listener = ::socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(listener, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  ASSERT_EQ(::listen(listener, 0), 0);
  socklen_t len = sizeof(addr);
  ASSERT_EQ(::getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  const uint16_t port = ntohs(addr.sin_port);
  std::vector<int> fillers;
  for (int i = 0; i < 3; ++i) {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    ::fcntl(fd, F_SETFL, O_NONBLOCK);
    ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
    fillers.push_back(fd);
  }
  std::this_thread::sleep_for(milliseconds(100));
  BenchRun r =
      runBench(port, {"-t", "set", "-n", "10", "-c", "2", "--connect-timeout", "500"}, seconds(20));
  EXPECT_EQ(r.exit_code, 1) << r.log;
  EXPECT_NE(r.log.find("timed out connecting to 127.0.0.1:" + std::to_string(port)),
            std::string::npos)
      << r.log;
  EXPECT_LT(r.seconds, 5);
  for (int fd : fillers) {
    ::close(fd);
  }
  ::close(listener);
}

TEST(BenchIntegrationTest, StalledServerEndsTheRunWithATimeout) {
  RedisServer redis;
  redis.pause();
  BenchRun r = runBench(
      redis.port(),
      {"-t", "set", "-n", "100000", "--request-timeout", "1000", "--connect-timeout", "1000"},
      seconds(20));
  redis.resume();
  EXPECT_EQ(r.exit_code, 1) << r.log;
  EXPECT_NE(r.log.find("request timeout"), std::string::npos) << r.log;
  EXPECT_LT(r.seconds, 10) << r.log;
}

TEST(BenchIntegrationTest, AuthFailureAndSuccess) {
  RedisServer redis({"--requirepass", "s3cret"});
  BenchRun r = runBench(redis.port(), {"-t", "set", "-n", "100", "-a", "wrong"}, seconds(20));
  EXPECT_EQ(r.exit_code, 1) << r.log;
  EXPECT_NE(r.log.find("AUTH/SELECT failed"), std::string::npos) << r.log;
  r = runBench(redis.port(),
               {"-t", "set", "-n", "100", "-a", "s3cret", "--dbnum", "2", "-r", "10", "-q"},
               seconds(20));
  EXPECT_EQ(r.exit_code, 0) << r.log;
  r = runBench(redis.port(), {"-t", "set", "-n", "100"}, seconds(20));
  EXPECT_EQ(r.exit_code, 1) << r.log;  // no password: NOAUTH error replies
  EXPECT_NE(r.log.find("NOAUTH="), std::string::npos) << r.log;
}

TEST(BenchIntegrationTest, ErrorRepliesAreCountedByKind) {
  RedisServer redis;
  Client c(redis.port());
  ASSERT_EQ(c.cmd({"SET", "plain", "v"}), "OK");
  BenchRun r = runBench(redis.port(), {"-n", "100", "-c", "5", "--command=lpush plain x",
                                       "--command=get plain", "--command=nosuchcommand"});
  EXPECT_EQ(r.exit_code, 1) << r.log;
  EXPECT_NE(r.log.find("Errors in LPUSH: 35 WRONGTYPE=35"), std::string::npos) << r.log;
  EXPECT_NE(r.log.find("Errors in NOSUCHCOMMAND: 30 ERR=30"), std::string::npos) << r.log;
  EXPECT_NE(r.log.find("error replies"), std::string::npos) << r.log;
}

TEST(BenchIntegrationTest, ServerClosingConnectionsEndsTheRun) {
  RedisServer redis;
  Client c(redis.port());
  Bench b(redis.port(), {"-t", "set", "-n", "1000000", "--rate", "2000", "-c", "4"});
  const auto deadline = Clock::now() + seconds(10);
  while (infoField(c, "total_connections_received") < 5 && Clock::now() < deadline) {
    std::this_thread::sleep_for(milliseconds(10));
  }
  std::this_thread::sleep_for(milliseconds(200));
  EXPECT_GE(integerReply(c.cmd({"CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes"})), 1);
  BenchRun r = b.wait(seconds(20));
  EXPECT_EQ(r.exit_code, 1) << r.log;
  // A connection killed with a request in flight may end in a reset rather than an orderly close.
  EXPECT_TRUE(r.log.find("lost: the server closed the connection") != std::string::npos ||
              r.log.find("lost: connection reset by peer") != std::string::npos)
      << r.log;
}

// With --max-reconnects the killed connections come back and the run completes; a request that
// happened to be in flight when its connection died is a CONNECTION_LOST error (exit 1).
TEST(BenchIntegrationTest, MaxReconnectsSurvivesKilledConnections) {
  RedisServer redis;
  Client c(redis.port());
  Bench b(redis.port(),
          {"-t", "set", "-n", "2000", "--rate", "1000", "-c", "4", "--max-reconnects", "10"});
  const auto deadline = Clock::now() + seconds(10);
  while (infoField(c, "total_connections_received") < 5 && Clock::now() < deadline) {
    std::this_thread::sleep_for(milliseconds(10));
  }
  std::this_thread::sleep_for(milliseconds(300));
  EXPECT_EQ(integerReply(c.cmd({"CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes"})), 4);
  BenchRun r = b.wait(seconds(30));
  EXPECT_TRUE(r.exit_code == 0 ||
              (r.exit_code == 1 && r.log.find("CONNECTION_LOST=") != std::string::npos))
      << r.log;
  EXPECT_NE(r.log.find("Connections: 8 opened, 0 reconnects, 4 closed by the server"),
            std::string::npos)
      << r.log;
}

TEST(BenchIntegrationTest, CtrlCPrintsThePartialReport) {
  RedisServer redis;
  Client c(redis.port());
  Bench b(redis.port(), {"-t", "set", "-n", "1000000", "--rate", "1000", "-c", "4"});
  const auto deadline = Clock::now() + seconds(10);
  while (infoField(c, "total_commands_processed") < 300 && Clock::now() < deadline) {
    std::this_thread::sleep_for(milliseconds(10));
  }
  b.process().signal(SIGINT);
  BenchRun r = b.wait(seconds(20));
  EXPECT_EQ(r.exit_code, 130) << r.log;
  EXPECT_NE(r.log.find("(interrupted)"), std::string::npos) << r.log;
  EXPECT_NE(r.log.find("ALL STATS"), std::string::npos) << r.log;
}

TEST(BenchIntegrationTest, RateLimitsTheThroughput) {
  RedisServer redis;
  BenchRun r =
      runBench(redis.port(), {"-t", "set", "-n", "1000", "--rate", "1000", "-c", "10", "-q"});
  ASSERT_EQ(r.exit_code, 0) << r.log;
  EXPECT_GE(r.seconds, 0.9) << r.log;
  // The reported rate is the paced one (1000 slots over 0.999 s, plus however late the last
  // reply lands on a loaded machine), not the server's capacity of tens of thousands per second.
  const std::string label = "SET: ";
  const size_t at = r.log.find(label);
  ASSERT_NE(at, std::string::npos) << r.log;
  const double rate = std::strtod(r.log.c_str() + at + label.size(), nullptr);
  EXPECT_LE(rate, 1010.0) << r.log;
  EXPECT_GE(rate, 500.0) << r.log;
}

// --source-address spreads the connections over local addresses (127.0.0.2 and 127.0.0.3 are
// loopback too, but not for Redis's protected mode, hence --protected-mode no).
TEST(BenchIntegrationTest, SourceAddressesBindTheConnectionsInTurn) {
  RedisServer redis({"--protected-mode", "no"});
  Client c(redis.port());
  Bench b(redis.port(), {"-t", "set", "-n", "4000", "--rate", "2000", "-c", "4", "--source-address",
                         "127.0.0.2,127.0.0.3"});
  // Every client but this test's own (cmd=client) must come from one of the two addresses.
  size_t from_sources = 0;
  size_t from_elsewhere = 0;
  std::string list;
  const auto deadline = Clock::now() + seconds(10);
  while (from_sources < 4 && Clock::now() < deadline) {
    std::this_thread::sleep_for(milliseconds(20));
    list = c.cmd({"CLIENT", "LIST", "TYPE", "normal"});
    from_sources = 0;
    from_elsewhere = 0;
    size_t start = 0;
    while (start < list.size()) {
      size_t end = list.find('\n', start);
      end = end == std::string::npos ? list.size() : end;
      const std::string line = list.substr(start, end - start);
      start = end + 1;
      if (line.find("addr=") == std::string::npos || line.find("cmd=client") != std::string::npos) {
        continue;
      }
      const bool ours = line.find("addr=127.0.0.2:") != std::string::npos ||
                        line.find("addr=127.0.0.3:") != std::string::npos;
      (ours ? from_sources : from_elsewhere)++;
    }
  }
  EXPECT_EQ(from_sources, 4u) << list;
  EXPECT_EQ(from_elsewhere, 0u) << list;
  BenchRun r = b.wait(seconds(30));
  EXPECT_EQ(r.exit_code, 0) << r.log;
  EXPECT_NE(list.find("addr=127.0.0.2:"), std::string::npos) << list;
  EXPECT_NE(list.find("addr=127.0.0.3:"), std::string::npos) << list;
}

TEST(BenchIntegrationTest, SourceAddressErrorsAreClear) {
  RedisServer redis;
  BenchRun wrong_family =
      runBench(redis.port(), {"-n", "10", "--source-address", "::1"}, seconds(10));
  EXPECT_EQ(wrong_family.exit_code, 1) << wrong_family.log;
  EXPECT_NE(wrong_family.log.find("is not an IPv4 address"), std::string::npos) << wrong_family.log;
  // 192.0.2.1 (TEST-NET-1) is not an address of this machine, so bind() refuses it.
  BenchRun foreign =
      runBench(redis.port(), {"-n", "10", "--source-address", "192.0.2.1"}, seconds(10));
  EXPECT_EQ(foreign.exit_code, 1) << foreign.log;
  EXPECT_NE(foreign.log.find("cannot bind to source address 192.0.2.1"), std::string::npos)
      << foreign.log;
  BenchRun not_numeric = runBench(redis.port(), {"--source-address", "localhost"}, seconds(10));
  EXPECT_EQ(not_numeric.exit_code, 2) << not_numeric.log;
  EXPECT_NE(not_numeric.log.find("not a numeric IPv4 or IPv6 address"), std::string::npos)
      << not_numeric.log;
}

TEST(BenchIntegrationTest, BadFlagsExitWithStatusTwo) {
  BenchRun r = runBench(1, {"-c", "10", "--clients", "5"}, seconds(10));
  EXPECT_EQ(r.exit_code, 2) << r.log;
  EXPECT_NE(r.log.find("cannot be used together"), std::string::npos) << r.log;
}

}  // namespace
}  // namespace sp::test
