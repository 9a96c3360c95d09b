// The session's auth gate (session/auth_gate.h), driven over loopback against a worker with
// auth.password on two fake shards: RESET closes the gate again; past the free failures an
// attempt is answered late and nothing pipelined after it runs before its answer; HELLO is
// refused before AUTH, and HELLO ... AUTH ... SETNAME authenticates and names the client in one
// request; a bad name in it is refused after the password was accepted.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

#include "config/config.h"
#include "fakes/fake_shards.h"
#include "fakes/redis_client.h"
#include "fakes/worker_harness.h"
#include "session/client_auth.h"

namespace sp::session {
namespace {

using fakes::keysOn;
using fakes::RedisClient;
using fakes::Reply;
using fakes::text;
using fakes::WorkerHarness;

constexpr char kNoAuth[] = "NOAUTH Authentication required.";
constexpr char kWrongPass[] = "WRONGPASS invalid username-password pair or user is disabled.";

class AuthGateTest : public ::testing::Test {
 protected:
  fakes::FakeShards shards_{2, [](const std::string& what) { ADD_FAILURE() << what; }};
  WorkerHarness harness_{shards_.topology(), [](config::Config& c) { c.auth.password = "pw"; },
                         WorkerHarness::Listen::kLoopback};
  RedisClient client_{harness_.port()};
  const std::string key_ = keysOn(*shards_.topology(), 1, 1)[0];
};

TEST_F(AuthGateTest, ResetClosesTheGateAgain) {
  const std::vector<Reply> replies =
      client_.pipeline({{"AUTH", "pw"}, {"GET", key_}, {"RESET"}, {"GET", key_}, {"AUTH", "pw"}});
  ASSERT_TRUE(fakes::allAnswered(replies));
  EXPECT_EQ(text(*replies[0]), "OK");
  EXPECT_EQ(text(*replies[1]), "s1|GET " + key_);
  EXPECT_EQ(text(*replies[2]), "RESET");
  EXPECT_EQ(text(*replies[3]), kNoAuth);
  EXPECT_EQ(text(*replies[4]), "OK");
}

TEST_F(AuthGateTest, PastTheFreeFailuresNothingAfterAnAttemptRunsBeforeItsAnswer) {
  std::vector<std::vector<std::string>> commands(kFreeAuthFailures + 1, {"AUTH", "guess"});
  commands.push_back({"AUTH", "pw"});
  commands.push_back({"GET", key_});
  const auto start = std::chrono::steady_clock::now();
  const std::vector<Reply> replies = client_.pipeline(commands);
  const auto elapsed_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                              std::chrono::steady_clock::now() - start)
                              .count();
  ASSERT_TRUE(fakes::allAnswered(replies));
  for (uint32_t i = 0; i <= kFreeAuthFailures; ++i) {
    EXPECT_EQ(text(*replies[i]), kWrongPass) << "attempt " << i;
  }
  EXPECT_EQ(text(*replies[kFreeAuthFailures + 1]), "OK");
  EXPECT_EQ(text(*replies[kFreeAuthFailures + 2]), "s1|GET " + key_);
  // The attempt after the free ones waits authDelayMs(free), the right password after it (as late
  // as a failure, or its speed would tell) authDelayMs(free + 1): a lower bound, whatever the load.
  const uint64_t least = authDelayMs(kFreeAuthFailures) + authDelayMs(kFreeAuthFailures + 1);
  EXPECT_GE(static_cast<uint64_t>(elapsed_ms), least);
}

TEST_F(AuthGateTest, HelloAuthenticatesAndNamesTheClientInOneRequest) {
  const std::vector<Reply> replies =
      client_.pipeline({{"HELLO", "2"},
                        {"HELLO", "2", "AUTH", "default", "nope"},
                        {"HELLO", "2", "AUTH", "default", "pw", "SETNAME", "app"},
                        {"CLIENT", "GETNAME"},
                        {"GET", key_}});
  ASSERT_TRUE(fakes::allAnswered(replies));
  EXPECT_EQ(text(*replies[0]),
            "NOAUTH HELLO must be called with the client already authenticated, otherwise the "
            "HELLO <proto> AUTH <user> <pass> option can be used to authenticate the client and "
            "select the RESP protocol version at the same time");
  EXPECT_EQ(text(*replies[1]), kWrongPass);
  ASSERT_EQ(replies[2]->type, REDIS_REPLY_ARRAY);
  ASSERT_EQ(replies[2]->elements, 14u);
  EXPECT_EQ(text(*replies[2]->element[0]), "server");
  EXPECT_EQ(replies[2]->element[5]->integer, 2);  // proto
  EXPECT_EQ(text(*replies[3]), "app");
  EXPECT_EQ(text(*replies[4]), "s1|GET " + key_);
}

TEST_F(AuthGateTest, ABadNameInHelloIsRefusedAfterThePasswordWasAccepted) {
  const std::vector<Reply> replies =
      client_.pipeline({{"HELLO", "2", "AUTH", "default", "pw", "SETNAME", "a b"}, {"GET", key_}});
  ASSERT_TRUE(fakes::allAnswered(replies));
  EXPECT_EQ(text(*replies[0]),
            "ERR Client names cannot contain spaces, newlines or special characters.");
  EXPECT_EQ(text(*replies[1]), "s1|GET " + key_);
}

}  // namespace
}  // namespace sp::session
