// The session's fan-out lane (session/fanout_lane.h), CONFIG SET's part of it, over loopback
// against a worker on two fake shards: refused unless allow_config_set; every pair is checked
// before anything is applied (a duplicate parameter refuses the whole request, in redis-server's
// words); the proxy's own parameters alone are answered by the proxy.
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
using fakes::replyText;
using fakes::WorkerHarness;

TEST(FanoutLaneTest, ConfigSetIsRefusedUnlessAllowed) {
  fakes::FakeShards shards(2, [](const std::string& what) { ADD_FAILURE() << what; });
  WorkerHarness harness(shards.topology(), {}, WorkerHarness::Listen::kLoopback);
  RedisClient client(harness.port());
  EXPECT_EQ(replyText(client, {"CONFIG", "SET", "timeout", "5"}),
            "ERR CONFIG SET is disabled by shardproxy (allow_config_set: true sends it to every "
            "shard)");
}

TEST(FanoutLaneTest, ConfigSetChecksEveryPairFirstAndAnswersForItsOwnParameters) {
  fakes::FakeShards shards(2, [](const std::string& what) { ADD_FAILURE() << what; });
  WorkerHarness harness(
      shards.topology(), [](config::Config& c) { c.allow_config_set = true; },
      WorkerHarness::Listen::kLoopback);
  RedisClient client(harness.port());
  EXPECT_EQ(replyText(client, {"CONFIG", "SET", "timeout", "5", "TIMEOUT", "6"}),
            "ERR CONFIG SET failed (possibly related to argument 'TIMEOUT') - duplicate parameter");
  EXPECT_EQ(replyText(client, {"CONFIG", "SET", "timeout"}),
            "ERR wrong number of arguments for 'config|set' command");
  EXPECT_EQ(replyText(client, {"CONFIG", "SET", "timeout", "x"}),
            "ERR CONFIG SET failed (possibly related to argument 'timeout') - argument couldn't be "
            "parsed into an integer");
  EXPECT_EQ(replyText(client, {"CONFIG", "SET", "timeout", "7"}), "OK");  // the proxy's own alone
}

}  // namespace
}  // namespace sp::session
