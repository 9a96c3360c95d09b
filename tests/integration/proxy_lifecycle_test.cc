// Process-level behaviour of the proxy: several workers on one port, SIGTERM finishing the
// requests in flight and exiting 0, SIGINT on an idle proxy.
#include <gtest/gtest.h>
#include <hiredis/hiredis.h>
#include <signal.h>
#include <sys/wait.h>

#include <atomic>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "integration/harness.h"

namespace sp::test {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;
using std::chrono::seconds;

bool exitedZero(int status) {
  return status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

TEST(LifecycleTest, TwoWorkersServeManyClients) {
  Deployment env(4, 2);
  if (env.direct()) {
    GTEST_SKIP() << "needs the proxy";
  }
  constexpr int kClients = 16;
  std::vector<std::string> failures(kClients);
  std::vector<std::thread> threads;
  for (int c = 0; c < kClients; ++c) {
    threads.emplace_back([&, c] {
      Client client(env.port());
      const std::string p = "w" + std::to_string(c) + ":";
      std::vector<std::string> mset = {"MSET"};
      std::string want = "[";
      std::vector<std::string> mget = {"MGET"};
      for (int i = 0; i < 50; ++i) {
        mset.push_back(p + std::to_string(i));
        mset.push_back(std::to_string(c * 1000 + i));
        mget.push_back(p + std::to_string(i));
        want += (i > 0 ? ", " : "") + std::to_string(c * 1000 + i);
      }
      want += "]";
      for (int round = 0; round < 20; ++round) {
        std::string r = client.cmd(mset);
        if (r != "OK") {
          failures[c] = "MSET: " + r;
          return;
        }
        r = client.cmd(mget);
        if (r != want) {
          failures[c] = "MGET: " + r;
          return;
        }
        r = client.cmd({"INCR", p + "n"});
        if (r != "(integer) " + std::to_string(round + 1)) {
          failures[c] = "INCR: " + r;
          return;
        }
      }
    });
  }
  for (auto& t : threads) {
    t.join();
  }
  for (int c = 0; c < kClients; ++c) {
    EXPECT_EQ(failures[c], "") << "client " << c;
  }
  // Two worker threads at least (plus the main thread).
  std::string tasks =
      commandOutput("ls /proc/" + std::to_string(env.proxy()->process().pid()) + "/task | wc -l");
  EXPECT_GE(std::stoi(tasks), 3) << "threads: " << tasks;
  const int status = env.proxy()->process().stop(SIGTERM);
  EXPECT_TRUE(exitedZero(status)) << "status " << status << "\n" << env.proxy()->process().log();
}

// The inflight count of one shard's line in INFO shards (-1 when missing).
long shardInflight(Client& c, const std::string& shard) {
  const std::string info = c.cmd({"INFO", "shards"});
  const size_t line = info.find(shard + ":addr=");
  const size_t at = line == std::string::npos ? line : info.find(",inflight=", line);
  return at == std::string::npos ? -1 : std::stol(info.substr(at + 10));
}

TEST(LifecycleTest, SigtermFinishesInFlightRequestsAndExitsZero) {
  // A backend timeout far beyond the stall, so the stalled requests wait instead of failing.
  TempDir dir;
  std::ofstream(dir.path() + "/proxy.yaml") << "backend:\n  timeout_ms: 30000\n";
  Deployment env(2, 1, {"--config", dir.path() + "/proxy.yaml"});
  if (env.direct()) {
    GTEST_SKIP() << "needs the proxy";
  }
  Process& proxy = env.proxy()->process();
  Client warm(env.port());
  ASSERT_EQ(warm.cmd({"PING"}), "PONG");
  // Keys on both shards; stall shard 0 so its requests stay in flight inside the proxy.
  constexpr int kRequests = 200;
  RawConn conn(env.port());
  std::string pipeline;
  std::string expected;
  long on_shard0 = 0;  // requests for the stalled shard (the lower half of the slots)
  for (int i = 0; i < kRequests; ++i) {
    std::string key = "inflight:" + std::to_string(i);
    on_shard0 += testKeySlot(key) < 8192 ? 2 : 0;
    std::string val = "v" + std::to_string(i);
    pipeline += "*3\r\n$3\r\nSET\r\n$" + std::to_string(key.size()) + "\r\n" + key + "\r\n$" +
                std::to_string(val.size()) + "\r\n" + val + "\r\n";
    pipeline += "*2\r\n$3\r\nGET\r\n$" + std::to_string(key.size()) + "\r\n" + key + "\r\n";
    expected += "+OK\r\n$" + std::to_string(val.size()) + "\r\n" + val + "\r\n";
  }
  env.shards()[0]->pause();
  ASSERT_TRUE(conn.sendAll(pipeline));
  // The proxy reads and forwards them; the health pings may add one more.
  for (auto deadline = Clock::now() + seconds(10);
       shardInflight(warm, "shard0") < on_shard0 && Clock::now() < deadline;) {
    std::this_thread::sleep_for(milliseconds(20));
  }
  EXPECT_GE(shardInflight(warm, "shard0"), on_shard0) << warm.cmd({"INFO", "shards"});
  proxy.signal(SIGTERM);
  std::this_thread::sleep_for(milliseconds(300));
  EXPECT_TRUE(proxy.alive()) << "exited with requests in flight";
  // It stops accepting new connections while it drains.
  bool refused = false;
  for (auto deadline = Clock::now() + seconds(2); Clock::now() < deadline && !refused;) {
    try {
      RawConn probe(env.port());
      std::this_thread::sleep_for(milliseconds(50));
    } catch (const std::exception&) {
      refused = true;
    }
  }
  EXPECT_TRUE(refused) << "still accepting after SIGTERM";
  env.shards()[0]->resume();
  std::string got = conn.readUntil(expected, seconds(10));
  EXPECT_EQ(got, expected) << "every in-flight request answered, in order";
  int status = proxy.stop(SIGTERM, seconds(15));
  if (status == -1) {
    status = proxy.exitStatus();
  }
  EXPECT_TRUE(exitedZero(status)) << "status " << status << "\n" << proxy.log();
  // The writes really happened.
  int found = 0;
  for (auto& s : env.shards()) {
    Client direct(s->port());
    std::string r = direct.cmd({"DBSIZE"});
    found += std::stoi(r.substr(10));
  }
  EXPECT_EQ(found, kRequests);
}

TEST(LifecycleTest, SigintOnIdleProxyExitsZero) {
  Deployment env(2);
  if (env.direct()) {
    GTEST_SKIP() << "needs the proxy";
  }
  Client c(env.port());
  ASSERT_EQ(c.cmd({"PING"}), "PONG");
  int status = env.proxy()->process().stop(SIGINT, seconds(10));
  EXPECT_TRUE(exitedZero(status)) << "status " << status << "\n" << env.proxy()->process().log();
}

}  // namespace
}  // namespace sp::test
