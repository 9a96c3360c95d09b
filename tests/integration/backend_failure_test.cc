// Backends that fail: a shard killed or stalled under a verifying load through a 4-shard proxy,
// replica reads, and AUTH to the shards. Every reply is checked against what its request must
// get: the value last written for that key, or the shard's exact error, so a misrouted, stale or
// misordered reply fails the test.
#include <hiredis/hiredis.h>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <mutex>
#include <thread>

#include "harness.h"
#include "verify_load.h"

namespace sp::test {
namespace {

std::string proxyConfig(const std::string& dir, const std::string& shards_yaml,
                        const std::string& backend_yaml) {
  return writeFile(dir + "/proxy.yaml", "shards:\n" + shards_yaml + "backend:\n" + backend_yaml);
}

std::string shardsYaml(const std::vector<std::unique_ptr<RedisServer>>& shards) {
  std::string out;
  for (size_t i = 0; i < shards.size(); ++i) {
    out += "  - name: shard" + std::to_string(i) + "\n    address: " + shards[i]->address() + "\n";
  }
  return out;
}

// With no traffic at all, the health PINGs alone must keep every connection up: a PING queued by
// the timer is sent at once, not when the loop next wakes for another reason (which used to be
// the request timeout, so idle connections were recycled every other second).
TEST(BackendFailureTest, IdleConnectionsStayUpOnPingsAlone) {
  auto shards = startShards(2);
  TempDir dir;
  const std::string conf = proxyConfig(dir.path(), shardsYaml(shards),
                                       "  ping_interval_ms: 1000\n"
                                       "  timeout_ms: 700\n");
  ProxyProcess proxy("", 1, {"--config", conf});
  // Three or four pings per connection, each of which (before the fix) waited for the 700 ms
  // request timer to fire, and timed out: a reconnect every other second.
  std::this_thread::sleep_for(milliseconds(3500));
  Client c(proxy.port());
  const std::string shards_info = c.cmd({"PROXY", "SHARDS"});
  auto count = [&](const std::string& what) {
    size_t n = 0;
    for (size_t at = shards_info.find(what); at != std::string::npos;
         at = shards_info.find(what, at + 1)) {
      ++n;
    }
    return n;
  };
  EXPECT_EQ(count("state, up,"), 2u) << shards_info;
  EXPECT_EQ(count("timeouts, (integer) 0,"), 2u) << shards_info;
  EXPECT_EQ(count("reconnects, (integer) 0,"), 2u) << shards_info;
  EXPECT_EQ(count("ping_failures, (integer) 0,"), 2u) << shards_info;
  EXPECT_EQ(proxy.process().log().find("down:"), std::string::npos) << proxy.process().log();
  EXPECT_EQ(c.cmd({"SET", "idle", "1"}), "OK");
}

TEST(BackendFailureTest, KilledShardFailsItsKeysOnlyAndRecovers) {
  auto shards = startShards(4);
  TempDir dir;
  const std::string conf = proxyConfig(dir.path(), shardsYaml(shards),
                                       "  ping_interval_ms: 1000\n"
                                       "  retry_timeout_ms: 1000\n"
                                       "  retry_timeout_max_ms: 1000\n");
  ProxyProcess proxy("", 2, {"--config", conf});
  VerifyLoad load(proxy.port(), 4, 4);
  std::this_thread::sleep_for(milliseconds(700));
  const int victim = 1;
  shards[victim]->kill9();
  std::this_thread::sleep_for(milliseconds(500));
  const uint64_t others_before = load.okFor(0) + load.okFor(2) + load.okFor(3);
  std::this_thread::sleep_for(milliseconds(1500));
  // While it is down, its keys fail with the shard's error and every other shard keeps serving.
  EXPECT_GT(load.errorsFor(victim), 0u);
  EXPECT_NE(load.lastError(victim).find("shard1 (127.0.0.1:"), std::string::npos)
      << load.lastError(victim);
  EXPECT_GT(load.okFor(0) + load.okFor(2) + load.okFor(3), others_before + 100);
  for (int s : {0, 2, 3}) {
    EXPECT_EQ(load.errorsFor(s), 0u) << "shard " << s << ": " << load.lastError(s);
  }
  shards[victim]->restart();  // returns once it accepts connections
  const auto restarted = Clock::now();
  const auto deadline = restarted + std::chrono::seconds(15);
  while (load.lastOk(victim) < restarted && Clock::now() < deadline) {
    std::this_thread::sleep_for(milliseconds(20));
  }
  const auto resumed_after =
      std::chrono::duration_cast<milliseconds>(load.lastOk(victim) - restarted);
  std::this_thread::sleep_for(milliseconds(300));
  load.stop();
  // Within two ping intervals of the restart, traffic for the shard resumes.
  EXPECT_GT(load.lastOk(victim), restarted) << "no success for the restarted shard";
  EXPECT_LT(resumed_after.count(), 2000);
  EXPECT_EQ(load.mismatches(), 0u) << load.firstMismatch();
  EXPECT_TRUE(proxy.process().alive());
  Client c(proxy.port());
  EXPECT_NE(c.cmd({"INFO", "shards"}).find("ejections="), std::string::npos);
}

TEST(BackendFailureTest, StalledShardTimesOutWithinTheBound) {
  auto shards = startShards(4);
  TempDir dir;
  // The slow log records the proxy's own time for each request (parse to reply).
  const std::string conf = proxyConfig(dir.path(), shardsYaml(shards),
                                       "  timeout_ms: 500\n"
                                       "slowlog:\n"
                                       "  threshold_us: 100000\n");
  ProxyProcess proxy("", 1, {"--config", conf});
  std::string stalled_key;
  for (int i = 0; stalled_key.empty(); ++i) {
    std::string key = "stall:" + std::to_string(i);
    if (shardOf(key, 4) == 2) {
      stalled_key = key;
    }
  }
  VerifyLoad load(proxy.port(), 4, 2);
  std::this_thread::sleep_for(milliseconds(300));
  shards[2]->pause();
  Client probe(proxy.port());
  ASSERT_EQ(probe.cmd({"CLIENT", "SETNAME", "probe"}), "OK");
  const auto sent = Clock::now();
  const std::string reply = probe.cmd({"GET", stalled_key});
  const auto took = std::chrono::duration_cast<milliseconds>(Clock::now() - sent);
  EXPECT_NE(reply.find("unavailable: timeout after 500 ms"), std::string::npos) << reply;
  // The bound, timeout + 100 ms, on the proxy's own clock: this test's wall clock adds its own
  // scheduling on a loaded machine, so it only gets a loose sanity bound.
  long long proxy_us = -1;
  {
    redisReply* log = static_cast<redisReply*>(redisCommand(probe.ctx(), "PROXY SLOWLOG GET 128"));
    ASSERT_NE(log, nullptr);
    for (size_t i = 0; log->type == REDIS_REPLY_ARRAY && i < log->elements; ++i) {
      const redisReply* e = log->element[i];
      if (e->elements == 7 && e->element[5]->type == REDIS_REPLY_STRING &&
          std::string(e->element[5]->str, e->element[5]->len) == "probe") {
        proxy_us = e->element[2]->integer;
      }
    }
    freeReplyObject(log);
  }
  EXPECT_GE(proxy_us, 0) << "the probe's GET is not in the slow log";
  EXPECT_LE(proxy_us, 600000) << "timeout + 100 ms";
  EXPECT_LE(took.count(), 3000);
  // Other shards are untouched while it is stalled.
  EXPECT_EQ(probe.cmd({"SET", "{other}x", "1"}).substr(0, 2),
            shardOf("other", 4) == 2 ? "(e" : "OK");
  std::this_thread::sleep_for(milliseconds(700));
  shards[2]->resume();
  std::this_thread::sleep_for(milliseconds(2500));
  load.stop();
  // Late replies from the resumed shard never reached the wrong request.
  EXPECT_EQ(load.mismatches(), 0u) << load.firstMismatch();
  EXPECT_GT(load.errorsFor(2), 0u);
  EXPECT_EQ(probe.cmd({"SET", stalled_key, "back"}), "OK");
  EXPECT_EQ(probe.cmd({"GET", stalled_key}), "back");
}

long commandCalls(uint16_t port, const std::string& command) {
  Client c(port);
  const std::string info = c.cmd({"INFO", "commandstats"});
  const std::string needle = "cmdstat_" + command + ":calls=";
  size_t at = info.find(needle);
  return at == std::string::npos ? 0 : std::stol(info.substr(at + needle.size()));
}

// shards: one shard with its replica, as proxyConfig's shards YAML.
std::string shardWithReplica(const RedisServer& primary, const RedisServer& replica) {
  return "  - name: shard0\n    address: " + primary.address() + "\n    replicas: [" +
         replica.address() + "]\n";
}

// Waits up to 30 s for `key` to read `value` on the replica itself.
bool replicaHas(const RedisServer& replica, const std::string& key, const std::string& value) {
  Client direct(replica.port());
  const auto deadline = Clock::now() + std::chrono::seconds(30);
  while (direct.cmd({"GET", key}) != value && Clock::now() < deadline) {
    std::this_thread::sleep_for(milliseconds(50));
  }
  return direct.cmd({"GET", key}) == value;
}

TEST(BackendFailureTest, ReadsGoToTheReplicaWritesToThePrimary) {
  // No 5 s wait for more replicas before the first full sync (Redis's default).
  RedisServer primary({"--repl-diskless-sync-delay", "0"});
  RedisServer replica({"--replicaof", "127.0.0.1", std::to_string(primary.port())});
  TempDir dir;
  const std::string conf =
      proxyConfig(dir.path(), shardWithReplica(primary, replica), "  read_from: prefer-replica\n");
  ProxyProcess proxy("", 1, {"--config", conf});
  Client c(proxy.port());
  ASSERT_EQ(c.cmd({"SET", "rk", "v1"}), "OK");
  ASSERT_TRUE(replicaHas(replica, "rk", "v1")) << "the replica never synced";
  const long replica_gets = commandCalls(replica.port(), "get");
  for (int i = 0; i < 50; ++i) {
    ASSERT_EQ(c.cmd({"GET", "rk"}), "v1");
  }
  EXPECT_EQ(commandCalls(replica.port(), "get") - replica_gets, 50);
  EXPECT_EQ(commandCalls(primary.port(), "get"), 0);
  EXPECT_EQ(commandCalls(primary.port(), "set"), 1);
  // The write ran on the primary; the replica's one SET call is the primary's replication
  // stream (a client's SET on the read-only replica would have been refused, not counted).
  EXPECT_EQ(commandCalls(replica.port(), "set"), commandCalls(primary.port(), "set"))
      << "writes never go to the replica";

  // A failed replica falls back to the primary for reads.
  replica.kill9();
  int good = 0;
  for (int i = 0; i < 40 && good < 5; ++i) {
    good = c.cmd({"GET", "rk"}) == "v1" ? good + 1 : 0;
    std::this_thread::sleep_for(milliseconds(50));
  }
  EXPECT_EQ(good, 5);
  EXPECT_GE(commandCalls(primary.port(), "get"), 5);
}

TEST(BackendFailureTest, AStalledReplicaIsPassedOverForReadsAtOnce) {
  RedisServer primary({"--repl-diskless-sync-delay", "0"});
  RedisServer replica({"--replicaof", "127.0.0.1", std::to_string(primary.port())});
  TempDir dir;
  const std::string conf = proxyConfig(dir.path(), shardWithReplica(primary, replica),
                                       "  read_from: prefer-replica\n"
                                       "  ping_interval_ms: 200\n"
                                       "  timeout_ms: 3000\n");
  ProxyProcess proxy("", 1, {"--config", conf});
  Client c(proxy.port());
  ASSERT_EQ(c.cmd({"SET", "sk", "v1"}), "OK");
  ASSERT_TRUE(replicaHas(replica, "sk", "v1")) << "the replica never synced";
  ASSERT_EQ(c.cmd({"GET", "sk"}), "v1");
  const long replica_gets = commandCalls(replica.port(), "get");
  EXPECT_GE(replica_gets, 1);

  // Stalled (SIGSTOP): its health PING goes unanswered, so within a ping period and 100 ms it
  // is passed over, and every read is served by the primary at once. A read sent to the stalled
  // replica would fail after the 3 s stall limit instead of answering v1.
  replica.pause();
  std::this_thread::sleep_for(milliseconds(600));
  for (int i = 0; i < 20; ++i) {
    ASSERT_EQ(c.cmd({"GET", "sk"}), "v1") << i;
  }
  EXPECT_GE(commandCalls(primary.port(), "get"), 20);
  replica.resume();

  // Back: reads return to the replica.
  const auto back_by = Clock::now() + std::chrono::seconds(10);
  while (commandCalls(replica.port(), "get") == replica_gets && Clock::now() < back_by) {
    ASSERT_EQ(c.cmd({"GET", "sk"}), "v1");
    std::this_thread::sleep_for(milliseconds(50));
  }
  EXPECT_GT(commandCalls(replica.port(), "get"), replica_gets);
}

TEST(BackendFailureTest, AuthWithPasswordAndAclUser) {
  RedisServer with_password({"--requirepass", "s3cret"});
  RedisServer with_user(
      {"--user", "default", "off", "--user", "app", "on", ">apppass", "~*", "&*", "+@all"});
  TempDir dir;
  const std::string conf =
      proxyConfig(dir.path(),
                  "  - name: shard0\n    address: " + with_password.address() +
                      "\n    password: s3cret\n"
                      "  - name: shard1\n    address: " +
                      with_user.address() + "\n    username: app\n    password: apppass\n",
                  "  ping_interval_ms: 200\n");
  ProxyProcess proxy("", 1, {"--config", conf});
  Client c(proxy.port());
  for (int i = 0; i < 20; ++i) {
    const std::string key = "auth:" + std::to_string(i);
    ASSERT_EQ(c.cmd({"SET", key, "v"}), "OK") << key;
    ASSERT_EQ(c.cmd({"GET", key}), "v");
  }
  Client p(with_password.port());
  EXPECT_EQ(p.cmd({"AUTH", "s3cret"}), "OK");
  EXPECT_EQ(p.cmd({"DBSIZE"}).substr(0, 10), "(integer) ");
  EXPECT_NE(p.cmd({"DBSIZE"}), "(integer) 0");
  Client u(with_user.port());
  EXPECT_EQ(u.cmd({"AUTH", "app", "apppass"}), "OK");
  EXPECT_NE(u.cmd({"DBSIZE"}), "(integer) 0");

  // A wrong password is reported as the shard's error, and the proxy stays up.
  const std::string bad = proxyConfig(
      dir.path(),
      "  - name: shard0\n    address: " + with_password.address() + "\n    password: wrong\n",
      "  ping_interval_ms: 200\n");
  ProxyProcess bad_proxy("", 1, {"--config", bad});
  Client b(bad_proxy.port());
  const std::string reply = b.cmd({"GET", "x"});
  EXPECT_NE(reply.find("unavailable: authentication failed: WRONGPASS"), std::string::npos)
      << reply;
  EXPECT_EQ(b.cmd({"PING"}), "PONG");
  EXPECT_TRUE(bad_proxy.process().alive());
}

}  // namespace
}  // namespace sp::test
