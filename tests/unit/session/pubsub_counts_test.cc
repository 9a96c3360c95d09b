// The subscriber lane's confirmations (session/subscriber_lane.h), over loopback against a worker
// on two fake shards: every (P)SUBSCRIBE and (P)UNSUBSCRIBE is confirmed with the client's count of
// channels and patterns together, as redis-server counts; UNSUBSCRIBE with nothing to unsubscribe
// answers a nil name and 0; a command other than the subscriber ones is refused with redis-server
// 7's words, naming a subcommand by its full name.
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
using fakes::WorkerHarness;

// A confirmation as "kind name count" ("(nil)" for a nil name), or the error's text.
std::string confirmation(const Reply& r) {
  if (r == nullptr) {
    return "(no reply)";
  }
  if (r->type != REDIS_REPLY_ARRAY) {
    return fakes::text(*r);
  }
  if (r->elements != 3) {
    return "(" + std::to_string(r->elements) + " elements)";
  }
  const std::string name =
      r->element[1]->type == REDIS_REPLY_NIL ? "(nil)" : fakes::text(*r->element[1]);
  return fakes::text(*r->element[0]) + " " + name + " " + std::to_string(r->element[2]->integer);
}

class PubSubCountsTest : public ::testing::Test {
 protected:
  std::string send(const std::vector<std::string>& argv) {
    return confirmation(client_.command(argv));
  }

  fakes::FakeShards shards_{2, [](const std::string& what) { ADD_FAILURE() << what; }};
  WorkerHarness harness_{shards_.topology(), fakes::noPings, WorkerHarness::Listen::kLoopback};
  RedisClient client_{harness_.port()};
};

TEST_F(PubSubCountsTest, ChannelsAndPatternsAreCountedTogether) {
  EXPECT_EQ(send({"SUBSCRIBE", "a"}), "subscribe a 1");
  EXPECT_EQ(send({"SUBSCRIBE", "b"}), "subscribe b 2");
  EXPECT_EQ(send({"PSUBSCRIBE", "p*"}), "psubscribe p* 3");
  EXPECT_EQ(send({"SUBSCRIBE", "a"}), "subscribe a 3");  // already subscribed
  EXPECT_EQ(send({"UNSUBSCRIBE", "a"}), "unsubscribe a 2");
  EXPECT_EQ(send({"PUNSUBSCRIBE"}), "punsubscribe p* 1");
  EXPECT_EQ(send({"UNSUBSCRIBE"}), "unsubscribe b 0");
  EXPECT_EQ(send({"PING"}), "PONG");  // out of the subscriber context
}

TEST_F(PubSubCountsTest, UnsubscribingWithNothingSubscribedAnswersNilAndZero) {
  EXPECT_EQ(send({"UNSUBSCRIBE"}), "unsubscribe (nil) 0");
  EXPECT_EQ(send({"PUNSUBSCRIBE"}), "punsubscribe (nil) 0");
  EXPECT_EQ(send({"PING"}), "PONG");
}

TEST_F(PubSubCountsTest, UnsubscribingFromAChannelNeverSubscribedConfirmsIt) {
  EXPECT_EQ(send({"SUBSCRIBE", "a"}), "subscribe a 1");
  EXPECT_EQ(send({"UNSUBSCRIBE", "x"}), "unsubscribe x 1");
  EXPECT_EQ(send({"PUNSUBSCRIBE", "x*"}), "punsubscribe x* 1");
}

TEST_F(PubSubCountsTest, OtherCommandsAreRefusedInRedisServersWords) {
  EXPECT_EQ(send({"SUBSCRIBE", "a"}), "subscribe a 1");
  const std::string tail =
      "': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this "
      "context";
  EXPECT_EQ(send({"SET", "k", "v"}), "ERR Can't execute 'set" + tail);
  EXPECT_EQ(send({"MULTI"}), "ERR Can't execute 'multi" + tail);
  EXPECT_EQ(send({"CLIENT", "ID"}), "ERR Can't execute 'client|id" + tail);
  EXPECT_EQ(send({"UNSUBSCRIBE"}), "unsubscribe a 0");  // still subscribed until then
}

}  // namespace
}  // namespace sp::session
