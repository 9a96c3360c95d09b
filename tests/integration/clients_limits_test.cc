// Limits that hold at the edges, through the real proxy: limits.timeout closes idle clients but
// not subscribed ones, blocked ones or busy ones (redis-server's rules), and is reloadable; failed
// AUTH attempts are counted (INFO acl_access_denied_auth, shardproxy_client_auth_failures_total),
// logged at warn, and past three on a connection answered late with nothing else read meanwhile;
// CLIENT LIST, CLIENT KILL and INFO shards need an admin user once users are configured, with
// redis-server's -NOPERM wording. (The descriptor limit: test_client_limits.py.)
#include <signal.h>

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "integration/clients_helpers.h"
#include "integration/harness.h"
#include "integration/metrics_scrape.h"

namespace sp::test {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr const char* kUsers = R"(auth:
  users:
    - name: app
      password: app-pass-1234
    - name: ops
      password: ops-pass-5678
      admin: true
)";

// True once the peer has closed `conn` (reads and discards anything else).
bool closedWithin(RawConn& conn, milliseconds timeout) {
  std::string ignored;
  return conn.readToClose(&ignored, timeout);
}

TEST(IdleTimeoutTest, IdleClientsAreClosedOthersStay) {
  if (directMode()) {
    GTEST_SKIP() << "proxy configuration";
  }
  TempDir dir;
  auto shards = startShards(2);
  const std::string config = writeFile(dir, "idle.yaml", "limits:\n  timeout: 1\n");
  ProxyProcess proxy(shardList(shards), 1, {"--config", config});

  Client admin(proxy.port());
  EXPECT_EQ(admin.cmd({"CONFIG", "GET", "timeout"}), "[timeout, 1]");
  EXPECT_EQ(admin.cmd({"CONFIG", "GET", "tcp-keepalive"}), "[tcp-keepalive, 300]");

  RawConn idle(proxy.port());
  ASSERT_TRUE(idle.sendAll("PING\r\n"));
  EXPECT_EQ(idle.readUntil("\r\n", seconds(5)), "+PONG\r\n");

  Client subscriber(proxy.port());
  EXPECT_EQ(subscriber.cmd({"SUBSCRIBE", "news"}), "[subscribe, news, (integer) 1]");

  // Blocked for longer than the timeout: waiting for a reply is not idle.
  RawConn blocked(proxy.port());
  ASSERT_TRUE(blocked.sendAll("*3\r\n$5\r\nBLPOP\r\n$9\r\nno-such-q\r\n$1\r\n3\r\n"));

  RawConn busy(proxy.port());
  const auto start = std::chrono::steady_clock::now();
  while (std::chrono::steady_clock::now() - start < milliseconds(3200)) {
    ASSERT_TRUE(busy.sendAll("PING\r\n"));
    ASSERT_EQ(busy.readUntil("\r\n", seconds(5)), "+PONG\r\n");
    std::this_thread::sleep_for(milliseconds(250));
  }
  EXPECT_EQ(blocked.readUntil("*-1\r\n", seconds(5)), "*-1\r\n");
  ASSERT_TRUE(blocked.sendAll("PING\r\n"));
  EXPECT_EQ(blocked.readUntil("\r\n", seconds(5)), "+PONG\r\n");
  // The idle client went once it had been idle for more than a second (the sweep runs every
  // 250 ms); by now 3 s have passed. So did `admin`, idle since its CONFIG GETs.
  EXPECT_TRUE(closedWithin(idle, seconds(2)));
  EXPECT_EQ(admin.cmd({"PING"}).rfind("(io-error)", 0), 0u);
  Client publisher(proxy.port());
  EXPECT_EQ(publisher.cmd({"PUBLISH", "news", "still-here"}), "(integer) 1");
  EXPECT_EQ(nextReply(subscriber, seconds(5)), "[message, news, still-here]");
}

TEST(IdleTimeoutTest, TimeoutIsReloadable) {
  if (directMode()) {
    GTEST_SKIP() << "proxy configuration";
  }
  TempDir dir;
  auto shards = startShards(1);
  const std::string config = writeFile(dir, "idle.yaml", "limits:\n  timeout: 0\n");
  const uint16_t metrics = freePort();
  ProxyProcess proxy(
      shardList(shards), 1,
      {"--config", config, "--metrics-listen", "127.0.0.1:" + std::to_string(metrics)});
  RawConn idle(proxy.port());
  ASSERT_TRUE(idle.sendAll("PING\r\n"));
  EXPECT_EQ(idle.readUntil("\r\n", seconds(5)), "+PONG\r\n");
  EXPECT_FALSE(closedWithin(idle, milliseconds(1500))) << "timeout 0 never closes";

  writeFile(dir, "idle.yaml", "limits:\n  timeout: 1\n");
  proxy.process().signal(SIGHUP);
  EXPECT_TRUE(eventually([&] {
    Client c(proxy.port());
    return c.cmd({"CONFIG", "GET", "timeout"}) == "[timeout, 1]";
  }));
  EXPECT_TRUE(closedWithin(idle, seconds(5)));
  EXPECT_TRUE(eventually([&] {
    return scrape(metrics).sum("shardproxy_client_connections_closed_total",
                               {{"reason", "idle_timeout"}}) >= 1;
  }));
}

class AuthLimitsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (directMode()) {
      GTEST_SKIP() << "proxy configuration";
    }
    shards_ = startShards(2);
    metrics_ = freePort();
    proxy_ = std::make_unique<ProxyProcess>(
        shardList(shards_), 1,
        std::vector<std::string>{"--config", writeFile(dir_, "users.yaml", kUsers),
                                 "--metrics-listen", "127.0.0.1:" + std::to_string(metrics_)});
  }
  uint16_t port() const { return proxy_->port(); }

  TempDir dir_;
  uint16_t metrics_ = 0;
  std::vector<std::unique_ptr<RedisServer>> shards_;
  std::unique_ptr<ProxyProcess> proxy_;
};

TEST_F(AuthLimitsTest, FailedAuthIsCountedLoggedAndSlowedDown) {
  // Five wrong passwords, the right one and a PING, pipelined in one write. The first three
  // failures are answered at once; the fourth and fifth after 100 and 200 ms, and the right
  // password (a success is as late as a failure would be) after 400 ms, each only once the
  // answer before it has gone. The replies keep their order.
  std::string pipeline;
  for (int i = 0; i < 5; ++i) {
    pipeline += "*3\r\n$4\r\nAUTH\r\n$3\r\napp\r\n$5\r\nguess\r\n";
  }
  pipeline += "*3\r\n$4\r\nAUTH\r\n$3\r\napp\r\n$13\r\napp-pass-1234\r\n*1\r\n$4\r\nPING\r\n";
  RawConn raw(port());
  const auto start = std::chrono::steady_clock::now();
  ASSERT_TRUE(raw.sendAll(pipeline));
  const std::string out = raw.readUntil("+PONG\r\n", seconds(10));
  const auto took = std::chrono::steady_clock::now() - start;
  std::string expected;
  for (int i = 0; i < 5; ++i) {
    expected += "-WRONGPASS invalid username-password pair or user is disabled.\r\n";
  }
  expected += "+OK\r\n+PONG\r\n";
  EXPECT_EQ(out, expected);
  // 100 + 200 + 400 ms of delays. libuv arms each timer from the loop's cached millisecond
  // clock, which can trail the moment the bytes arrived by up to a millisecond per delay, so
  // the client may see a few microseconds less than 700 ms in all (699.96 ms was seen).
  EXPECT_GE(took, milliseconds(690)) << "answers past the third failure come late";

  // HELLO ... AUTH counts too, per connection: a fresh connection starts with free attempts.
  Client hello(port());
  EXPECT_EQ(hello.cmd({"HELLO", "2", "AUTH", "app", "nope"}),
            "(error) WRONGPASS invalid username-password pair or user is disabled.");

  Client ops(port());
  ASSERT_EQ(ops.cmd({"AUTH", "ops", "ops-pass-5678"}), "OK");
  EXPECT_EQ(infoField(ops, "stats", "acl_access_denied_auth"), "6");
  EXPECT_EQ(scrape(metrics_).sum("shardproxy_client_auth_failures_total"), 6);
  const std::string log = proxy_->process().log();
  EXPECT_NE(log.find("failed to authenticate (4 on this connection, answered after 100 ms)"),
            std::string::npos)
      << log;
  EXPECT_EQ(log.find("guess"), std::string::npos) << "passwords are never logged";
}

TEST_F(AuthLimitsTest, ClientListAndInfoShardsNeedAnAdmin) {
  Client app(port());
  ASSERT_EQ(app.cmd({"AUTH", "app", "app-pass-1234"}), "OK");
  // redis-server's words for a user without the right (ACL SETUSER u +@all -@admin -@dangerous).
  EXPECT_EQ(app.cmd({"CLIENT", "LIST"}),
            "(error) NOPERM this user has no permissions to run the 'client|list' command");
  EXPECT_EQ(app.cmd({"CLIENT", "LIST", "ID", "1"}),
            "(error) NOPERM this user has no permissions to run the 'client|list' command");
  EXPECT_EQ(app.cmd({"CLIENT", "KILL", "ID", "1"}),
            "(error) NOPERM this user has no permissions to run the 'client|kill' command");
  EXPECT_EQ(app.cmd({"INFO", "shards"}),
            "(error) NOPERM this user has no permissions to run the 'info' command");
  EXPECT_EQ(app.cmd({"INFO", "SHARDS"}),
            "(error) NOPERM this user has no permissions to run the 'info' command");
  // About the caller only: open to every user, as in Redis.
  EXPECT_NE(app.cmd({"CLIENT", "INFO"}).find(" user=app "), std::string::npos);
  const std::string info = app.cmd({"INFO"});
  EXPECT_NE(info.find("# Clients"), std::string::npos) << info;
  EXPECT_EQ(info.find("# Shards"), std::string::npos) << "a plain INFO leaves the shards out";
  EXPECT_EQ(app.cmd({"INFO", "all"}).find("# Shards"), std::string::npos);

  Client ops(port());
  ASSERT_EQ(ops.cmd({"AUTH", "ops", "ops-pass-5678"}), "OK");
  EXPECT_NE(ops.cmd({"CLIENT", "LIST"}).find(" user=app "), std::string::npos);
  EXPECT_NE(ops.cmd({"INFO", "shards"}).find("# Shards"), std::string::npos);
  EXPECT_NE(ops.cmd({"INFO"}).find("# Shards"), std::string::npos);
}

TEST_F(AuthLimitsTest, ProxySettingsAreNotSentToTheShards) {
  Client ops(port());
  ASSERT_EQ(ops.cmd({"AUTH", "ops", "ops-pass-5678"}), "OK");
  EXPECT_EQ(ops.cmd({"CONFIG", "GET", "timeout"}), "[timeout, 0]");
  // allow_config_set is off, so every CONFIG SET is refused; with it on, these three are applied
  // to the proxy and never sent to the shards (checked below on a proxy that allows CONFIG SET).
  EXPECT_EQ(
      ops.cmd({"CONFIG", "SET", "timeout", "5"}).rfind("(error) ERR CONFIG SET is disabled", 0),
      0u);
  TempDir dir;
  const std::string config = writeFile(dir, "set.yaml", "allow_config_set: true\n");
  ProxyProcess open(shardList(shards_), 1, {"--config", config});
  Client c(open.port());
  EXPECT_EQ(c.cmd({"CONFIG", "SET", "timeout", "5"}), "OK");
  EXPECT_EQ(c.cmd({"CONFIG", "GET", "timeout"}), "[timeout, 5]");
  EXPECT_EQ(c.cmd({"CONFIG", "SET", "hz", "11", "TCP-KEEPALIVE", "60"}), "OK");
  EXPECT_EQ(c.cmd({"CONFIG", "GET", "tcp-keepalive"}), "[tcp-keepalive, 60]");
  EXPECT_EQ(c.cmd({"CONFIG", "SET", "maxclients", "10"}), "OK");
  Client shard(shards_[0]->port());
  EXPECT_EQ(shard.cmd({"CONFIG", "GET", "timeout"}), "[timeout, 0]");
  EXPECT_EQ(shard.cmd({"CONFIG", "GET", "tcp-keepalive"}), "[tcp-keepalive, 300]");
  EXPECT_EQ(shard.cmd({"CONFIG", "GET", "maxclients"}), "[maxclients, 10000]");
  EXPECT_EQ(shard.cmd({"CONFIG", "GET", "hz"}), "[hz, 11]") << "the shards' part was sent";
  EXPECT_EQ(c.cmd({"CONFIG", "SET", "hz", "10"}), "OK");
}

}  // namespace
}  // namespace sp::test
