// deny_commands (session/client_auth.h's denied, applied in SessionState::route), over loopback
// against a worker on two fake shards: a denied command is refused with the proxy's words and
// reaches no shard; an entry names a whole command ("get" leaves GETDEL alone), a subcommand in
// either spelling ("CONFIG SET", "config|set") or a container and so every subcommand of it; a
// denied command inside MULTI discards the transaction.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "config/config.h"
#include "fakes/fake_shards.h"
#include "fakes/redis_client.h"
#include "fakes/worker_harness.h"

namespace sp::session {
namespace {

using fakes::RedisClient;
using fakes::Reply;
using fakes::replyText;
using fakes::WorkerHarness;

class DenyCommandsTest : public ::testing::Test {
 protected:
  fakes::FakeShards shards_{2, [](const std::string& what) { ADD_FAILURE() << what; }};
};

TEST_F(DenyCommandsTest, ADeniedCommandIsRefusedAndReachesNoShard) {
  WorkerHarness harness(
      shards_.topology(),
      [](config::Config& c) {
        fakes::noPings(c);
        c.deny_commands = {"FLUSHALL"};
      },
      WorkerHarness::Listen::kLoopback);
  RedisClient client(harness.port());
  const uint64_t served = shards_.commandsServed();
  EXPECT_EQ(replyText(client, {"flushall", "ASYNC"}),
            "ERR command 'flushall' is disabled by the shardproxy configuration (deny_commands)");
  EXPECT_EQ(shards_.commandsServed(), served);
}

TEST_F(DenyCommandsTest, AnEntryNamesAWholeCommandNotAPrefix) {
  WorkerHarness harness(
      shards_.topology(),
      [](config::Config& c) {
        fakes::noPings(c);
        c.deny_commands = {"get"};
      },
      WorkerHarness::Listen::kLoopback);
  RedisClient client(harness.port());
  const std::string key = fakes::keysOn(*shards_.topology(), 1, 1)[0];
  EXPECT_EQ(replyText(client, {"GET", key}),
            "ERR command 'get' is disabled by the shardproxy configuration (deny_commands)");
  EXPECT_EQ(replyText(client, {"GETDEL", key}), "s1|GETDEL " + key);
}

TEST_F(DenyCommandsTest, ASubcommandEntryDeniesThatSubcommandInEitherSpelling) {
  for (const char* entry : {"CONFIG SET", "config|set"}) {
    WorkerHarness harness(
        shards_.topology(),
        [entry](config::Config& c) {
          fakes::noPings(c);
          c.allow_config_set = true;
          c.deny_commands = {entry};
        },
        WorkerHarness::Listen::kLoopback);
    RedisClient client(harness.port());
    EXPECT_EQ(replyText(client, {"CONFIG", "SET", "timeout", "1"}),
              "ERR command 'config set' is disabled by the shardproxy configuration "
              "(deny_commands)")
        << entry;
    EXPECT_EQ(replyText(client, {"CONFIG", "GET", "databases"}), "(array)") << entry;
  }
}

TEST_F(DenyCommandsTest, AContainerEntryDeniesEverySubcommand) {
  WorkerHarness harness(
      shards_.topology(),
      [](config::Config& c) {
        fakes::noPings(c);
        c.deny_commands = {"client"};
      },
      WorkerHarness::Listen::kLoopback);
  RedisClient client(harness.port());
  EXPECT_EQ(replyText(client, {"CLIENT", "ID"}),
            "ERR command 'client id' is disabled by the shardproxy configuration (deny_commands)");
  EXPECT_EQ(replyText(client, {"CLIENT", "LIST"}),
            "ERR command 'client list' is disabled by the shardproxy configuration "
            "(deny_commands)");
  EXPECT_EQ(replyText(client, {"PING"}), "PONG");
}

TEST_F(DenyCommandsTest, ADeniedCommandInsideMultiDiscardsTheTransaction) {
  WorkerHarness harness(
      shards_.topology(),
      [](config::Config& c) {
        fakes::noPings(c);
        c.deny_commands = {"flushall"};
      },
      WorkerHarness::Listen::kLoopback);
  RedisClient client(harness.port());
  const std::vector<Reply> replies = client.pipeline({{"MULTI"}, {"FLUSHALL"}, {"EXEC"}});
  ASSERT_TRUE(fakes::allAnswered(replies));
  EXPECT_EQ(fakes::text(*replies[1]),
            "ERR command 'flushall' is disabled by the shardproxy configuration (deny_commands)");
  EXPECT_EQ(fakes::text(*replies[2]),
            "EXECABORT Transaction discarded because of previous errors.");
}

}  // namespace
}  // namespace sp::session
