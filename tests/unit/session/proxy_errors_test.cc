// shardproxy_proxy_errors_total{error}: each of the proxy's own error replies is counted under the
// kind of resp/errors.h's catalogue that was chosen with it (refusals, a local command's answer,
// a shard that failed a request, shard replies that cannot be merged), and redis-server's words
// (a wrong arity) or a shard's own error count under none.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "config/config.h"
#include "fakes/fake_shards.h"
#include "fakes/redis_client.h"
#include "fakes/scripted_shard.h"
#include "fakes/worker_harness.h"
#include "net/worker.h"
#include "net/worker_stats.h"
#include "resp/errors.h"
#include "route/topology.h"

namespace sp::session {
namespace {

using fakes::RedisClient;
using fakes::replyText;
using fakes::ScriptedShard;
using fakes::WorkerHarness;
using resp::err::ProxyError;
using Argv = ScriptedShard::Argv;

using Counts = std::array<uint64_t, resp::err::kProxyErrors>;

Counts proxyErrors(WorkerHarness& harness) {
  return fakes::onWorker<Counts>(harness.worker(), [](net::Worker& w) {
    Counts out{};
    for (size_t k = 0; k < out.size(); ++k) {
      out[k] = w.stats().proxy_errors[k].get();
    }
    return out;
  });
}

uint64_t count(const Counts& counts, ProxyError kind) { return counts[static_cast<size_t>(kind)]; }

uint64_t total(const Counts& counts) {
  uint64_t sum = 0;
  for (uint64_t c : counts) {
    sum += c;
  }
  return sum;
}

class ProxyErrorsTest : public ::testing::Test {
 protected:
  fakes::FakeShards shards_{2, [](const std::string& what) { ADD_FAILURE() << what; }};
};

TEST_F(ProxyErrorsTest, EachOwnErrorBeforeAnyShardIsCountedUnderItsKind) {
  WorkerHarness harness(
      shards_.topology(),
      [](config::Config& c) {
        fakes::noPings(c);
        c.deny_commands = {"flushall"};
      },
      WorkerHarness::Listen::kLoopback);
  RedisClient client(harness.port());
  const route::Topology& topology = *shards_.topology();
  const std::string on0 = fakes::keysOn(topology, 0, 1)[0];
  const std::string on1 = fakes::keysOn(topology, 1, 1)[0];

  EXPECT_EQ(replyText(client, {"FLUSHALL"}).rfind("ERR command 'flushall' is disabled", 0), 0u);
  EXPECT_EQ(replyText(client, {"SELECT", "1"}).rfind("ERR command 'select' is not supported", 0),
            0u);
  EXPECT_EQ(replyText(client, {"CLIENT", "TRACKING", "on"})
                .rfind("ERR command 'client tracking' is not supported", 0),
            0u);
  EXPECT_EQ(replyText(client, {"RENAME", on0, on1}).rfind("CROSSSLOT", 0), 0u);
  EXPECT_EQ(replyText(client, {"EVAL", "return redis.call('get','k')", "0"})
                .rfind("ERR a script or function called with no keys", 0),
            0u);
  EXPECT_EQ(replyText(client, {"MULTI"}), "OK");
  EXPECT_EQ(replyText(client, {"DBSIZE"}).rfind("ERR command 'dbsize' spans every shard", 0), 0u);
  EXPECT_EQ(replyText(client, {"DISCARD"}), "OK");
  // redis-server's own words are not the proxy's errors.
  EXPECT_EQ(replyText(client, {"GET"}), "ERR wrong number of arguments for 'get' command");
  EXPECT_EQ(replyText(client, {"NOSUCHCOMMAND"}).rfind("ERR unknown command", 0), 0u);

  const Counts counts = proxyErrors(harness);
  EXPECT_EQ(count(counts, ProxyError::kDisabled), 1u);
  EXPECT_EQ(count(counts, ProxyError::kNotSupported), 2u);
  EXPECT_EQ(count(counts, ProxyError::kCrossSlot), 1u);
  EXPECT_EQ(count(counts, ProxyError::kKeylessScript), 1u);
  EXPECT_EQ(count(counts, ProxyError::kSpansEveryShard), 1u);
  EXPECT_EQ(total(counts), 6u);
}

// Two scripted shards: "lost" hangs up, MGET on shard 1 answers a status where an array belongs,
// and a GET answered with text that reads like the proxy's own is still the shard's error.
TEST(ProxyErrorsRoutedTest, AFailedShardAndAnUnmergeableSplitAreCountedAShardsErrorIsNot) {
  auto script = [](bool odd) {
    return [odd](const Argv& argv) {
      if (argv[0] == "GET" && argv[1] == "lost") {
        return ScriptedShard::hangUp();
      }
      if (argv[0] == "GET") {
        return ScriptedShard::reply("-ERR shard s0 (127.0.0.1:1) unavailable: said the shard\r\n");
      }
      if (argv[0] == "MGET") {
        return ScriptedShard::reply(odd ? "+OK\r\n" : "*1\r\n$1\r\nv\r\n");
      }
      return ScriptedShard::reply("+OK\r\n");
    };
  };
  ScriptedShard s0(script(false));
  ScriptedShard s1(script(true));
  const route::TopologyPtr topology =
      route::Topology::evenSplit({route::ShardAddress("s0", "127.0.0.1", s0.port()),
                                  route::ShardAddress("s1", "127.0.0.1", s1.port())});
  WorkerHarness harness(topology, fakes::noPings, WorkerHarness::Listen::kLoopback);
  RedisClient client(harness.port());

  EXPECT_EQ(replyText(client, {"GET", "own"}).rfind("ERR shard s0 (127.0.0.1:1) unavailable", 0),
            0u);
  EXPECT_EQ(replyText(client, {"GET", "lost"}).rfind("ERR shard s", 0), 0u);
  const std::string on0 = fakes::keysOn(*topology, 0, 1)[0];
  const std::string on1 = fakes::keysOn(*topology, 1, 1)[0];
  EXPECT_EQ(replyText(client, {"MGET", on0, on1}),
            "ERR shardproxy: unexpected reply from a shard to a split command");

  const Counts counts = proxyErrors(harness);
  EXPECT_EQ(count(counts, ProxyError::kShardUnavailable), 1u);
  EXPECT_EQ(count(counts, ProxyError::kUnmergeable), 1u);
  EXPECT_EQ(total(counts), 2u);
}

}  // namespace
}  // namespace sp::session
