// The /metrics endpoint of the real proxy: counters agree exactly with the load sent, a scrape
// taken under load passes `promtool check metrics`, a killed shard shows as down,
// --metrics-listen off / a taken port behave, and --version names the version of build_info.
#include <gtest/gtest.h>
#include <hiredis/hiredis.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "integration/harness.h"
#include "integration/metrics_scrape.h"

namespace sp::test {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

// A proxy in front of `shards` redis-servers with /metrics on a free port.
struct MetricsDeployment {
  explicit MetricsDeployment(int shard_count, int workers = 2,
                             std::vector<std::string> extra = {}) {
    shards = startShards(shard_count);
    metrics_port = freePort();
    extra.push_back("--metrics-listen");
    extra.push_back("127.0.0.1:" + std::to_string(metrics_port));
    proxy = std::make_unique<ProxyProcess>(shardList(shards), workers, extra);
    EXPECT_TRUE(waitForPort(metrics_port, seconds(10)));
  }
  std::vector<std::unique_ptr<RedisServer>> shards;
  uint16_t metrics_port = 0;
  std::unique_ptr<ProxyProcess> proxy;
};

// Sends `n` commands built by make(i) on one connection, pipelined 100 at a time; returns how
// many replies were not what check(i, reply) expects.
template <typename Make, typename Check>
int pipeline(uint16_t port, int n, Make make, Check check) {
  Client c(port);
  if (!c.ok()) {
    return n;
  }
  int bad = 0;
  for (int base = 0; base < n; base += 100) {
    const int end = std::min(n, base + 100);
    for (int i = base; i < end; ++i) {
      const std::vector<std::string> argv = make(i);
      std::vector<const char*> ptrs;
      std::vector<size_t> lens;
      for (const auto& a : argv) {
        ptrs.push_back(a.data());
        lens.push_back(a.size());
      }
      redisAppendCommandArgv(c.ctx(), static_cast<int>(argv.size()), ptrs.data(), lens.data());
    }
    for (int i = base; i < end; ++i) {
      void* r = nullptr;
      if (redisGetReply(c.ctx(), &r) != REDIS_OK || r == nullptr) {
        return bad + (end - i);
      }
      bad += check(i, render(static_cast<redisReply*>(r))) ? 0 : 1;
      freeReplyObject(r);
    }
  }
  return bad;
}

TEST(MetricsScrapeTest, CountersAgreeExactlyWithTheLoad) {
  MetricsDeployment env(4);
  constexpr int kClients = 4;
  constexpr int kSets = 1500;  // per client
  constexpr int kGets = 1000;
  constexpr int kMsets = 50;  // 4 keys each, over several shards
  std::vector<int> bad(kClients, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < kClients; ++t) {
    threads.emplace_back([&, t] {
      const std::string p = "m" + std::to_string(t) + ":";
      bad[t] += pipeline(
          env.proxy->port(), kSets,
          [&](int i) {
            return std::vector<std::string>{"SET", p + std::to_string(i), "v"};
          },
          [](int, const std::string& r) { return r == "OK"; });
      bad[t] += pipeline(
          env.proxy->port(), kGets,
          [&](int i) {
            return std::vector<std::string>{"GET", p + std::to_string(i)};
          },
          [](int, const std::string& r) { return r == "v"; });
      bad[t] += pipeline(
          env.proxy->port(), kMsets,
          [&](int i) {
            std::vector<std::string> argv = {"MSET"};
            for (int k = 0; k < 4; ++k) {
              argv.push_back(p + "x" + std::to_string(i * 4 + k));
              argv.push_back("w");
            }
            return argv;
          },
          [](int, const std::string& r) { return r == "OK"; });
    });
  }
  for (auto& th : threads) {
    th.join();
  }
  for (int t = 0; t < kClients; ++t) {
    ASSERT_EQ(bad[t], 0) << "client " << t;
  }
  // One local and one refused request, on a fresh connection.
  Client c(env.proxy->port());
  ASSERT_EQ(c.cmd({"PING"}), "PONG");
  ASSERT_EQ(c.cmd({"NOSUCHCOMMAND"}).rfind("(error) ERR unknown command", 0), 0u);

  // Each worker counts its closed connections when its loop gets to them: wait until only this
  // test's own connection is left open.
  Scrape s = scrape(env.metrics_port);
  for (auto deadline = std::chrono::steady_clock::now() + seconds(10);
       s.sum("shardproxy_client_connections") != 1 && std::chrono::steady_clock::now() < deadline;
       s = scrape(env.metrics_port)) {
    std::this_thread::sleep_for(milliseconds(20));
  }
  ASSERT_TRUE(s.ok()) << s.text();
  EXPECT_EQ(s.sum("shardproxy_requests_total", {{"class", "write"}, {"result", "ok"}}),
            kClients * kSets);
  EXPECT_EQ(s.sum("shardproxy_requests_total", {{"class", "read"}, {"result", "ok"}}),
            kClients * kGets);
  EXPECT_EQ(s.sum("shardproxy_requests_total", {{"class", "multikey"}, {"result", "ok"}}),
            kClients * kMsets);
  EXPECT_EQ(s.sum("shardproxy_requests_total", {{"class", "local"}, {"result", "ok"}}), 1);
  EXPECT_EQ(s.sum("shardproxy_requests_total", {{"result", "refused"}}), 1);
  EXPECT_EQ(s.sum("shardproxy_requests_total"), kClients * (kSets + kGets + kMsets) + 2);
  EXPECT_EQ(s.sum("shardproxy_request_duration_seconds_count"),
            kClients * (kSets + kGets + kMsets) + 0.0)
      << "one observation per routed request";
  EXPECT_EQ(
      s.sum("shardproxy_request_duration_seconds_bucket", {{"class", "write"}, {"le", "+Inf"}}),
      kClients * kSets);
  // Every routed request (and each MSET fragment) reached a shard exactly once.
  const double sent = s.sum("shardproxy_backend_requests_total");
  EXPECT_GE(sent, kClients * (kSets + kGets + kMsets));
  EXPECT_LE(sent, kClients * (kSets + kGets + 4 * kMsets));
  EXPECT_EQ(s.sum("shardproxy_backend_request_duration_seconds_count"), sent);
  EXPECT_EQ(s.sum("shardproxy_split_requests_total") > 0, true);
  EXPECT_EQ(s.sum("shardproxy_backend_errors_total"), 0);
  // 3 connections per load client, the one above, and the harness's readiness probe(s).
  EXPECT_GE(s.sum("shardproxy_client_connections_accepted_total"), 3 * kClients + 1);
  EXPECT_LE(s.sum("shardproxy_client_connections_accepted_total"), 3 * kClients + 3);
  EXPECT_EQ(s.sum("shardproxy_client_connections"), 1);
  EXPECT_EQ(s.sum("shardproxy_backend_up"), 4);
  EXPECT_EQ(s.sum("shardproxy_backend_connections", {{"state", "up"}}), 4 * 2);
  EXPECT_GT(s.sum("shardproxy_client_received_bytes_total"), 0);
  EXPECT_GT(s.sum("shardproxy_client_sent_bytes_total"), 0);
  EXPECT_EQ(s.sum("shardproxy_workers"), 2);
  EXPECT_EQ(s.sum("shardproxy_shards"), 4);
  EXPECT_EQ(s.count("shardproxy_build_info", {{"version", SHARDPROXY_VERSION}}), 1u)
      << s.text().substr(0, 2000);
  EXPECT_GT(s.sum("process_resident_memory_bytes"), 0);
  EXPECT_GT(s.sum("process_open_fds"), 0);
  // The same totals through INFO (which counts itself).
  const std::string info = c.cmd({"INFO", "stats"});
  EXPECT_NE(info.find("total_commands_processed:" +
                      std::to_string(kClients * (kSets + kGets + kMsets) + 3) + "\r\n"),
            std::string::npos)
      << info;
}

TEST(MetricsScrapeTest, LiveScrapeUnderLoadPassesPromtool) {
  if (access("/usr/bin/promtool", X_OK) != 0) {
    GTEST_SKIP() << "promtool (Debian package prometheus) is not installed";
  }
  MetricsDeployment env(2, 2);
  std::atomic<bool> stop{false};
  std::atomic<long> done{0};
  std::vector<std::thread> load;
  for (int t = 0; t < 3; ++t) {
    load.emplace_back([&, t] {
      while (!stop) {
        const int bad = pipeline(
            env.proxy->port(), 200,
            [&](int i) {
              const std::string key = "k" + std::to_string(t * 1000 + i % 50);
              return i % 2 != 0 ? std::vector<std::string>{"GET", key}
                                : std::vector<std::string>{"SET", key, "v"};
            },
            [](int, const std::string& r) { return r.rfind("(error)", 0) != 0; });
        EXPECT_EQ(bad, 0);
        done += 200;
      }
    });
  }
  while (done < 2000) {
    std::this_thread::sleep_for(milliseconds(10));
  }
  TempDir dir;
  std::string output;
  double last_total = 0;
  for (int i = 0; i < 3; ++i) {  // three scrapes while the load runs
    const long done_before = done;
    const std::string text = httpGet(env.metrics_port, "/metrics");
    ASSERT_NE(text.find("shardproxy_requests_total"), std::string::npos) << text;
    // Under load: the counters moved since the previous scrape, and every kind of family the
    // proxy exports (counters, gauges, histograms, process metrics) is in what promtool reads.
    const Scrape s(text);
    const double total = s.sum("shardproxy_requests_total");
    EXPECT_GT(total, last_total) << "scrape " << i;
    last_total = total;
    EXPECT_TRUE(s.hasFamily("shardproxy_request_duration_seconds"));
    EXPECT_TRUE(s.hasFamily("shardproxy_backend_inflight_requests"));
    EXPECT_TRUE(s.hasFamily("process_cpu_seconds_total"));
    {
      std::ofstream out(dir.path() + "/scrape.txt");
      out << text;
    }
    output = commandOutput("/usr/bin/promtool check metrics < " + dir.path() +
                           "/scrape.txt 2>&1; echo \"exit=$?\"");
    EXPECT_EQ(output, "exit=0\n") << output;
    // The load kept running across the scrape (it was not taken in a lull).
    for (int w = 0; w < 500 && done <= done_before; ++w) {
      std::this_thread::sleep_for(milliseconds(10));
    }
    EXPECT_GT(done.load(), done_before) << "scrape " << i;
  }
  stop = true;
  for (auto& th : load) {
    th.join();
  }
}

TEST(MetricsScrapeTest, VersionFlagPrintsTheVersionOfBuildInfo) {
  const std::string out =
      commandOutput(std::string(SP_SHARDPROXY_BIN) + " --version 2>&1; echo \"exit=$?\"");
  EXPECT_EQ(out, std::string("shardproxy ") + SHARDPROXY_VERSION + "\nexit=0\n");
  // The same version labels shardproxy_build_info.
  MetricsDeployment env(1, 1);
  const Scrape s = scrape(env.metrics_port);
  EXPECT_EQ(s.count("shardproxy_build_info", {{"version", SHARDPROXY_VERSION}}), 1u)
      << s.text().substr(0, 2000);
}

TEST(MetricsScrapeTest, KilledShardShowsAsDown) {
  MetricsDeployment env(2, 1);
  Client c(env.proxy->port());
  ASSERT_EQ(c.cmd({"SET", "a", "1"}), "OK");
  Scrape s = scrape(env.metrics_port);
  ASSERT_EQ(s.sum("shardproxy_backend_up", {{"shard", "shard1"}}), 1) << s.text();
  env.shards[1]->kill9();
  bool down = false;
  for (int i = 0; i < 100 && !down; ++i) {
    s = scrape(env.metrics_port);
    down = s.count("shardproxy_backend_up", {{"shard", "shard1"}}) == 1 &&
           s.sum("shardproxy_backend_up", {{"shard", "shard1"}}) == 0;
    std::this_thread::sleep_for(milliseconds(50));
  }
  EXPECT_TRUE(down) << s.text();
  EXPECT_EQ(s.sum("shardproxy_backend_up", {{"shard", "shard0"}}), 1);
  EXPECT_EQ(s.sum("shardproxy_backend_connections", {{"shard", "shard1"}, {"state", "up"}}), 0);
  EXPECT_GE(
      s.sum("shardproxy_backend_connections", {{"shard", "shard1"}, {"state", "down"}}) +
          s.sum("shardproxy_backend_connections", {{"shard", "shard1"}, {"state", "ejected"}}),
      1);
  env.shards[1]->restart();
  bool up = false;
  for (int i = 0; i < 200 && !up; ++i) {
    s = scrape(env.metrics_port);
    up = s.sum("shardproxy_backend_up", {{"shard", "shard1"}}) == 1;
    std::this_thread::sleep_for(milliseconds(50));
  }
  EXPECT_TRUE(up) << s.text();
  EXPECT_GE(s.sum("shardproxy_backend_reconnects_total", {{"shard", "shard1"}}) +
                s.sum("shardproxy_backend_connects_total", {{"shard", "shard1"}, {"result", "ok"}}),
            2);
}

TEST(MetricsScrapeTest, OffMeansNoEndpointAndATakenPortFailsStartup) {
  auto shards = startShards(1);
  // The harness passes --metrics-listen off unless told otherwise.
  ProxyProcess quiet(shardList(shards), 1);
  Client c(quiet.port());
  EXPECT_NE(c.cmd({"INFO", "server"}).find("metrics_port:0"), std::string::npos);

  const uint16_t taken = freePort();
  ProxyProcess first(shardList(shards), 1,
                     {"--metrics-listen", "127.0.0.1:" + std::to_string(taken)});
  ASSERT_TRUE(waitForPort(taken, seconds(10)));
  Process second({SP_SHARDPROXY_BIN, "--port", std::to_string(freePort()), "--shards",
                  shardList(shards), "--metrics-listen", "127.0.0.1:" + std::to_string(taken)},
                 "/dev/null");
  int status = -1;
  for (int i = 0; i < 200 && second.alive(); ++i) {
    std::this_thread::sleep_for(milliseconds(50));
  }
  status = second.exitStatus();
  ASSERT_FALSE(second.alive());
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 1) << status;
}

}  // namespace
}  // namespace sp::test
