// Live reload (SIGHUP and PROXY RELOAD) of the real proxy: a shard moved to a new port under a
// verifying load (every reply checked, no client disconnected, CLIENT ID unchanged), requests in
// flight on the old connection finishing there, limits, slot ranges and the log level applied at
// once, and invalid files rejected whole with the old configuration still serving and the
// failure counted.
#include <gtest/gtest.h>
#include <hiredis/hiredis.h>
#include <signal.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "integration/harness.h"
#include "integration/metrics_scrape.h"

namespace sp::test {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using Clock = std::chrono::steady_clock;

struct ShardEntry {
  std::string name;
  uint16_t port;
};

// A config file naming the shards (even split), plus extra YAML.
void writeConfig(const std::string& path, const std::vector<ShardEntry>& shards,
                 const std::string& extra = "") {
  std::ofstream out(path);
  out << "shards:\n";
  for (const auto& s : shards) {
    out << "  - name: " << s.name << "\n    address: 127.0.0.1:" << s.port << "\n";
  }
  out << extra;
}

// The proxy's connections to a redis-server, by the server-side port they arrived on
// (CLIENT LIST laddr=), asked on a fresh connection to `port` and not counting it.
std::map<uint16_t, int> connectionsByLocalPort(uint16_t port) {
  std::map<uint16_t, int> out;
  Client c(port);
  const std::string list = c.cmd({"CLIENT", "LIST"});
  const std::string me = c.cmd({"CLIENT", "ID"}).substr(10);
  std::istringstream in(list);
  std::string line;
  while (std::getline(in, line)) {
    if (line.find("id=" + me + " ") == 0) {
      continue;
    }
    const size_t at = line.find("laddr=");
    if (at == std::string::npos) {
      continue;
    }
    const size_t colon = line.find(':', at);
    out[static_cast<uint16_t>(std::stoi(line.substr(colon + 1)))]++;
  }
  return out;
}

// Waits until `pred` holds, polling; false on timeout.
template <typename Pred>
bool eventually(Pred pred, milliseconds timeout = milliseconds(10000)) {
  const auto deadline = Clock::now() + timeout;
  while (Clock::now() < deadline) {
    if (pred()) {
      return true;
    }
    std::this_thread::sleep_for(milliseconds(20));
  }
  return pred();
}

// One verifying client: its own connection for the whole run, pipelines of SET/GET/INCR over
// keys on every shard, every reply checked against what it must be.
struct VerifyClient {
  std::unique_ptr<Client> client;
  std::string client_id;
  std::atomic<long> requests{0};  // read by the test thread while the load runs
  long mismatches = 0;
  long io_errors = 0;
  std::string first_problem;

  void run(uint16_t port, int index, const std::atomic<bool>& stop) {
    client = std::make_unique<Client>(port);
    client_id = client->cmd({"CLIENT", "ID"});
    const std::string p = "v" + std::to_string(index) + ":";
    long counter = 0;
    for (long round = 0; !stop; ++round) {
      // 8 SET+GET pairs over 8 keys (spread over the shards) and one INCR, pipelined.
      std::vector<std::string> expect;
      for (int k = 0; k < 8; ++k) {
        const std::string key = p + std::to_string(k);
        const std::string value = std::to_string(round) + "-" + std::to_string(k);
        redisAppendCommand(client->ctx(), "SET %s %s", key.c_str(), value.c_str());
        redisAppendCommand(client->ctx(), "GET %s", key.c_str());
        expect.push_back("OK");
        expect.push_back(value);
      }
      redisAppendCommand(client->ctx(), "INCR %s", (p + "n").c_str());
      expect.push_back("(integer) " + std::to_string(++counter));
      for (const std::string& want : expect) {
        void* r = nullptr;
        if (redisGetReply(client->ctx(), &r) != REDIS_OK || r == nullptr) {
          ++io_errors;
          if (first_problem.empty()) {
            first_problem = std::string("io error: ") + client->ctx()->errstr;
          }
          return;
        }
        const std::string got = render(static_cast<redisReply*>(r));
        freeReplyObject(r);
        ++requests;
        if (got != want) {
          ++mismatches;
          if (first_problem.empty()) {
            first_problem = "want '" + want + "', got '" + got + "'";
          }
        }
      }
    }
  }
};

TEST(ReloadTest, MoveAShardToANewPortUnderAVerifyingLoad) {
  auto shards = startShards(3);
  TempDir dir;
  const std::string path = dir.path() + "/proxy.yaml";
  std::vector<ShardEntry> entries = {
      {"s0", shards[0]->port()}, {"s1", shards[1]->port()}, {"s2", shards[2]->port()}};
  writeConfig(path, entries);
  const uint16_t metrics_port = freePort();
  ProxyProcess proxy(
      "", 2, {"--config", path, "--metrics-listen", "127.0.0.1:" + std::to_string(metrics_port)});

  constexpr int kClients = 6;
  std::atomic<bool> stop{false};
  std::vector<VerifyClient> clients(kClients);
  std::vector<std::thread> threads;
  for (int i = 0; i < kClients; ++i) {
    threads.emplace_back([&, i] { clients[i].run(proxy.port(), i, stop); });
  }
  auto total = [&] {
    long n = 0;
    for (const auto& c : clients) {
      n += c.requests.load();
    }
    return n;
  };
  ASSERT_TRUE(eventually([&] { return total() > 2000; }));

  // Move s1: the same redis-server starts listening on a new port (its open connections, the
  // proxy's included, stay up) and the file names the new port.
  const uint16_t old_port = shards[1]->port();
  const uint16_t new_port = freePort();
  {
    Client direct(old_port);
    ASSERT_EQ(direct.cmd({"CONFIG", "SET", "port", std::to_string(new_port)}), "OK");
  }
  entries[1].port = new_port;
  writeConfig(path, entries);
  const long before = total();
  Client admin(proxy.port());
  ASSERT_EQ(admin.cmd({"PROXY", "RELOAD"}), "OK") << proxy.process().log();

  // The load keeps going through the new connections (for a second at least); the old ones
  // drain and close.
  const auto reloaded = Clock::now();
  ASSERT_TRUE(
      eventually([&] { return total() > before + 10000 && Clock::now() - reloaded > seconds(1); },
                 seconds(60)));
  EXPECT_TRUE(eventually([&] {
    auto conns = connectionsByLocalPort(new_port);
    return conns[old_port] == 0 && conns[new_port] >= 2;
  })) << "the proxy should hold 2 connections (one per worker) on the new port only";
  stop = true;
  for (auto& t : threads) {
    t.join();
  }
  // The proxy's view agrees: every verifying client (and the admin one) still connected, no
  // connection closed by the proxy, no request failed or refused across the move.
  const Scrape s = scrape(metrics_port);
  EXPECT_EQ(s.sum("shardproxy_client_connections"), kClients + 1) << s.text();
  EXPECT_EQ(s.sum("shardproxy_client_connections_closed_total") -
                s.sum("shardproxy_client_connections_closed_total", {{"reason", "client_closed"}}),
            0);
  EXPECT_EQ(
      s.sum("shardproxy_requests_total") - s.sum("shardproxy_requests_total", {{"result", "ok"}}),
      0);
  EXPECT_EQ(s.sum("shardproxy_backend_errors_total"), 0);
  EXPECT_EQ(s.sum("shardproxy_config_reloads_total", {{"result", "success"}}), 1);
  for (int i = 0; i < kClients; ++i) {
    const VerifyClient& c = clients[i];
    EXPECT_EQ(c.mismatches, 0) << "client " << i << ": " << c.first_problem;
    EXPECT_EQ(c.io_errors, 0) << "client " << i << ": " << c.first_problem;
    EXPECT_GT(c.requests.load(), 0);
    // The very same connection, never dropped.
    EXPECT_EQ(c.client->cmd({"CLIENT", "ID"}), c.client_id) << "client " << i;
  }
  const std::string shards_reply = admin.cmd({"PROXY", "SHARDS"});
  EXPECT_NE(shards_reply.find("127.0.0.1:" + std::to_string(new_port)), std::string::npos)
      << shards_reply;
  EXPECT_EQ(shards_reply.find("127.0.0.1:" + std::to_string(old_port)), std::string::npos)
      << shards_reply;
  const std::string info = admin.cmd({"INFO", "stats"});
  EXPECT_NE(info.find("config_reloads_ok:1\r\n"), std::string::npos) << info;
  EXPECT_NE(info.find("config_reloads_failed:0\r\n"), std::string::npos) << info;
  // The keys written through the proxy are all on the moved server, readable directly.
  Client moved(new_port);
  EXPECT_NE(moved.cmd({"DBSIZE"}), "(integer) 0");
}

TEST(ReloadTest, RequestsInFlightFinishOnTheOldConnection) {
  auto shards = startShards(2);
  TempDir dir;
  const std::string path = dir.path() + "/proxy.yaml";
  // A long request timeout: the shard is stopped while requests wait on it.
  const std::string extra = "backend:\n  timeout_ms: 60000\n  ping_interval_ms: 60000\n";
  std::vector<ShardEntry> entries = {{"s0", shards[0]->port()}, {"s1", shards[1]->port()}};
  writeConfig(path, entries, extra);
  ProxyProcess proxy("", 1, {"--config", path});
  // A key of s1 (slots 8192..16383 with two shards).
  std::string key;
  for (int i = 0; key.empty(); ++i) {
    if (testKeySlot("k" + std::to_string(i)) >= 8192) {
      key = "k" + std::to_string(i);
    }
  }
  Client admin(proxy.port());
  ASSERT_EQ(admin.cmd({"SET", key, "0"}), "OK");

  const uint16_t old_port = shards[1]->port();
  const uint16_t new_port = freePort();
  {
    Client direct(old_port);
    ASSERT_EQ(direct.cmd({"CONFIG", "SET", "port", std::to_string(new_port)}), "OK");
  }
  shards[1]->pause();  // SIGSTOP: what is sent to it now waits
  RawConn raw(proxy.port());
  std::string pipeline;
  constexpr int kInFlight = 50;
  for (int i = 0; i < kInFlight; ++i) {
    pipeline += "*2\r\n$4\r\nINCR\r\n$" + std::to_string(key.size()) + "\r\n" + key + "\r\n";
  }
  ASSERT_TRUE(raw.sendAll(pipeline));
  std::this_thread::sleep_for(milliseconds(200));  // they reach the old connection
  entries[1].port = new_port;
  writeConfig(path, entries, extra);
  EXPECT_EQ(admin.cmd({"PROXY", "RELOAD"}), "OK");
  std::this_thread::sleep_for(milliseconds(100));
  shards[1]->resume();
  std::string expected;
  for (int i = 1; i <= kInFlight; ++i) {
    expected += ":" + std::to_string(i) + "\r\n";
  }
  EXPECT_EQ(raw.readUntil(":" + std::to_string(kInFlight) + "\r\n", seconds(10)), expected);
  // New requests take the new connection.
  EXPECT_EQ(admin.cmd({"INCR", key}), "(integer) " + std::to_string(kInFlight + 1));
  EXPECT_TRUE(eventually([&] {
    auto conns = connectionsByLocalPort(new_port);
    return conns[old_port] == 0 && conns[new_port] == 1;
  }));
  ASSERT_TRUE(
      raw.sendAll("*2\r\n$3\r\nGET\r\n$" + std::to_string(key.size()) + "\r\n" + key + "\r\n"));
  EXPECT_EQ(raw.readUntil("\r\n51\r\n", seconds(5)), "$2\r\n51\r\n");
}

TEST(ReloadTest, InvalidFilesAreRejectedWholeAndChangeNothing) {
  auto shards = startShards(2);
  TempDir dir;
  const std::string path = dir.path() + "/proxy.yaml";
  const std::vector<ShardEntry> entries = {{"s0", shards[0]->port()}, {"s1", shards[1]->port()}};
  const std::string extra = "slowlog:\n  threshold_us: 5000000\n";
  writeConfig(path, entries, extra);
  const uint16_t metrics_port = freePort();
  ProxyProcess proxy(
      "", 2, {"--config", path, "--metrics-listen", "127.0.0.1:" + std::to_string(metrics_port)});
  Client c(proxy.port());
  const std::string id = c.cmd({"CLIENT", "ID"});
  ASSERT_EQ(c.cmd({"SET", "a", "1"}), "OK");
  const std::string config_before = c.cmd({"PROXY", "CONFIG", "GET", "*"});
  const std::string slots_before = c.cmd({"PROXY", "SLOTS"});

  // 1. Not YAML.
  {
    std::ofstream out(path);
    out << "shards: [\n";
  }
  std::string r = c.cmd({"PROXY", "RELOAD"});
  EXPECT_EQ(r.rfind("(error) ERR reload failed, configuration unchanged: ", 0), 0u) << r;
  EXPECT_NE(r.find("syntax error"), std::string::npos) << r;

  // 2. Valid YAML, invalid config: one good change (a new shard address) next to two errors;
  // nothing of it may apply. Through SIGHUP this time.
  {
    std::ofstream out(path);
    out << "shards:\n  - name: s0\n    address: 127.0.0.1:" << shards[0]->port()
        << "\n    slots: [0-9000]\n  - name: s1\n    address: 127.0.0.1:1\n    slots: "
           "[8000-16383]\nlimits:\n  max_clientz: 3\nslowlog:\n  threshold_us: 0\n";
  }
  proxy.process().signal(SIGHUP);
  EXPECT_TRUE(eventually([&] {
    return c.cmd({"INFO", "stats"}).find("config_reloads_failed:2\r\n") != std::string::npos;
  })) << c.cmd({"INFO", "stats"});
  const std::string log = proxy.process().log();
  EXPECT_NE(log.find("limits.max_clientz: unknown key"), std::string::npos) << log;
  EXPECT_NE(log.find("overlap"), std::string::npos) << log;

  // Everything as before: same config, same slot map, same connection, data served, the slow
  // log threshold of the rejected file not applied.
  EXPECT_EQ(c.cmd({"PROXY", "CONFIG", "GET", "*"}), config_before);
  EXPECT_EQ(c.cmd({"PROXY", "SLOTS"}), slots_before);
  EXPECT_EQ(c.cmd({"CLIENT", "ID"}), id);
  EXPECT_EQ(c.cmd({"GET", "a"}), "1");
  for (int i = 0; i < 20; ++i) {
    EXPECT_EQ(c.cmd({"SET", "k" + std::to_string(i), "v"}), "OK");
  }
  EXPECT_EQ(c.cmd({"PROXY", "SLOWLOG", "LEN"}), "(integer) 0");
  Scrape s = scrape(metrics_port);
  EXPECT_EQ(s.sum("shardproxy_config_reloads_total", {{"result", "failure"}}), 2) << s.text();
  EXPECT_EQ(s.sum("shardproxy_config_reloads_total", {{"result", "success"}}), 0);
  EXPECT_EQ(s.sum("shardproxy_config_last_reload_successful"), 0);
  EXPECT_EQ(s.sum("shardproxy_backend_up"), 2);

  // 3. A valid file applies: the slow log now records every request.
  writeConfig(path, entries, "slowlog:\n  threshold_us: 0\n  max_len: 4\n");
  ASSERT_EQ(c.cmd({"PROXY", "RELOAD"}), "OK");
  for (int i = 0; i < 10; ++i) {
    EXPECT_EQ(c.cmd({"GET", "a"}), "1");
  }
  EXPECT_EQ(c.cmd({"PROXY", "SLOWLOG", "LEN"}), "(integer) 4");
  s = scrape(metrics_port);
  EXPECT_EQ(s.sum("shardproxy_config_reloads_total", {{"result", "success"}}), 1);
  EXPECT_EQ(s.sum("shardproxy_config_last_reload_successful"), 1);
  EXPECT_EQ(c.cmd({"CLIENT", "ID"}), id);
}

TEST(ReloadTest, LimitsApplyAtOnceToExistingClients) {
  auto shards = startShards(1);
  TempDir dir;
  const std::string path = dir.path() + "/proxy.yaml";
  const std::vector<ShardEntry> entries = {{"s0", shards[0]->port()}};
  writeConfig(path, entries);
  ProxyProcess proxy("", 1, {"--config", path});
  Client a(proxy.port());
  Client b(proxy.port());
  ASSERT_EQ(a.cmd({"PING"}), "PONG");
  ASSERT_EQ(b.cmd({"PING"}), "PONG");
  writeConfig(path, entries, "limits:\n  max_clients: 2\nbackend:\n  timeout_ms: 777\n");
  ASSERT_EQ(a.cmd({"PROXY", "RELOAD"}), "OK");
  EXPECT_EQ(a.cmd({"PROXY", "CONFIG", "GET", "limits.max_clients"}), "[limits.max_clients, 2]");
  EXPECT_EQ(a.cmd({"PROXY", "CONFIG", "GET", "backend.timeout*"}), "[backend.timeout_ms, 777]");
  // A third client is refused; the two connected ones carry on.
  RawConn third(proxy.port());
  std::string refused;
  third.readToClose(&refused, seconds(5));
  EXPECT_NE(refused.find("max number of clients reached"), std::string::npos) << refused;
  EXPECT_EQ(a.cmd({"SET", "x", "1"}), "OK");
  EXPECT_EQ(b.cmd({"GET", "x"}), "1");
}

// Slot ranges and the log level come from the file alone here (the harness would pin the log
// level with --log-level, and flags win over the file on every reload).
TEST(ReloadTest, SlotRangesAndLogLevelApply) {
  auto shards = startShards(2);
  TempDir dir;
  const std::string path = dir.path() + "/proxy.yaml";
  const std::vector<ShardEntry> entries = {{"s0", shards[0]->port()}, {"s1", shards[1]->port()}};
  writeConfig(path, entries, "log_level: info\n");
  const uint16_t port = freePort();
  Process proxy({SP_SHARDPROXY_BIN, "--config", path, "--listen", "127.0.0.1", "--port",
                 std::to_string(port), "--workers", "2", "--metrics-listen", "off"},
                dir.path() + "/proxy.log");
  ASSERT_TRUE(waitForPort(port, seconds(15))) << proxy.log();
  // Keys in slots 100..8191: shard s0 under the even split, s1 once s0 keeps only 0-99.
  std::vector<std::string> keys;
  for (int i = 0; keys.size() < 2; ++i) {
    const std::string k = "r" + std::to_string(i);
    const uint16_t slot = testKeySlot(k);
    if (slot >= 100 && slot < 8192) {
      keys.push_back(k);
    }
  }
  Client c(port);
  const std::string id = c.cmd({"CLIENT", "ID"});
  ASSERT_EQ(c.cmd({"SET", keys[0], "before"}), "OK");
  Client direct0(shards[0]->port());
  Client direct1(shards[1]->port());
  EXPECT_EQ(direct0.cmd({"GET", keys[0]}), "before");

  auto split = [&](const std::string& level) {
    std::ofstream out(path);
    out << "shards:\n  - name: s0\n    address: 127.0.0.1:" << shards[0]->port()
        << "\n    slots: [0-99]\n  - name: s1\n    address: 127.0.0.1:" << shards[1]->port()
        << "\n    slots: [100-16383]\nlog_level: " << level << "\n";
  };
  auto appliedLines = [&] {
    const std::string log = proxy.log();
    size_t n = 0;
    for (size_t at = log.find(" applied: "); at != std::string::npos;
         at = log.find(" applied: ", at + 1)) {
      ++n;
    }
    return n;
  };
  split("warn");
  ASSERT_EQ(c.cmd({"PROXY", "RELOAD"}), "OK") << proxy.log();
  EXPECT_EQ(c.cmd({"PROXY", "SLOTS"}),
            "[[(integer) 0, (integer) 99, [127.0.0.1, (integer) " +
                std::to_string(shards[0]->port()) + ", s0]], [(integer) 100, (integer) 16383, " +
                "[127.0.0.1, (integer) " + std::to_string(shards[1]->port()) + ", s1]]]");
  EXPECT_EQ(c.cmd({"PROXY", "CONFIG", "GET", "log_level"}), "[log_level, warn]");
  // Routing follows the new ranges at once, on the same client connection.
  ASSERT_EQ(c.cmd({"SET", keys[1], "after"}), "OK");
  EXPECT_EQ(direct1.cmd({"GET", keys[1]}), "after");
  EXPECT_EQ(direct0.cmd({"GET", keys[1]}), "(nil)");
  EXPECT_EQ(c.cmd({"GET", keys[1]}), "after");
  EXPECT_EQ(c.cmd({"CLIENT", "ID"}), id);

  // At warn, a reload's info line ("... applied: ...") is not logged; back at info, it is.
  const size_t quiet = appliedLines();
  ASSERT_EQ(c.cmd({"PROXY", "RELOAD"}), "OK");
  EXPECT_EQ(appliedLines(), quiet) << proxy.log();
  split("info");
  ASSERT_EQ(c.cmd({"PROXY", "RELOAD"}), "OK");
  EXPECT_TRUE(eventually([&] { return appliedLines() == quiet + 1; })) << proxy.log();
  EXPECT_EQ(c.cmd({"PROXY", "CONFIG", "GET", "log_level"}), "[log_level, info]");
  EXPECT_EQ(proxy.stop(SIGTERM), 0) << proxy.log();
}

TEST(ReloadTest, WithoutAConfigFileReloadIsAnError) {
  auto shards = startShards(1);
  ProxyProcess proxy(shardList(shards), 1);
  Client c(proxy.port());
  const std::string r = c.cmd({"PROXY", "RELOAD"});
  EXPECT_NE(r.find("no configuration file"), std::string::npos) << r;
  EXPECT_EQ(c.cmd({"PING"}), "PONG");
}

}  // namespace
}  // namespace sp::test
