// The session's transaction lane (session/transaction_lane.h), driven over loopback against a
// worker on one scripted shard: what WATCH holds carries the client's commands for its shard, and
// the transaction, on one connection, in order; a transaction is queued on that connection, not on
// the shared one; losing the connection WATCH held makes the next EXEC fail, and EXEC never
// reaches the shard.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "config/config.h"
#include "fakes/redis_client.h"
#include "fakes/scripted_shard.h"
#include "fakes/worker_harness.h"
#include "route/topology.h"

namespace sp::session {
namespace {

using fakes::RedisClient;
using fakes::Reply;
using fakes::ScriptedShard;
using fakes::text;
using fakes::WorkerHarness;
using Argv = ScriptedShard::Argv;

// WATCH, MULTI, DISCARD, UNWATCH +OK; queued SETs +QUEUED; EXEC [+OK]; GET k "v:k"; GET lost
// hangs up.
ScriptedShard::Answer transactionShard(const Argv& argv) {
  if (argv[0] == "GET" && argv[1] == "lost") {
    return ScriptedShard::hangUp();
  }
  if (argv[0] == "GET") {
    return ScriptedShard::reply("$3\r\nv:" + argv[1] + "\r\n");
  }
  if (argv[0] == "SET") {
    return ScriptedShard::reply("+QUEUED\r\n");
  }
  if (argv[0] == "EXEC") {
    return ScriptedShard::reply("*1\r\n+OK\r\n");
  }
  return ScriptedShard::reply("+OK\r\n");
}

class TransactionLaneTest : public ::testing::Test {
 protected:
  ScriptedShard shard_{transactionShard};
  WorkerHarness harness_{fakes::oneShard(shard_.port()), fakes::noPings,
                         WorkerHarness::Listen::kLoopback};
  RedisClient client_{harness_.port()};
};

TEST_F(TransactionLaneTest, WhatWatchHoldsCarriesTheShardsCommandsAndTheTransaction) {
  const std::vector<Reply> replies =
      client_.pipeline({{"WATCH", "k"}, {"GET", "k"}, {"MULTI"}, {"SET", "k", "v"}, {"EXEC"}});
  ASSERT_TRUE(fakes::allAnswered(replies));
  EXPECT_EQ(text(*replies[0]), "OK");
  EXPECT_EQ(text(*replies[1]), "v:k");
  EXPECT_EQ(text(*replies[2]), "OK");
  EXPECT_EQ(text(*replies[3]), "QUEUED");
  ASSERT_EQ(replies[4]->type, REDIS_REPLY_ARRAY);
  ASSERT_EQ(replies[4]->elements, 1u);
  EXPECT_EQ(text(*replies[4]->element[0]), "OK");
  ASSERT_TRUE(shard_.waitForCommands(5));
  // Two connections: the shared one, which carries nothing here, and WATCH's, which carries all.
  ASSERT_EQ(shard_.connectionsAccepted(), 2u);
  const std::vector<Argv> want{
      {"WATCH", "k"}, {"GET", "k"}, {"MULTI"}, {"SET", "k", "v"}, {"EXEC"}};
  const std::vector<Argv> first = shard_.commandsOn(0);
  const std::vector<Argv> second = shard_.commandsOn(1);
  EXPECT_TRUE((first.empty() && second == want) || (first == want && second.empty()));
}

TEST_F(TransactionLaneTest, LosingWhatWatchHeldFailsTheNextExec) {
  EXPECT_EQ(text(*client_.command({"WATCH", "k"})), "OK");
  Reply lost = client_.command({"GET", "lost"});  // on WATCH's connection, which hangs up
  ASSERT_TRUE(lost != nullptr);
  EXPECT_EQ(lost->type, REDIS_REPLY_ERROR);
  const std::vector<Reply> replies = client_.pipeline({{"MULTI"}, {"SET", "k", "v"}, {"EXEC"}});
  ASSERT_TRUE(fakes::allAnswered(replies));
  EXPECT_EQ(text(*replies[0]), "OK");
  EXPECT_EQ(text(*replies[1]), "QUEUED");
  ASSERT_EQ(replies[2]->type, REDIS_REPLY_ERROR);
  EXPECT_EQ(text(*replies[2]).rfind("EXECABORT Transaction discarded: shard s0 (", 0), 0u)
      << text(*replies[2]);
  for (const Argv& argv : shard_.commands()) {
    EXPECT_NE(argv[0], "EXEC");  // the transaction after the loss was discarded, never run
  }
}

}  // namespace
}  // namespace sp::session
