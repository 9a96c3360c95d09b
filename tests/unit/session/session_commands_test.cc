// What a session answers itself, and how it relays what it does not, over loopback against a
// worker on two fake shards: redis-server's words for an unknown command, a wrong arity, keys
// of one command on two shards (CROSSSLOT) and a database other than 0; PING, ECHO, CLIENT
// SETNAME / GETNAME / ID answered locally; DBSIZE summed over the shards; a value larger than the
// read buffers relayed whole both ways; QUIT answered, then the connection closed.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "config/config.h"
#include "fakes/fake_shards.h"
#include "fakes/redis_client.h"
#include "fakes/worker_harness.h"

namespace sp::session {
namespace {

using fakes::keysOn;
using fakes::RedisClient;
using fakes::Reply;
using fakes::text;
using fakes::WorkerHarness;

class SessionCommandsTest : public ::testing::Test {
 protected:
  std::string onShard(uint16_t shard, size_t i = 0) const {
    return keysOn(*shards_.topology(), shard, i + 1)[i];
  }
  // Every reply of the pipeline, as text (errors without their '-'), or "(nil)" / "(array)".
  std::vector<std::string> texts(const std::vector<std::vector<std::string>>& commands) {
    std::vector<std::string> out;
    for (const Reply& r : client_.pipeline(commands)) {
      if (r == nullptr) {
        out.push_back("(no reply)");
      } else if (r->type == REDIS_REPLY_INTEGER) {
        out.push_back(std::to_string(r->integer));
      } else if (r->type == REDIS_REPLY_NIL) {
        out.push_back("(nil)");
      } else if (r->type == REDIS_REPLY_ARRAY) {
        out.push_back("(array)");
      } else {
        out.push_back(text(*r));
      }
    }
    return out;
  }

  fakes::FakeShards shards_{2, [](const std::string& what) { ADD_FAILURE() << what; }};
  // No health PINGs: the fakes' command count then holds only the test's commands.
  WorkerHarness harness_{shards_.topology(),
                         [](config::Config& c) { c.backend_ping_interval_ms = 600000; },
                         WorkerHarness::Listen::kLoopback};
  RedisClient client_{harness_.port()};
};

TEST_F(SessionCommandsTest, RefusalsAreRedisServersWords) {
  const std::vector<std::string> got = texts({{"NOSUCH", "a", "b"},
                                              {"GET"},
                                              {"GET", "a", "b"},
                                              {"SUNION", onShard(0), onShard(1)},
                                              {"SELECT", "1"},
                                              {"SELECT", "0"}});
  EXPECT_EQ(got[0], "ERR unknown command 'NOSUCH', with args beginning with: 'a' 'b' ");
  EXPECT_EQ(got[1], "ERR wrong number of arguments for 'get' command");
  EXPECT_EQ(got[2], "ERR wrong number of arguments for 'get' command");
  EXPECT_EQ(got[3], "CROSSSLOT Keys in request don't hash to the same slot");
  EXPECT_EQ(got[4],
            "ERR command 'select' is not supported by shardproxy for databases other than 0");
  EXPECT_EQ(got[5], "OK");
}

TEST_F(SessionCommandsTest, LocalCommandsAreAnsweredByTheSession) {
  const uint64_t served = shards_.commandsServed();
  const std::vector<std::string> got = texts({{"PING"},
                                              {"PING", "hi"},
                                              {"ECHO", "x y"},
                                              {"CLIENT", "GETNAME"},
                                              {"CLIENT", "SETNAME", "worker-7"},
                                              {"CLIENT", "GETNAME"},
                                              {"CLIENT", "SETNAME", "has space"}});
  EXPECT_EQ(got, (std::vector<std::string>{
                     "PONG", "hi", "x y", "(nil)", "OK", "worker-7",
                     "ERR Client names cannot contain spaces, newlines or special characters."}));
  Reply id = client_.command({"CLIENT", "ID"});
  ASSERT_TRUE(id != nullptr);
  ASSERT_EQ(id->type, REDIS_REPLY_INTEGER);
  EXPECT_GT(id->integer, 0);
  EXPECT_EQ(shards_.commandsServed(), served);  // none of them reached a shard
}

TEST_F(SessionCommandsTest, DbsizeIsSummedOverTheShards) {
  Reply r = client_.command({"DBSIZE"});
  ASSERT_TRUE(r != nullptr);
  ASSERT_EQ(r->type, REDIS_REPLY_INTEGER);
  EXPECT_EQ(r->integer, 2);  // each fake shard holds one key
}

TEST_F(SessionCommandsTest, AValueLargerThanTheReadBuffersIsRelayedWhole) {
  const std::string key = onShard(1);
  std::string value(300 * 1024, 'v');
  for (size_t i = 0; i < value.size(); i += 997) {
    value[i] = static_cast<char>('a' + i % 26);  // not one repeated byte
  }
  const std::vector<Reply> replies =
      client_.pipeline({{"SET", key, value}, {"GET", key}, {"PING"}});
  ASSERT_TRUE(replies[0] != nullptr && replies[1] != nullptr && replies[2] != nullptr);
  EXPECT_EQ(text(*replies[0]), "s1|SET " + key + " " + value);
  EXPECT_EQ(text(*replies[1]), "s1|GET " + key);
  EXPECT_EQ(text(*replies[2]), "PONG");
}

TEST_F(SessionCommandsTest, QuitIsAnsweredThenTheConnectionCloses) {
  Reply r = client_.command({"QUIT"});
  ASSERT_TRUE(r != nullptr);
  EXPECT_EQ(text(*r), "OK");
  Reply after = client_.command({"PING"});
  EXPECT_TRUE(after == nullptr);  // closed by the proxy
}

}  // namespace
}  // namespace sp::session
