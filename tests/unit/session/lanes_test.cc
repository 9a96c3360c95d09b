// The session's lanes, driven over loopback against a worker on two fake shards (which fail the
// test when a key reaches a shard that does not own it): replies keep their order across shards
// and across the fragments of a split MGET; a transaction runs on the shard of its first key, and
// the one after a DISCARD on the shard of its own; a pipelined WATCH / MULTI / DISCARD leaves the
// session serving; a subscriber gets the subscriber-context answers; errors of the transaction
// lane use redis-server's words; a blocking command is answered by the shard of its key, and the
// session goes on; a transaction's dedicated connection goes back to the pool and a subscriber's
// closes with its client; with auth.password nothing but AUTH (and HELLO, QUIT) runs before AUTH.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "backend/dedicated_conn.h"
#include "backend/worker_backends.h"
#include "config/config.h"
#include "fakes/fake_shards.h"
#include "fakes/redis_client.h"
#include "fakes/worker_harness.h"
#include "net/worker.h"
#include "route/topology.h"

namespace sp::session {
namespace {

using fakes::keysOn;
using fakes::RedisClient;
using fakes::Reply;
using fakes::text;
using fakes::WorkerHarness;

class LanesTest : public ::testing::Test {
 protected:
  // "s<shard>|<the arguments>": how the fakes answer a keyed command.
  std::string tagged(uint16_t shard, const std::string& args) const {
    return "s" + std::to_string(shard) + "|" + args;
  }
  std::string onShard(uint16_t shard, size_t i = 0) const {
    return keysOn(*shards_.topology(), shard, i + 1)[i];
  }

  fakes::FakeShards shards_{2, [](const std::string& what) { ADD_FAILURE() << what; }};
  WorkerHarness harness_{shards_.topology(), {}, WorkerHarness::Listen::kLoopback};
  RedisClient client_{harness_.port()};
};

TEST_F(LanesTest, PipelinedRepliesKeepTheirOrderAcrossShards) {
  std::vector<std::vector<std::string>> commands;
  std::vector<std::string> want;
  for (size_t i = 0; i < 40; ++i) {
    const uint16_t shard = static_cast<uint16_t>(i % 3 == 0 ? 1 : 0);
    const std::string key = onShard(shard, i);
    commands.push_back({"GET", key});
    want.push_back(tagged(shard, "GET " + key));
  }
  const std::vector<Reply> replies = client_.pipeline(commands);
  ASSERT_EQ(replies.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    ASSERT_TRUE(replies[i] != nullptr);
    EXPECT_EQ(text(*replies[i]), want[i]) << "reply " << i;
  }
}

TEST_F(LanesTest, ASplitMgetPutsEachShardsValuesBackInKeyOrder) {
  const std::vector<std::string> keys{onShard(0, 0), onShard(1, 0), onShard(1, 1), onShard(0, 1)};
  Reply r = client_.command({"MGET", keys[0], keys[1], keys[2], keys[3]});
  ASSERT_TRUE(r != nullptr);
  ASSERT_EQ(r->type, REDIS_REPLY_ARRAY);
  ASSERT_EQ(r->elements, 4u);
  EXPECT_EQ(text(*r->element[0]), tagged(0, keys[0]));
  EXPECT_EQ(text(*r->element[1]), tagged(1, keys[1]));
  EXPECT_EQ(text(*r->element[2]), tagged(1, keys[2]));
  EXPECT_EQ(text(*r->element[3]), tagged(0, keys[3]));
}

TEST_F(LanesTest, ATransactionAfterADiscardedOneRunsOnItsOwnShard) {
  const std::string first = onShard(0);
  const std::string second = onShard(1);
  const std::vector<Reply> replies = client_.pipeline({{"MULTI"},
                                                       {"SET", first, "a"},
                                                       {"DISCARD"},
                                                       {"MULTI"},
                                                       {"SET", second, "b"},
                                                       {"GET", second},
                                                       {"EXEC"}});
  ASSERT_TRUE(fakes::allAnswered(replies));
  EXPECT_EQ(text(*replies[0]), "OK");
  EXPECT_EQ(text(*replies[1]), "QUEUED");
  EXPECT_EQ(text(*replies[2]), "OK");
  EXPECT_EQ(text(*replies[4]), "QUEUED");
  const redisReply& exec = *replies[6];
  ASSERT_EQ(exec.type, REDIS_REPLY_ARRAY);
  ASSERT_EQ(exec.elements, 2u);
  EXPECT_EQ(text(*exec.element[0]), tagged(1, "SET " + second + " b"));
  EXPECT_EQ(text(*exec.element[1]), tagged(1, "GET " + second));
}

TEST_F(LanesTest, APipelinedWatchMultiDiscardLeavesTheSessionServing) {
  const std::string key = onShard(1);
  const std::vector<Reply> replies = client_.pipeline(
      {{"WATCH", key}, {"MULTI"}, {"GET", key}, {"DISCARD"}, {"GET", key}, {"PING"}});
  ASSERT_TRUE(fakes::allAnswered(replies));
  EXPECT_EQ(text(*replies[0]), "OK");
  EXPECT_EQ(text(*replies[1]), "OK");
  EXPECT_EQ(text(*replies[2]), "QUEUED");
  EXPECT_EQ(text(*replies[3]), "OK");
  EXPECT_EQ(text(*replies[4]), tagged(1, "GET " + key));
  EXPECT_EQ(text(*replies[5]), "PONG");
}

TEST_F(LanesTest, TransactionErrorsAreRedisServersWords) {
  const std::vector<Reply> replies =
      client_.pipeline({{"EXEC"}, {"DISCARD"}, {"MULTI"}, {"MULTI"}, {"WATCH", "k"}, {"DISCARD"}});
  ASSERT_TRUE(fakes::allAnswered(replies));
  EXPECT_EQ(text(*replies[0]), "ERR EXEC without MULTI");
  EXPECT_EQ(text(*replies[1]), "ERR DISCARD without MULTI");
  EXPECT_EQ(text(*replies[2]), "OK");
  EXPECT_EQ(text(*replies[3]), "ERR MULTI calls can not be nested");
  EXPECT_EQ(text(*replies[4]), "ERR WATCH inside MULTI is not allowed");
  EXPECT_EQ(text(*replies[5]), "OK");
}

TEST_F(LanesTest, ASubscriberGetsTheSubscriberContextAnswers) {
  Reply sub = client_.command({"SUBSCRIBE", "news"});
  ASSERT_TRUE(sub != nullptr);
  ASSERT_EQ(sub->type, REDIS_REPLY_ARRAY);
  ASSERT_EQ(sub->elements, 3u);
  EXPECT_EQ(text(*sub->element[0]), "subscribe");
  EXPECT_EQ(text(*sub->element[1]), "news");
  EXPECT_EQ(sub->element[2]->integer, 1);
  const std::vector<Reply> replies =
      client_.pipeline({{"PING"}, {"GET", "k"}, {"RESET"}, {"PING"}});
  ASSERT_TRUE(fakes::allAnswered(replies));
  ASSERT_EQ(replies[0]->type, REDIS_REPLY_ARRAY);
  EXPECT_EQ(text(*replies[0]->element[0]), "pong");
  EXPECT_EQ(text(*replies[0]->element[1]), "");
  EXPECT_EQ(text(*replies[1]),
            "ERR Can't execute 'get': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET "
            "are allowed in this context");
  EXPECT_EQ(text(*replies[2]), "RESET");
  EXPECT_EQ(text(*replies[3]), "PONG");  // out of the subscriber context
}

TEST_F(LanesTest, ABlockingCommandIsAnsweredByItsKeysShardAndTheSessionGoesOn) {
  const std::string key = onShard(1);
  const std::vector<Reply> replies =
      client_.pipeline({{"BLPOP", key, "0"}, {"GET", key}, {"PING"}});
  ASSERT_TRUE(fakes::allAnswered(replies));
  ASSERT_EQ(replies[0]->type, REDIS_REPLY_ARRAY);
  ASSERT_EQ(replies[0]->elements, 2u);
  EXPECT_EQ(text(*replies[0]->element[0]), key);
  EXPECT_EQ(text(*replies[0]->element[1]), tagged(1, "BLPOP " + key + " 0"));
  EXPECT_EQ(text(*replies[1]), tagged(1, "GET " + key));
  EXPECT_EQ(text(*replies[2]), "PONG");
}

TEST_F(LanesTest, DedicatedConnectionsAreKeptIdleAfterATransactionAndClosedAfterASubscriber) {
  struct Counts {
    size_t open;
    size_t idle;
  };
  auto counts = [&] {
    return fakes::onWorker<Counts>(harness_.worker(), [](net::Worker& w) {
      return Counts{backend::dedicatedOf(w).openCount(), backend::dedicatedOf(w).idleCount()};
    });
  };
  const std::string key = onShard(0);
  client_.pipeline({{"MULTI"}, {"SET", key, "v"}, {"EXEC"}});
  Counts after_exec = counts();
  EXPECT_EQ(after_exec.open, 1u);
  EXPECT_EQ(after_exec.idle, 1u);  // back in the pool for the next transaction
  client_.pipeline({{"MULTI"}, {"GET", key}, {"EXEC"}});
  EXPECT_EQ(counts().open, 1u);  // and reused by it

  {
    RedisClient subscriber(harness_.port());
    Reply sub = subscriber.command({"SUBSCRIBE", "news"});
    ASSERT_TRUE(sub != nullptr);
    EXPECT_EQ(counts().open, 2u);
  }
  // The subscriber went away: its connection is closed, not kept.
  bool closed = false;
  for (int i = 0; i < 500 && !closed; ++i) {
    const Counts now = counts();
    closed = now.open == 1 && now.idle == 1;
    if (!closed) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
  EXPECT_TRUE(closed);
}

TEST(LanesAuthTest, NothingButAuthRunsBeforeAuth) {
  fakes::FakeShards shards(2, [](const std::string& what) { ADD_FAILURE() << what; });
  WorkerHarness harness(
      shards.topology(), [](config::Config& c) { c.auth.password = "pw"; },
      WorkerHarness::Listen::kLoopback);
  RedisClient client(harness.port());
  const std::string key = keysOn(*shards.topology(), 0, 1)[0];
  const std::vector<Reply> replies =
      client.pipeline({{"GET", key}, {"AUTH", "nope"}, {"AUTH", "pw"}, {"GET", key}});
  ASSERT_TRUE(fakes::allAnswered(replies));
  EXPECT_EQ(text(*replies[0]), "NOAUTH Authentication required.");
  EXPECT_EQ(text(*replies[1]), "WRONGPASS invalid username-password pair or user is disabled.");
  EXPECT_EQ(text(*replies[2]), "OK");
  EXPECT_EQ(text(*replies[3]), "s0|GET " + key);
}

}  // namespace
}  // namespace sp::session
