// CONFIG SET's sorting of parameters (session/config_commands.h), over loopback against a worker
// with allow_config_set on one scripted shard: what would cut the proxy off its shard is refused
// with the reason (by name or by prefix, in any case), maxmemory below 1mb too; the proxy's own
// parameters take redis-server's ranges, apply to the proxy and show in CONFIG GET at once; the
// rest goes to the shard, and a request that mixes both sends the shard only its own pairs.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "config/config.h"
#include "fakes/redis_client.h"
#include "fakes/scripted_shard.h"
#include "fakes/worker_harness.h"

namespace sp::session {
namespace {

using fakes::RedisClient;
using fakes::Reply;
using fakes::ScriptedShard;
using fakes::WorkerHarness;
using Argv = ScriptedShard::Argv;

class ConfigSetTest : public ::testing::Test {
 protected:
  std::string reply(const std::vector<std::string>& argv) {
    Reply r = client_.command(argv);
    return r == nullptr ? "(no reply)" : fakes::text(*r);
  }

  ScriptedShard shard_{[](const Argv&) { return ScriptedShard::reply("+OK\r\n"); }};
  WorkerHarness harness_{fakes::oneShard(shard_.port()),
                         [](config::Config& c) {
                           fakes::noPings(c);
                           c.allow_config_set = true;
                         },
                         WorkerHarness::Listen::kLoopback};
  RedisClient client_{harness_.port()};
};

TEST_F(ConfigSetTest, ACredentialIsRefusedWithTheReason) {
  EXPECT_EQ(reply({"CONFIG", "SET", "requirepass", "x"}),
            "ERR CONFIG SET failed (possibly related to argument 'requirepass') - refused by "
            "shardproxy: the proxy authenticates to its shards with backend.password and its "
            "clients with auth.password (set them in the config file and reload)");
  EXPECT_TRUE(shard_.commands().empty());
}

TEST_F(ConfigSetTest, APrefixRefusesEveryParameterUnderItInAnyCase) {
  EXPECT_EQ(reply({"CONFIG", "SET", "Cluster-Node-Timeout", "5"}),
            "ERR CONFIG SET failed (possibly related to argument 'Cluster-Node-Timeout') - "
            "refused by shardproxy: cluster settings are the shards' own (the proxy is not a "
            "cluster node)");
  EXPECT_EQ(reply({"CONFIG", "SET", "tls-ciphers", "x"}),
            "ERR CONFIG SET failed (possibly related to argument 'tls-ciphers') - refused by "
            "shardproxy: the proxy's TLS settings are its own: change them in the config file and "
            "reload");
  EXPECT_TRUE(shard_.commands().empty());
}

TEST_F(ConfigSetTest, ARefusedPairRefusesTheWholeRequest) {
  EXPECT_EQ(reply({"CONFIG", "SET", "timeout", "5", "dir", "/tmp"}),
            "ERR CONFIG SET failed (possibly related to argument 'dir') - refused by shardproxy: "
            "a path on each shard's host, not the proxy's to change");
  Reply timeout = client_.command({"CONFIG", "GET", "timeout"});
  ASSERT_TRUE(timeout != nullptr);
  ASSERT_EQ(timeout->elements, 2u);
  EXPECT_EQ(fakes::text(*timeout->element[1]), "0");  // not applied
}

TEST_F(ConfigSetTest, MaxmemoryBelowOneMegabyteIsRefusedAndZeroIsNot) {
  EXPECT_EQ(reply({"CONFIG", "SET", "maxmemory", "1000kb"}),
            "ERR CONFIG SET failed (possibly related to argument 'maxmemory') - refused by "
            "shardproxy: below 1mb, less than an empty redis-server uses: every write would fail "
            "with OOM");
  EXPECT_TRUE(shard_.commands().empty());
  EXPECT_EQ(reply({"CONFIG", "SET", "maxmemory", "0"}), "OK");  // no limit
  EXPECT_EQ(reply({"CONFIG", "SET", "maxmemory", "1mb"}), "OK");
  ASSERT_TRUE(shard_.waitForCommands(2));
  EXPECT_EQ(shard_.commands(), (std::vector<Argv>{{"CONFIG", "SET", "maxmemory", "0"},
                                                  {"CONFIG", "SET", "maxmemory", "1mb"}}));
}

TEST_F(ConfigSetTest, TheProxysParametersTakeRedisServersRanges) {
  EXPECT_EQ(reply({"CONFIG", "SET", "timeout", "-1"}),
            "ERR CONFIG SET failed (possibly related to argument 'timeout') - argument must be "
            "between 0 and 2147483647 inclusive");
  EXPECT_EQ(reply({"CONFIG", "SET", "maxclients", "0"}),
            "ERR CONFIG SET failed (possibly related to argument 'maxclients') - argument must be "
            "between 1 and 4294967295 inclusive");
  EXPECT_EQ(reply({"CONFIG", "SET", "slowlog-max-len", "-1"}),
            "ERR CONFIG SET failed (possibly related to argument 'slowlog-max-len') - argument "
            "must be between 0 and 9223372036854775807 inclusive");
}

TEST_F(ConfigSetTest, TheProxysParametersShowInConfigGetAtOnce) {
  EXPECT_EQ(reply({"CONFIG", "SET", "timeout", "9", "slowlog-log-slower-than", "-1"}), "OK");
  Reply got = client_.command({"CONFIG", "GET", "timeout", "slowlog-log-slower-than"});
  ASSERT_TRUE(got != nullptr);
  ASSERT_EQ(got->elements, 4u);
  EXPECT_EQ(fakes::text(*got->element[1]), "9");
  EXPECT_EQ(fakes::text(*got->element[3]), "-1");  // "never", as redis-server shows it
  EXPECT_TRUE(shard_.commands().empty());
}

TEST_F(ConfigSetTest, AMixedRequestSendsTheShardOnlyItsOwnPairs) {
  EXPECT_EQ(reply({"CONFIG", "SET", "hz", "20", "timeout", "3", "maxmemory-policy", "noeviction"}),
            "OK");
  ASSERT_TRUE(shard_.waitForCommands(1));
  EXPECT_EQ(shard_.commands(),
            (std::vector<Argv>{{"CONFIG", "SET", "hz", "20", "maxmemory-policy", "noeviction"}}));
}

}  // namespace
}  // namespace sp::session
