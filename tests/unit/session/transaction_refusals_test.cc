// What the transaction lane (session/transaction_lane.h) refuses while it queues, over loopback
// against a worker on two fake shards, in redis-server 7's words where it has them: an unknown
// command or a wrong arity discards the transaction at EXEC; a malformed EXEC discards it with the
// reason; keys on a second shard, and a command that spans every shard, abort it with the proxy's
// refusal; an empty transaction is an empty array that reaches no shard; PING and ECHO queue with
// the keyed commands and come back in EXEC's array.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "fakes/fake_shards.h"
#include "fakes/redis_client.h"
#include "fakes/worker_harness.h"

namespace sp::session {
namespace {

using fakes::RedisClient;
using fakes::Reply;
using fakes::text;
using fakes::WorkerHarness;

constexpr char kExecAbort[] = "EXECABORT Transaction discarded because of previous errors.";

class TransactionRefusalsTest : public ::testing::Test {
 protected:
  std::string onShard(uint16_t shard, size_t i = 0) const {
    return fakes::keysOn(*shards_.topology(), shard, i + 1)[i];
  }
  // Each reply as text; an array as "[a,b]".
  std::vector<std::string> texts(const std::vector<std::vector<std::string>>& commands) {
    std::vector<std::string> out;
    for (const Reply& r : client_.pipeline(commands)) {
      if (r == nullptr) {
        out.push_back("(no reply)");
      } else if (r->type == REDIS_REPLY_ARRAY) {
        std::string joined = "[";
        for (size_t i = 0; i < r->elements; ++i) {
          joined += (i == 0 ? "" : ",") + text(*r->element[i]);
        }
        out.push_back(joined + "]");
      } else {
        out.push_back(text(*r));
      }
    }
    return out;
  }

  fakes::FakeShards shards_{2, [](const std::string& what) { ADD_FAILURE() << what; }};
  WorkerHarness harness_{shards_.topology(), fakes::noPings, WorkerHarness::Listen::kLoopback};
  RedisClient client_{harness_.port()};
};

TEST_F(TransactionRefusalsTest, AnUnknownCommandDiscardsTheTransactionAtExec) {
  const std::string key = onShard(0);
  EXPECT_EQ(texts({{"MULTI"}, {"SET", key, "1"}, {"NOSUCH", "a"}, {"EXEC"}, {"GET", key}}),
            (std::vector<std::string>{
                "OK", "QUEUED", "ERR unknown command 'NOSUCH', with args beginning with: 'a' ",
                kExecAbort, "s0|GET " + key}));
}

TEST_F(TransactionRefusalsTest, AWrongArityDiscardsTheTransactionAtExec) {
  EXPECT_EQ(texts({{"MULTI"}, {"GET"}, {"EXEC"}}),
            (std::vector<std::string>{"OK", "ERR wrong number of arguments for 'get' command",
                                      kExecAbort}));
}

TEST_F(TransactionRefusalsTest, AMalformedExecDiscardsTheTransactionWithTheReason) {
  const std::string key = onShard(1);
  EXPECT_EQ(texts({{"MULTI"}, {"SET", key, "1"}, {"EXEC", "now"}, {"EXEC"}}),
            (std::vector<std::string>{"OK", "QUEUED",
                                      "EXECABORT Transaction discarded because of: wrong number of "
                                      "arguments for 'exec' command",
                                      "ERR EXEC without MULTI"}));
}

TEST_F(TransactionRefusalsTest, KeysOnASecondShardAbortTheTransaction) {
  const std::string first = onShard(0);
  const std::string second = onShard(1);
  EXPECT_EQ(
      texts({{"MULTI"}, {"SET", first, "1"}, {"SET", second, "2"}, {"EXEC"}}),
      (std::vector<std::string>{
          "OK", "QUEUED", "CROSSSLOT Keys in request don't hash to the same slot", kExecAbort}));
  // The next transaction runs on the shard of its own key.
  EXPECT_EQ(texts({{"MULTI"}, {"GET", second}, {"EXEC"}}),
            (std::vector<std::string>{"OK", "QUEUED", "[s1|GET " + second + "]"}));
}

TEST_F(TransactionRefusalsTest, ACommandThatSpansEveryShardAbortsTheTransaction) {
  EXPECT_EQ(texts({{"MULTI"}, {"DBSIZE"}, {"EXEC"}}),
            (std::vector<std::string>{"OK",
                                      "ERR command 'dbsize' spans every shard and cannot be part "
                                      "of a transaction through shardproxy",
                                      kExecAbort}));
}

TEST_F(TransactionRefusalsTest, AnEmptyTransactionIsAnEmptyArrayThatReachesNoShard) {
  const uint64_t served = shards_.commandsServed();
  EXPECT_EQ(texts({{"MULTI"}, {"EXEC"}}), (std::vector<std::string>{"OK", "[]"}));
  EXPECT_EQ(shards_.commandsServed(), served);
}

TEST_F(TransactionRefusalsTest, PingAndEchoAreQueuedWithTheKeyedCommands) {
  const std::string key = onShard(1);
  EXPECT_EQ(texts({{"MULTI"}, {"PING"}, {"ECHO", "hi"}, {"SET", key, "v"}, {"EXEC"}}),
            (std::vector<std::string>{"OK", "QUEUED", "QUEUED", "QUEUED",
                                      "[PONG,hi,s1|SET " + key + " v]"}));
}

}  // namespace
}  // namespace sp::session
