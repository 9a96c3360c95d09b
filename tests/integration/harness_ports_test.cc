// The harness's own start-up checks: a server counts as started only when the process the test
// started listens on its port, not when anything answers there. Two test processes can be handed
// the same free port; the one that loses the bind must not take the winner's server for its own.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <vector>

#include "integration/harness.h"

namespace sp::test {
namespace {

TEST(HarnessPorts, ListensOnNamesTheProcessThatHoldsThePort) {
  RedisServer server;
  EXPECT_TRUE(listensOn(server.process().pid(), server.port()));
  EXPECT_FALSE(listensOn(::getpid(), server.port()));
  EXPECT_FALSE(listensOn(server.process().pid(), freePort()));
}

TEST(HarnessPorts, ASecondServerOnATakenPortIsNotTakenForStarted) {
  RedisServer holder;
  TempDir dir;
  // What a second test process does when it was handed the same port: start its own server there.
  Process loser({"/usr/bin/redis-server", "--port", std::to_string(holder.port()), "--bind",
                 "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", dir.path()},
                dir.path() + "/redis.log");
  EXPECT_TRUE(waitForPort(holder.port(), std::chrono::milliseconds(500)));  // the holder answers
  EXPECT_FALSE(waitForListener(loser, holder.port(), std::chrono::seconds(5))) << loser.log();
  EXPECT_FALSE(loser.alive());  // it lost the bind and exited
  EXPECT_TRUE(waitForListener(holder.process(), holder.port(), std::chrono::seconds(1)));
}

}  // namespace
}  // namespace sp::test
