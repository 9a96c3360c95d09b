// Blocking commands through the proxy: each is served on a dedicated connection to its key's
// shard, so a BLPOP that waits does not hold up the worker's shared pipeline — 50 other clients of
// the same worker keep completing pipelined round trips while it blocks — and it returns as soon
// as another client pushes. Timeouts, XREAD BLOCK, BLMOVE, BZPOPMIN, WAIT (refused), pipelined
// requests behind a blocked one, CROSSSLOT, and a client that disconnects while blocked (its
// connection is closed, so the shard no longer has a blocked client).
#include <gtest/gtest.h>
#include <hiredis/hiredis.h>

#include <algorithm>
#include <string>
#include <thread>
#include <vector>

#include "integration/clients_helpers.h"
#include "integration/harness.h"

namespace sp::test {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using Clock = std::chrono::steady_clock;

constexpr int kShards = 2;

class BlockingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    env_ = std::make_unique<Deployment>(kShards, /*workers=*/1);
    client_ = std::make_unique<Client>(env_->port());
    ASSERT_TRUE(client_->ok());
  }
  std::string cmd(const std::vector<std::string>& argv) { return client_->cmd(argv); }

  // blocked_clients over every shard, read straight from the redis-servers.
  long long blockedOnShards() {
    long long n = 0;
    for (auto& s : env_->shards()) {
      Client direct(s->port());
      n += std::stoll(infoField(direct, "clients", "blocked_clients"));
    }
    return n;
  }

  std::unique_ptr<Deployment> env_;
  std::unique_ptr<Client> client_;
};

TEST_F(BlockingTest, BlpopDoesNotStallOtherClientsOfTheWorker) {
  constexpr int kClients = 50;
  constexpr int kDepth = 20;  // commands per pipelined round trip
  const std::string list = keyOnShard(0, kShards, "queue");

  // The blocked client: BLPOP with no timeout, sent raw so this thread does not wait.
  RawConn blocked(env_->port());
  const std::string blpop =
      "*3\r\n$5\r\nBLPOP\r\n$" + std::to_string(list.size()) + "\r\n" + list + "\r\n$1\r\n0\r\n";
  ASSERT_TRUE(blocked.sendAll(blpop));
  if (!env_->direct()) {
    ASSERT_TRUE(eventually([&] { return blockedOnShards() == 1; })) << "BLPOP reached its shard";
  }

  // 50 clients on the same worker, each pipelining 10 rounds of SET/GET on keys of every shard
  // while the BLPOP waits. A pipeline stuck behind the BLPOP would never finish (a client gives
  // up after 30 s without a reply).
  constexpr int kRounds = 10;
  std::vector<int> rounds(kClients, 0);
  std::vector<std::string> errors(kClients);
  std::vector<std::thread> threads;
  for (int t = 0; t < kClients; ++t) {
    threads.emplace_back([&, t] {
      Client c(env_->port());
      if (!c.ok()) {
        errors[t] = "connect failed";
        return;
      }
      redisSetTimeout(c.ctx(), timeval{30, 0});
      for (int round = 0; round < kRounds; ++round) {
        for (int i = 0; i < kDepth; ++i) {
          const std::string key = "p" + std::to_string(t) + ":" + std::to_string(i);
          const std::string value = std::to_string(round);
          if (i % 2 == 0) {
            redisAppendCommand(c.ctx(), "SET %s %s", key.c_str(), value.c_str());
          } else {
            redisAppendCommand(c.ctx(), "GET p%d:%d", t, i - 1);
          }
        }
        for (int i = 0; i < kDepth; ++i) {
          void* r = nullptr;
          if (redisGetReply(c.ctx(), &r) != REDIS_OK) {
            errors[t] = "connection error";
            return;
          }
          const std::string got = render(static_cast<redisReply*>(r));
          freeReplyObject(r);
          const std::string want = i % 2 == 0 ? "OK" : std::to_string(round);
          if (got != want) {
            errors[t] = "reply " + std::to_string(i) + ": got " + got + ", want " + want;
            return;
          }
        }
        ++rounds[t];
      }
    });
  }
  for (auto& th : threads) {
    th.join();
  }
  // BLPOP is still waiting: nothing has come back on its connection.
  std::string early;
  EXPECT_EQ(blocked.readSome(&early, milliseconds(10)), RawConn::Read::kTimeout) << early;
  for (int t = 0; t < kClients; ++t) {
    EXPECT_EQ(errors[t], "") << "client " << t;
    // With the BLPOP on its own connection every client's pipeline completes.
    EXPECT_EQ(rounds[t], kRounds) << "client " << t;
  }

  // Another client pushes: BLPOP returns at once.
  const auto pushed = Clock::now();
  EXPECT_EQ(cmd({"RPUSH", list, "job-1"}), "(integer) 1");
  const std::string want =
      "*2\r\n$" + std::to_string(list.size()) + "\r\n" + list + "\r\n$5\r\njob-1\r\n";
  EXPECT_EQ(blocked.readUntil("job-1\r\n", seconds(5)), want);
  EXPECT_LT(std::chrono::duration_cast<milliseconds>(Clock::now() - pushed).count(), 5000);
  EXPECT_EQ(cmd({"LLEN", list}), "(integer) 0");
}

TEST_F(BlockingTest, TimeoutsAndOtherBlockingCommands) {
  EXPECT_EQ(cmd({"BLPOP", "bq", "0.1"}), "(nil)");
  EXPECT_EQ(cmd({"BRPOP", "bq", "0.1"}), "(nil)");
  EXPECT_EQ(cmd({"RPUSH", "{m}src", "a", "b"}), "(integer) 2");
  EXPECT_EQ(cmd({"BLMOVE", "{m}src", "{m}dst", "LEFT", "RIGHT", "1"}), "a");
  EXPECT_EQ(cmd({"BRPOPLPUSH", "{m}src", "{m}dst", "1"}), "b");
  EXPECT_EQ(cmd({"LRANGE", "{m}dst", "0", "-1"}), "[b, a]");
  EXPECT_EQ(cmd({"BLMPOP", "1", "2", "{m}src", "{m}dst", "LEFT"}), "[{m}dst, [b]]");
  EXPECT_EQ(cmd({"ZADD", "z", "1", "one"}), "(integer) 1");
  EXPECT_EQ(cmd({"BZPOPMIN", "z", "1"}), "[z, one, 1]");
  EXPECT_EQ(cmd({"BZPOPMAX", "z", "0.1"}), "(nil)");
  EXPECT_EQ(cmd({"XADD", "s", "1-1", "f", "v"}), "1-1");
  EXPECT_EQ(cmd({"XREAD", "BLOCK", "100", "STREAMS", "s", "0"}), "[[s, [[1-1, [f, v]]]]]");
  EXPECT_EQ(cmd({"XREAD", "BLOCK", "100", "STREAMS", "s", "$"}), "(nil)");
  EXPECT_EQ(cmd({"XREAD", "COUNT", "1", "STREAMS", "s", "0"}), "[[s, [[1-1, [f, v]]]]]");
  // WAIT is refused through the proxy: no connection of the proxy's carries exactly this client's
  // writes, so any count it got could confirm replication that did not happen.
  EXPECT_EQ(cmd({"WAIT", "0", "100"}), env_->direct()
                                           ? "(integer) 0"
                                           : "(error) ERR command 'wait' is not supported by "
                                             "shardproxy");
  if (!env_->direct()) {
    EXPECT_EQ(cmd({"BLPOP", "a", "b", "0"}).substr(0, 17), "(error) CROSSSLOT");
  }
  EXPECT_EQ(cmd({"BLPOP", "x"}), "(error) ERR wrong number of arguments for 'blpop' command");
  EXPECT_EQ(cmd({"SET", "after", "1"}), "OK");
}

TEST_F(BlockingTest, RequestsBehindABlockedOneWaitTheirTurn) {
  // As with Redis, what the client sends after a blocking command runs after it.
  RawConn raw(env_->port());
  ASSERT_TRUE(
      raw.sendAll("*3\r\n$5\r\nBLPOP\r\n$2\r\nbl\r\n$1\r\n0\r\n"
                  "*3\r\n$3\r\nSET\r\n$5\r\nafter\r\n$1\r\n1\r\n"
                  "*2\r\n$3\r\nGET\r\n$5\r\nafter\r\n"));
  std::string early;
  EXPECT_EQ(raw.readSome(&early, milliseconds(300)), RawConn::Read::kTimeout) << early;
  EXPECT_EQ(cmd({"GET", "after"}), "(nil)");
  EXPECT_EQ(cmd({"LPUSH", "bl", "v"}), "(integer) 1");
  EXPECT_EQ(raw.readUntil("$1\r\n1\r\n", seconds(5)),
            "*2\r\n$2\r\nbl\r\n$1\r\nv\r\n+OK\r\n$1\r\n1\r\n");
}

TEST_F(BlockingTest, DisconnectWhileBlockedReleasesTheConnection) {
  if (env_->direct()) {
    GTEST_SKIP() << "proxy-only";
  }
  {
    RawConn raw(env_->port());
    ASSERT_TRUE(raw.sendAll("*3\r\n$5\r\nBLPOP\r\n$4\r\ngone\r\n$1\r\n0\r\n"));
    ASSERT_TRUE(eventually([&] { return blockedOnShards() == 1; }));
  }  // closed while blocked
  EXPECT_TRUE(eventually([&] { return blockedOnShards() == 0; }))
      << "the dedicated connection was closed with its client";
  // Nothing was lost: a later push stays in the list for the next consumer.
  EXPECT_EQ(cmd({"RPUSH", "gone", "v"}), "(integer) 1");
  EXPECT_EQ(cmd({"BLPOP", "gone", "1"}), "[gone, v]");
}

}  // namespace
}  // namespace sp::test
