// The commands a session hands to the control plane (net/control_plane.h), over a fake one: INFO
// asks it for the text, CONFIG RESETSTAT resets its counters, PROXY RELOAD waits for its outcome
// and answers it in order, and a proxy that cannot reload says so without asking.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "fakes/fake_control_plane.h"
#include "fakes/fake_shards.h"
#include "fakes/redis_client.h"
#include "fakes/worker_harness.h"

namespace sp::session {
namespace {

using fakes::RedisClient;
using fakes::Reply;
using fakes::text;
using fakes::WorkerHarness;

// A worker listening on loopback over two fake shards, with a fake control plane.
class ControlCommandsTest : public ::testing::Test {
 protected:
  fakes::FakeShards shards_{2, [](const std::string& what) { ADD_FAILURE() << what; }};
  WorkerHarness harness_{shards_.topology(), {}, WorkerHarness::Listen::kLoopback};
  fakes::FakeControlPlane& control_ = harness_.control();
  RedisClient client_{harness_.port()};
};

TEST_F(ControlCommandsTest, InfoIsTheControlPlanesText) {
  Reply r = client_.command({"INFO", "server"});
  ASSERT_TRUE(r != nullptr);
  ASSERT_EQ(r->type, REDIS_REPLY_STRING);
  EXPECT_EQ(text(*r), "# Fake\r\nsections:server\r\n");
  EXPECT_EQ(control_.infoRequests(), std::vector<std::string>{"server"});
}

TEST_F(ControlCommandsTest, ConfigResetstatResetsTheProxysCounters) {
  Reply r = client_.command({"CONFIG", "RESETSTAT"});
  ASSERT_TRUE(r != nullptr);
  EXPECT_EQ(control_.resets.load(), 1);
}

TEST_F(ControlCommandsTest, ReloadUnavailableIsRefusedWithoutAsking) {
  Reply r = client_.command({"PROXY", "RELOAD"});
  ASSERT_TRUE(r != nullptr);
  ASSERT_EQ(r->type, REDIS_REPLY_ERROR);
  EXPECT_EQ(text(*r), "ERR reload is not available");
  EXPECT_EQ(control_.reloads.load(), 0);
}

TEST_F(ControlCommandsTest, ReloadOutcomeIsTheReplyInItsPlace) {
  control_.can_reload = true;
  control_.outcome = {false, "shards: a list is required"};
  // Pipelined: the reload's reply, answered from another thread's callback, keeps its place
  // between the two PINGs.
  const std::vector<Reply> replies = client_.pipeline({{"PING"}, {"PROXY", "RELOAD"}, {"PING"}});
  ASSERT_TRUE(fakes::allAnswered(replies));
  EXPECT_EQ(text(*replies[0]), "PONG");
  ASSERT_EQ(replies[1]->type, REDIS_REPLY_ERROR);
  EXPECT_EQ(text(*replies[1]),
            "ERR reload failed, configuration unchanged: shards: a list is required");
  EXPECT_EQ(text(*replies[2]), "PONG");

  control_.outcome = {true, ""};
  Reply ok = client_.command({"PROXY", "RELOAD"});
  ASSERT_TRUE(ok != nullptr);
  EXPECT_EQ(text(*ok), "OK");
  EXPECT_EQ(control_.reloads.load(), 2);
}

}  // namespace
}  // namespace sp::session
