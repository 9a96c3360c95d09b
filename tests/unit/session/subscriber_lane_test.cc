// The session's subscriber lane (session/subscriber_lane.h), driven over loopback: a pattern
// subscribes on every shard and is confirmed once, with Redis' count; unsubscribing from
// everything leaves subscribed mode; losing the subscriber connection while subscribed closes the
// client (its library reconnects and subscribes again); RESET ends the subscriptions on the shard
// before it is answered.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "config/config.h"
#include "fakes/fake_shards.h"
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

// ["verb", name, count] as a subscriber connection confirms.
std::string confirmation(const std::string& verb, const std::string& name, int count) {
  return "*3\r\n$" + std::to_string(verb.size()) + "\r\n" + verb + "\r\n$" +
         std::to_string(name.size()) + "\r\n" + name + "\r\n:" + std::to_string(count) + "\r\n";
}

void expectConfirmation(const Reply& r, const std::string& verb, const std::string& name,
                        long long count) {
  ASSERT_TRUE(r != nullptr);
  ASSERT_EQ(r->type, REDIS_REPLY_ARRAY);
  ASSERT_EQ(r->elements, 3u);
  EXPECT_EQ(text(*r->element[0]), verb);
  EXPECT_EQ(text(*r->element[1]), name);
  EXPECT_EQ(r->element[2]->integer, count);
}

// SUBSCRIBE / UNSUBSCRIBE confirmed as a shard does; SUBSCRIBE lost hangs up; PING +PONG.
ScriptedShard::Answer subscriberShard(const Argv& argv) {
  if (argv[0] == "SUBSCRIBE" && argv[1] == "lost") {
    return ScriptedShard::hangUp();
  }
  if (argv[0] == "SUBSCRIBE" || argv[0] == "UNSUBSCRIBE") {
    const std::string verb = argv[0] == "SUBSCRIBE" ? "subscribe" : "unsubscribe";
    return ScriptedShard::reply(confirmation(verb, argv[1], argv[0] == "SUBSCRIBE" ? 1 : 0));
  }
  return ScriptedShard::reply("+PONG\r\n");
}

TEST(SubscriberLaneTest, APatternIsConfirmedOnceWhenEveryShardHasIt) {
  fakes::FakeShards shards(2, [](const std::string& what) { ADD_FAILURE() << what; });
  WorkerHarness harness(shards.topology(), {}, WorkerHarness::Listen::kLoopback);
  RedisClient client(harness.port());
  const std::vector<Reply> replies =
      client.pipeline({{"PSUBSCRIBE", "n*"}, {"SUBSCRIBE", "a"}, {"PUNSUBSCRIBE"}});
  ASSERT_TRUE(fakes::allAnswered(replies));
  expectConfirmation(replies[0], "psubscribe", "n*", 1);
  expectConfirmation(replies[1], "subscribe", "a", 2);
  expectConfirmation(replies[2], "punsubscribe", "n*", 1);
  Reply last = client.command({"UNSUBSCRIBE"});
  expectConfirmation(last, "unsubscribe", "a", 0);
  Reply ping = client.command({"PING"});
  ASSERT_TRUE(ping != nullptr);
  EXPECT_EQ(text(*ping), "PONG");  // out of subscribed mode
}

TEST(SubscriberLaneTest, LosingTheSubscriberConnectionWhileSubscribedClosesTheClient) {
  ScriptedShard shard(subscriberShard);
  WorkerHarness harness(fakes::oneShard(shard.port()), fakes::noPings,
                        WorkerHarness::Listen::kLoopback);
  RedisClient client(harness.port());
  expectConfirmation(client.command({"SUBSCRIBE", "news"}), "subscribe", "news", 1);
  client.command({"SUBSCRIBE", "lost"});  // an error or nothing: the shard hung up
  Reply after = client.command({"PING"});
  EXPECT_EQ(after, nullptr);
  EXPECT_TRUE(client.closedByPeer());
}

// RESET must end the subscriptions on the shard before +RESET leaves: a PUBLISH the client sends
// next must not count it (redis-server unsubscribes as it answers RESET). Closing the subscriber
// connection is not enough: the shard may read the PUBLISH before it sees the close.
TEST(SubscriberLaneTest, ResetEndsTheShardsSubscriptionsBeforeItIsAnswered) {
  ScriptedShard shard([](const Argv& argv) {
    if (argv[0] == "RESET") {
      return ScriptedShard::Answer{{"+RES", "ET\r\n"}, false};  // in two parts, 20 ms apart
    }
    return subscriberShard(argv);
  });
  WorkerHarness harness(fakes::oneShard(shard.port()), fakes::noPings,
                        WorkerHarness::Listen::kLoopback);
  RedisClient client(harness.port());
  expectConfirmation(client.command({"SUBSCRIBE", "news"}), "subscribe", "news", 1);
  const std::vector<Reply> replies = client.pipeline({{"RESET"}, {"PING"}});
  ASSERT_TRUE(fakes::allAnswered(replies));
  EXPECT_EQ(text(*replies[0]), "RESET");
  EXPECT_EQ(text(*replies[1]), "PONG");
  // The shard answered RESET (the proxy waited for it) on the subscriber connection.
  const std::vector<Argv> all = shard.commands();
  EXPECT_NE(std::find(all.begin(), all.end(), Argv{"RESET"}), all.end());
}

}  // namespace
}  // namespace sp::session
