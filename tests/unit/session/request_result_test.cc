// A request's result label (shardproxy_requests_total{result}): an error the proxy gave for a
// shard that failed the request is "unavailable", and a shard's own error is "error" even when its
// words are the proxy's: the label comes from a mark on the request, not from the text.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "config/config.h"
#include "fakes/redis_client.h"
#include "fakes/scripted_shard.h"
#include "fakes/worker_harness.h"
#include "net/worker.h"
#include "net/worker_stats.h"
#include "route/topology.h"

namespace sp::session {
namespace {

using fakes::RedisClient;
using fakes::Reply;
using fakes::ScriptedShard;
using fakes::text;
using fakes::WorkerHarness;
using Argv = ScriptedShard::Argv;

constexpr char kLookalike[] = "-ERR shard s0 (127.0.0.1:1) unavailable: a script said so\r\n";

uint64_t reads(WorkerHarness& harness, net::RequestResult result) {
  return fakes::onWorker<uint64_t>(harness.worker(), [result](net::Worker& w) {
    return w.stats()
        .requests[static_cast<size_t>(net::CommandClass::kRead)][static_cast<size_t>(result)]
        .get();
  });
}

TEST(RequestResultTest, TheProxysShardErrorIsUnavailableAndAShardsLookalikeIsAnError) {
  ScriptedShard shard([](const Argv& argv) {
    if (argv[0] == "GET" && argv[1] == "lost") {
      return ScriptedShard::hangUp();
    }
    if (argv[0] == "GET") {
      return ScriptedShard::reply(kLookalike);
    }
    return ScriptedShard::reply("+OK\r\n");
  });
  WorkerHarness harness(fakes::oneShard(shard.port()), fakes::noPings,
                        WorkerHarness::Listen::kLoopback);
  RedisClient client(harness.port());
  Reply own = client.command({"GET", "own"});
  ASSERT_TRUE(own != nullptr);
  EXPECT_EQ(text(*own) + "\r\n", std::string(kLookalike).substr(1));
  Reply lost = client.command({"GET", "lost"});
  ASSERT_TRUE(lost != nullptr);
  EXPECT_EQ(text(*lost).rfind("ERR shard s0 (127.0.0.1:", 0), 0u) << text(*lost);
  EXPECT_EQ(reads(harness, net::RequestResult::kError), 1u);
  EXPECT_EQ(reads(harness, net::RequestResult::kUnavailable), 1u);
  EXPECT_EQ(reads(harness, net::RequestResult::kOk), 0u);
}

}  // namespace
}  // namespace sp::session
