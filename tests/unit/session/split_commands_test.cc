// Split commands (session/fanout.h) over two scripted shards, end to end through a session: DEL,
// EXISTS, UNLINK and TOUCH send each shard its own keys in the client's order and sum the
// counts; MSET keeps each key with its value; one shard's error is the whole reply; a shard's
// answer of the wrong shape, or a short one, is the proxy's error for it; a shard that hangs up
// makes the reply the proxy's "unavailable" error for that shard.
#include <gtest/gtest.h>

#include <functional>
#include <memory>
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
using fakes::WorkerHarness;
using Argv = ScriptedShard::Argv;

class SplitCommandsTest : public ::testing::Test {
 protected:
  void start(ScriptedShard::Script script0, ScriptedShard::Script script1) {
    shard0_ = std::make_unique<ScriptedShard>(std::move(script0));
    shard1_ = std::make_unique<ScriptedShard>(std::move(script1));
    topology_ =
        route::Topology::evenSplit({route::ShardAddress("s0", "127.0.0.1", shard0_->port()),
                                    route::ShardAddress("s1", "127.0.0.1", shard1_->port())});
    harness_ = std::make_unique<WorkerHarness>(topology_, fakes::noPings,
                                               WorkerHarness::Listen::kLoopback);
    client_ = std::make_unique<RedisClient>(harness_->port());
  }
  std::string on(uint16_t shard, size_t i) const {
    return fakes::keysOn(*topology_, shard, i + 1)[i];
  }
  std::string reply(const std::vector<std::string>& argv) {
    Reply r = client_->command(argv);
    if (r == nullptr) {
      return "(no reply)";
    }
    return r->type == REDIS_REPLY_INTEGER ? std::to_string(r->integer) : fakes::text(*r);
  }

  std::unique_ptr<ScriptedShard> shard0_;
  std::unique_ptr<ScriptedShard> shard1_;
  route::TopologyPtr topology_;
  std::unique_ptr<WorkerHarness> harness_;
  std::unique_ptr<RedisClient> client_;
};

ScriptedShard::Script always(std::string bytes) {
  return [bytes](const Argv&) { return ScriptedShard::reply(bytes); };
}

TEST_F(SplitCommandsTest, DelSendsEachShardItsOwnKeysInOrderAndSumsTheCounts) {
  start(always(":2\r\n"), always(":5\r\n"));
  EXPECT_EQ(reply({"DEL", on(0, 0), on(1, 0), on(0, 1)}), "7");
  EXPECT_EQ(shard0_->commands(), (std::vector<Argv>{{"DEL", on(0, 0), on(0, 1)}}));
  EXPECT_EQ(shard1_->commands(), (std::vector<Argv>{{"DEL", on(1, 0)}}));
}

TEST_F(SplitCommandsTest, ExistsUnlinkAndTouchAreSummedOverTheShards) {
  start(always(":1\r\n"), always(":100\r\n"));
  EXPECT_EQ(reply({"EXISTS", on(1, 0), on(0, 0)}), "101");
  EXPECT_EQ(reply({"UNLINK", on(0, 0), on(1, 0)}), "101");
  EXPECT_EQ(reply({"TOUCH", on(1, 0), on(0, 0), on(1, 1)}), "101");
  EXPECT_EQ(shard1_->commands().back(), (Argv{"TOUCH", on(1, 0), on(1, 1)}));
}

TEST_F(SplitCommandsTest, KeysOfOneShardAreNotSplit) {
  start(always(":3\r\n"), always(":100\r\n"));
  EXPECT_EQ(reply({"DEL", on(0, 0), on(0, 1), on(0, 2)}), "3");
  EXPECT_EQ(shard0_->commands(), (std::vector<Argv>{{"DEL", on(0, 0), on(0, 1), on(0, 2)}}));
  EXPECT_TRUE(shard1_->commands().empty());
}

TEST_F(SplitCommandsTest, MsetKeepsEachKeyWithItsValue) {
  start(always("+OK\r\n"), always("+OK\r\n"));
  EXPECT_EQ(reply({"MSET", on(0, 0), "a", on(1, 0), "b", on(0, 1), "c"}), "OK");
  EXPECT_EQ(shard0_->commands(), (std::vector<Argv>{{"MSET", on(0, 0), "a", on(0, 1), "c"}}));
  EXPECT_EQ(shard1_->commands(), (std::vector<Argv>{{"MSET", on(1, 0), "b"}}));
}

TEST_F(SplitCommandsTest, OneShardsErrorIsTheWholeReply) {
  start(always("*1\r\n$1\r\nx\r\n"), always("-WRONGTYPE Operation against a key holding the wrong "
                                            "kind of value\r\n"));
  EXPECT_EQ(reply({"MGET", on(0, 0), on(1, 0)}),
            "WRONGTYPE Operation against a key holding the wrong kind of value");
  EXPECT_EQ(reply({"PING"}), "PONG");  // the session goes on
}

TEST_F(SplitCommandsTest, AnMsetFragmentAnsweredOtherThanOkIsTheProxysError) {
  start(always("+OK\r\n"), always("+QUEUED\r\n"));
  EXPECT_EQ(reply({"MSET", on(0, 0), "a", on(1, 0), "b"}),
            "ERR shardproxy: unexpected reply from a shard to a split command");
}

TEST_F(SplitCommandsTest, AShortMgetFragmentIsTheProxysError) {
  start(always("*1\r\n$1\r\nx\r\n"), always("*2\r\n$1\r\ny\r\n$1\r\nz\r\n"));
  EXPECT_EQ(reply({"MGET", on(0, 0), on(1, 0), on(0, 1)}),
            "ERR shardproxy: short reply from a shard to a split command");
}

TEST_F(SplitCommandsTest, AShardThatHangsUpMakesTheReplyItsUnavailableError) {
  start(always(":1\r\n"), [](const Argv&) { return ScriptedShard::hangUp(); });
  const std::string got = reply({"DEL", on(0, 0), on(1, 0)});
  EXPECT_TRUE(got.starts_with("ERR shard s1 (127.0.0.1:" + std::to_string(shard1_->port()) +
                              ") unavailable: "))
      << got;
  EXPECT_EQ(reply({"PING"}), "PONG");
}

}  // namespace
}  // namespace sp::session
