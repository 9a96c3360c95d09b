// CONFIG GET (session/config_commands.h), over loopback against a worker on two scripted shards:
// names of the proxy's own parameters alone are answered by the proxy and never reach a shard
// (its credentials as ""); a glob goes to every shard, the shards' entries for the proxy's own
// parameters are replaced by the proxy's, the first shard's value wins where the shards differ, a
// shard's error is left out while another shard answered, and is the reply when none did.
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
using fakes::WorkerHarness;
using Argv = ScriptedShard::Argv;

std::string bulk(const std::string& s) { return fakes::bulk(s); }

// A shard that answers CONFIG GET with `config_reply` and anything else with +OK.
ScriptedShard::Script answering(std::string config_reply) {
  return [config_reply](const Argv& argv) {
    return ScriptedShard::reply(argv[0] == "CONFIG" ? config_reply : "+OK\r\n");
  };
}

// The elements of a flat array reply as text ("(nil)" for a nil), or the error's text alone.
std::vector<std::string> flat(const Reply& r) {
  if (r == nullptr) {
    return {"(no reply)"};
  }
  if (r->type != REDIS_REPLY_ARRAY) {
    return {fakes::text(*r)};
  }
  std::vector<std::string> out;
  for (size_t i = 0; i < r->elements; ++i) {
    out.push_back(r->element[i]->type == REDIS_REPLY_NIL ? "(nil)" : fakes::text(*r->element[i]));
  }
  return out;
}

class ConfigGetTest : public ::testing::Test {
 protected:
  void start(const std::string& reply0, const std::string& reply1,
             void (*tune)(config::Config&) = fakes::noPings) {
    shard0_ = std::make_unique<ScriptedShard>(answering(reply0));
    shard1_ = std::make_unique<ScriptedShard>(answering(reply1));
    harness_ = std::make_unique<WorkerHarness>(
        route::Topology::evenSplit({route::ShardAddress("s0", "127.0.0.1", shard0_->port()),
                                    route::ShardAddress("s1", "127.0.0.1", shard1_->port())}),
        tune, WorkerHarness::Listen::kLoopback);
    client_ = std::make_unique<RedisClient>(harness_->port());
  }
  size_t shardCommands() const { return shard0_->commands().size() + shard1_->commands().size(); }

  std::unique_ptr<ScriptedShard> shard0_;
  std::unique_ptr<ScriptedShard> shard1_;
  std::unique_ptr<WorkerHarness> harness_;
  std::unique_ptr<RedisClient> client_;
};

TEST_F(ConfigGetTest, TheProxysOwnParametersNeverReachAShard) {
  start("*0\r\n", "*0\r\n", [](config::Config& c) {
    fakes::noPings(c);
    c.limits.max_clients = 77;
    c.limits.timeout = 30;
  });
  EXPECT_EQ(flat(client_->command({"CONFIG", "GET", "TIMEOUT", "databases", "maxclients"})),
            (std::vector<std::string>{"databases", "1", "maxclients", "77", "timeout", "30"}));
  EXPECT_EQ(flat(client_->command({"CONFIG", "GET", "cluster-enabled"})),
            (std::vector<std::string>{"cluster-enabled", "no"}));
  EXPECT_EQ(shardCommands(), 0u);
}

TEST_F(ConfigGetTest, PortIsTheBoundPort) {
  start("*0\r\n", "*0\r\n");
  EXPECT_EQ(flat(client_->command({"CONFIG", "GET", "port"})),
            (std::vector<std::string>{"port", std::to_string(harness_->port())}));
}

TEST_F(ConfigGetTest, CredentialsAreAnsweredEmpty) {
  start("*0\r\n", "*0\r\n", [](config::Config& c) {
    fakes::noPings(c);
    c.auth.password = "secret";
  });
  Reply auth = client_->command({"AUTH", "secret"});
  ASSERT_TRUE(auth != nullptr);
  EXPECT_EQ(flat(client_->command({"CONFIG", "GET", "requirepass", "masterauth"})),
            (std::vector<std::string>{"requirepass", "", "masterauth", ""}));
  EXPECT_EQ(shardCommands(), 0u);
}

TEST_F(ConfigGetTest, AGlobAsksEveryShardAndTheProxysEntriesReplaceTheShards) {
  const std::string shard_reply =
      "*4\r\n" + bulk("maxmemory") + bulk("100") + bulk("maxclients") + bulk("10000");
  start(shard_reply, shard_reply, [](config::Config& c) {
    fakes::noPings(c);
    c.limits.max_clients = 55;
  });
  EXPECT_EQ(flat(client_->command({"CONFIG", "GET", "max*"})),
            (std::vector<std::string>{"maxmemory", "100", "maxclients", "55"}));
  ASSERT_EQ(shard0_->commands().size(), 1u);
  ASSERT_EQ(shard1_->commands().size(), 1u);
  EXPECT_EQ(shard0_->commands()[0], (Argv{"CONFIG", "GET", "max*"}));
  EXPECT_EQ(shard1_->commands()[0], (Argv{"CONFIG", "GET", "max*"}));
}

TEST_F(ConfigGetTest, AParameterTheProxyDoesNotOwnGoesToTheShards) {
  const std::string shard_reply = "*2\r\n" + bulk("maxmemory") + bulk("0");
  start(shard_reply, shard_reply);
  EXPECT_EQ(flat(client_->command({"CONFIG", "GET", "maxmemory"})),
            (std::vector<std::string>{"maxmemory", "0"}));
  EXPECT_EQ(shardCommands(), 2u);
}

TEST_F(ConfigGetTest, ShardsThatDisagreeGetTheFirstShardsValue) {
  start("*4\r\n" + bulk("maxmemory") + bulk("100") + bulk("hz") + bulk("10"),
        "*4\r\n" + bulk("maxmemory") + bulk("200") + bulk("lfu-log-factor") + bulk("10"));
  EXPECT_EQ(flat(client_->command({"CONFIG", "GET", "maxmemory", "hz", "lfu-log-factor"})),
            (std::vector<std::string>{"maxmemory", "100", "hz", "10", "lfu-log-factor", "10"}));
}

TEST_F(ConfigGetTest, AShardsErrorIsLeftOutWhileAnotherShardAnswered) {
  start("-ERR shard zero is busy\r\n", "*2\r\n" + bulk("maxmemory") + bulk("300"));
  EXPECT_EQ(flat(client_->command({"CONFIG", "GET", "maxmemory"})),
            (std::vector<std::string>{"maxmemory", "300"}));
}

TEST_F(ConfigGetTest, WhenNoShardAnswersTheFirstErrorIsTheReply) {
  start("-ERR first\r\n", "-ERR second\r\n");
  EXPECT_EQ(flat(client_->command({"CONFIG", "GET", "maxmemory"})),
            (std::vector<std::string>{"ERR first"}));
}

}  // namespace
}  // namespace sp::session
