// Pub/sub through the proxy: with 2 workers and many connections, subscribers and publishers land
// on different workers and every message published through any of them reaches every subscriber
// of its channel (and of a matching pattern) once, in publish order per channel; the
// confirmations count like Redis; subscribed mode refuses other commands; SSUBSCRIBE/SPUBLISH by
// slot; PUBSUB NUMSUB/CHANNELS/NUMPAT merged over the shards; a subscriber that disconnects
// leaves no subscription behind on any shard.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "integration/clients_helpers.h"
#include "integration/harness.h"

namespace sp::test {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr int kShards = 4;

class PubSubTest : public ::testing::Test {
 protected:
  void SetUp() override { env_ = std::make_unique<Deployment>(kShards, /*workers=*/2); }
  std::unique_ptr<Deployment> env_;
};

TEST_F(PubSubTest, MessagesReachEverySubscriberAcrossWorkers) {
  constexpr int kSubscribers = 16;
  constexpr int kChannels = 8;
  constexpr int kMessages = 25;
  std::vector<std::string> channels;
  for (int c = 0; c < kChannels; ++c) {
    channels.push_back("news:" + std::to_string(c));
  }
  std::vector<std::unique_ptr<Client>> subscribers;
  for (int i = 0; i < kSubscribers; ++i) {
    auto sub = std::make_unique<Client>(env_->port());
    ASSERT_TRUE(sub->ok());
    std::vector<std::string> argv = {"SUBSCRIBE"};
    argv.insert(argv.end(), channels.begin(), channels.end());
    EXPECT_EQ(sub->cmd(argv), "[subscribe, news:0, (integer) 1]");
    for (int c = 1; c < kChannels; ++c) {
      EXPECT_EQ(nextReply(*sub, seconds(5)),
                "[subscribe, " + channels[c] + ", (integer) " + std::to_string(c + 1) + "]");
    }
    EXPECT_EQ(sub->cmd({"PSUBSCRIBE", "alert:*"}),
              "[psubscribe, alert:*, (integer) " + std::to_string(kChannels + 1) + "]");
    subscribers.push_back(std::move(sub));
  }
  if (!env_->direct()) {
    // Many connections: both workers have some.
    Client info(env_->port());
    const std::string clients = info.cmd({"INFO", "clients"});
    EXPECT_EQ(clients.find("worker0_clients:0\r"), std::string::npos) << clients;
    EXPECT_EQ(clients.find("worker1_clients:0\r"), std::string::npos) << clients;
  }
  // One publisher connection per channel, each publishing in order.
  for (int c = 0; c < kChannels; ++c) {
    Client pub(env_->port());
    for (int m = 0; m < kMessages; ++m) {
      ASSERT_EQ(pub.cmd({"PUBLISH", channels[c], "m" + std::to_string(m)}),
                "(integer) " + std::to_string(kSubscribers));
    }
    ASSERT_EQ(pub.cmd({"PUBLISH", "alert:" + std::to_string(c), "fire"}),
              "(integer) " + std::to_string(kSubscribers));
  }
  for (int i = 0; i < kSubscribers; ++i) {
    std::map<std::string, int> next;  // channel -> next message number expected
    int alerts = 0;
    for (int n = 0; n < kChannels * (kMessages + 1); ++n) {
      const std::string got = nextReply(*subscribers[i], seconds(5));
      if (got.rfind("[pmessage, alert:*, alert:", 0) == 0) {
        EXPECT_EQ(got.substr(got.size() - 7), ", fire]") << got;
        ++alerts;
        continue;
      }
      ASSERT_EQ(got.rfind("[message, news:", 0), 0u) << "subscriber " << i << ": " << got;
      const size_t comma = got.find(", ", 10);
      const std::string channel = got.substr(10, comma - 10);
      const std::string want =
          "[message, " + channel + ", m" + std::to_string(next[channel]++) + "]";
      EXPECT_EQ(got, want) << "subscriber " << i;
    }
    EXPECT_EQ(alerts, kChannels);
    for (const std::string& c : channels) {
      EXPECT_EQ(next[c], kMessages) << "subscriber " << i << " on " << c;
    }
  }
}

TEST_F(PubSubTest, ConfirmationsAndSubscribedModeLikeRedis) {
  Client sub(env_->port());
  EXPECT_EQ(sub.cmd({"SUBSCRIBE", "a", "b"}), "[subscribe, a, (integer) 1]");
  EXPECT_EQ(nextReply(sub, seconds(5)), "[subscribe, b, (integer) 2]");
  EXPECT_EQ(sub.cmd({"SUBSCRIBE", "a"}), "[subscribe, a, (integer) 2]");
  EXPECT_EQ(sub.cmd({"PSUBSCRIBE", "p*"}), "[psubscribe, p*, (integer) 3]");
  EXPECT_EQ(sub.cmd({"PING"}), "[pong, ]");
  EXPECT_EQ(sub.cmd({"PING", "hi"}), "[pong, hi]");
  EXPECT_EQ(sub.cmd({"GET", "x"}),
            "(error) ERR Can't execute 'get': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / "
            "QUIT / RESET are allowed in this context");
  EXPECT_EQ(sub.cmd({"UNSUBSCRIBE", "a", "zz"}), "[unsubscribe, a, (integer) 2]");
  EXPECT_EQ(nextReply(sub, seconds(5)), "[unsubscribe, zz, (integer) 2]");
  EXPECT_EQ(sub.cmd({"UNSUBSCRIBE"}), "[unsubscribe, b, (integer) 1]");
  EXPECT_EQ(sub.cmd({"PUNSUBSCRIBE"}), "[punsubscribe, p*, (integer) 0]");
  // Out of subscribed mode: ordinary commands again.
  EXPECT_EQ(sub.cmd({"SET", "x", "1"}), "OK");
  EXPECT_EQ(sub.cmd({"GET", "x"}), "1");
  EXPECT_EQ(sub.cmd({"UNSUBSCRIBE"}), "[unsubscribe, (nil), (integer) 0]");
  // RESET leaves subscribed mode too.
  EXPECT_EQ(sub.cmd({"SUBSCRIBE", "c"}), "[subscribe, c, (integer) 1]");
  EXPECT_EQ(sub.cmd({"RESET"}), "RESET");
  EXPECT_EQ(sub.cmd({"GET", "x"}), "1");
  Client pub(env_->port());
  EXPECT_EQ(pub.cmd({"PUBLISH", "c", "nobody"}), "(integer) 0");
}

// Redis ends a client's subscriptions when it answers RESET, so a PUBLISH pipelined right after
// it counts no subscriber. The proxy's subscriptions live on its subscriber connections: they must
// have ended on every shard before +RESET leaves.
TEST_F(PubSubTest, APublishPipelinedAfterResetCountsNoSubscriber) {
  for (const std::string hello : {"", "HELLO 3"}) {  // RESP3 clients may pipeline while subscribed
    RawConn conn(env_->port());
    if (!hello.empty()) {
      ASSERT_TRUE(conn.sendAll(encodeCommand({"HELLO", "3"})));
      ASSERT_NE(conn.readUntil("proto", seconds(5)).find("proto"), std::string::npos);
    }
    for (int round = 0; round < 30; ++round) {
      ASSERT_TRUE(
          conn.sendAll(encodeCommand({"SUBSCRIBE", "r"}) + encodeCommand({"PSUBSCRIBE", "r*"})));
      ASSERT_NE(conn.readUntil("r*\r\n:2\r\n", seconds(5)).find("r*\r\n:2\r\n"), std::string::npos);
      std::string pipeline = encodeCommand({"RESET"}) + encodeCommand({"PUBLISH", "r", "x"});
      if (!hello.empty()) {
        pipeline = encodeCommand({"UNLINK", "u"}) + pipeline + encodeCommand({"HELLO", "3"});
      }
      ASSERT_TRUE(conn.sendAll(pipeline));
      const std::string got = conn.readUntil(hello.empty() ? ":0\r\n" : "proto", seconds(5));
      const size_t reset = got.find("+RESET\r\n");
      ASSERT_NE(reset, std::string::npos) << got;
      EXPECT_EQ(got.substr(reset + 8, 4), ":0\r\n") << hello << " round " << round << ": " << got;
    }
  }
}

TEST_F(PubSubTest, ShardedChannels) {
  Client sub(env_->port());
  EXPECT_EQ(sub.cmd({"SSUBSCRIBE", "{room}a", "{room}b"}), "[ssubscribe, {room}a, (integer) 1]");
  EXPECT_EQ(nextReply(sub, seconds(5)), "[ssubscribe, {room}b, (integer) 2]");
  Client pub(env_->port());
  EXPECT_EQ(pub.cmd({"SPUBLISH", "{room}b", "hello"}), "(integer) 1");
  EXPECT_EQ(nextReply(sub, seconds(5)), "[smessage, {room}b, hello]");
  EXPECT_EQ(pub.cmd({"PUBSUB", "SHARDNUMSUB", "{room}a", "none"}),
            "[{room}a, (integer) 1, none, (integer) 0]");
  EXPECT_EQ(pub.cmd({"PUBSUB", "SHARDCHANNELS", "{room}*"}).size(),
            std::string("[{room}a, {room}b]").size());
  if (!env_->direct()) {
    EXPECT_EQ(sub.cmd({"SSUBSCRIBE", "x", "y"}),
              "(error) CROSSSLOT Keys in request don't hash to the same slot");
  }
  EXPECT_EQ(sub.cmd({"SUNSUBSCRIBE"}).rfind("[sunsubscribe, {room}", 0), 0u);
}

TEST_F(PubSubTest, IntrospectionIsMergedOverShards) {
  const std::string c0 = keyOnShard(0, kShards, "ch");
  const std::string c3 = keyOnShard(3, kShards, "ch");
  Client s1(env_->port());
  Client s2(env_->port());
  EXPECT_EQ(s1.cmd({"SUBSCRIBE", c0}), "[subscribe, " + c0 + ", (integer) 1]");
  EXPECT_EQ(s2.cmd({"SUBSCRIBE", c0, c3}), "[subscribe, " + c0 + ", (integer) 1]");
  EXPECT_EQ(nextReply(s2, seconds(5)), "[subscribe, " + c3 + ", (integer) 2]");
  EXPECT_EQ(s2.cmd({"PSUBSCRIBE", "x*"}), "[psubscribe, x*, (integer) 3]");
  Client q(env_->port());
  EXPECT_EQ(q.cmd({"PUBSUB", "NUMSUB", c0, c3, "nope"}),
            "[" + c0 + ", (integer) 2, " + c3 + ", (integer) 1, nope, (integer) 0]");
  const std::string channels = q.cmd({"PUBSUB", "CHANNELS", "ch*"});
  EXPECT_TRUE(channels == "[" + c0 + ", " + c3 + "]" || channels == "[" + c3 + ", " + c0 + "]")
      << channels;
  EXPECT_EQ(q.cmd({"PUBSUB", "NUMPAT"}), "(integer) 1");
}

TEST_F(PubSubTest, DisconnectedSubscriberLeavesNothingOnTheShards) {
  if (env_->direct()) {
    GTEST_SKIP() << "proxy-only";
  }
  std::vector<std::string> channels;
  {
    Client sub(env_->port());
    for (int s = 0; s < kShards; ++s) {
      channels.push_back(keyOnShard(s, kShards, "gone"));
      ASSERT_EQ(sub.cmd({"SUBSCRIBE", channels.back()}).rfind("[subscribe, ", 0), 0u);
    }
    ASSERT_EQ(sub.cmd({"PSUBSCRIBE", "gone*"}).rfind("[psubscribe, ", 0), 0u);
  }
  for (auto& s : env_->shards()) {
    Client direct(s->port());
    EXPECT_TRUE(eventually([&] {
      return direct.cmd({"PUBSUB", "NUMPAT"}) == "(integer) 0" &&
             direct.cmd({"PUBSUB", "CHANNELS"}) == "[]";
    })) << s->address();
  }
}

}  // namespace
}  // namespace sp::test
