// Client idleness on the worker's clock, over loopback against a worker on fake timers: a client
// silent for longer than limits.timeout is closed by the next sweep (counted as idle_timeout) and
// one that spoke meanwhile stays; CLIENT LIST's idle= reads the same clock. No test waits for time
// to pass: the fake clock moves only when the test advances it.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "config/config.h"
#include "fakes/fake_shards.h"
#include "fakes/fake_timers.h"
#include "fakes/redis_client.h"
#include "fakes/worker_harness.h"
#include "net/worker_stats.h"

namespace sp::session {
namespace {

using fakes::RedisClient;
using fakes::Reply;
using fakes::text;
using fakes::WorkerHarness;

class IdleClientsTest : public ::testing::Test {
 protected:
  void start(uint32_t timeout_s) {
    auto timers = std::make_unique<fakes::FakeTimers>();
    fake_ = timers.get();
    harness_ = std::make_unique<WorkerHarness>(
        shards_.topology(),
        [timeout_s](config::Config& c) {
          fakes::noPings(c);
          c.limits.timeout = timeout_s;
        },
        WorkerHarness::Listen::kLoopback, std::move(timers));
  }
  void advance(uint64_t ms) {
    fakes::onWorker<bool>(harness_->worker(), [&](net::Worker&) {
      fake_->advance(ms);
      return true;
    });
  }
  static bool answersPing(RedisClient& client) {
    const Reply r = client.command({"PING"});
    return r != nullptr && r->type == REDIS_REPLY_STATUS && text(*r) == "PONG";
  }
  uint64_t idleClosed() {
    return harness_->worker()
        .stats()
        .closed[static_cast<size_t>(net::CloseReason::kIdleTimeout)]
        .get();
  }

  fakes::FakeShards shards_{1, [](const std::string& what) { ADD_FAILURE() << what; }};
  fakes::FakeTimers* fake_ = nullptr;
  std::unique_ptr<WorkerHarness> harness_;
};

TEST_F(IdleClientsTest, ASilentClientIsClosedByTheFirstSweepPastTheTimeout) {
  start(2);  // seconds: swept every 500 ms
  RedisClient silent(harness_->port());
  RedisClient talking(harness_->port());
  ASSERT_TRUE(answersPing(silent));  // both accepted, their clocks started at the same time
  ASSERT_TRUE(answersPing(talking));
  advance(1500);
  ASSERT_TRUE(answersPing(talking));
  advance(500);  // silent for exactly the timeout: not past it
  EXPECT_EQ(idleClosed(), 0u);
  advance(500);
  EXPECT_EQ(idleClosed(), 1u);
  EXPECT_EQ(silent.command({"PING"}), nullptr);
  EXPECT_TRUE(answersPing(talking));  // spoke 1 s ago
  advance(2000);  // its last word was at 2500 of this clock: closed at the sweep of 5000
  EXPECT_EQ(idleClosed(), 1u);
  advance(500);
  EXPECT_EQ(idleClosed(), 2u);
  EXPECT_EQ(talking.command({"PING"}), nullptr);
}

TEST_F(IdleClientsTest, WithoutATimeoutNoClientIsEverClosedForSilence) {
  start(0);
  RedisClient client(harness_->port());
  ASSERT_TRUE(answersPing(client));
  advance(30LL * 24 * 3600 * 1000);  // a month
  EXPECT_TRUE(answersPing(client));
  EXPECT_EQ(idleClosed(), 0u);
}

TEST_F(IdleClientsTest, ClientListShowsIdleSecondsOnTheWorkersClock) {
  start(0);
  RedisClient quiet(harness_->port());
  ASSERT_TRUE(answersPing(quiet));
  RedisClient asking(harness_->port());
  advance(7'400);
  const Reply list = asking.command({"CLIENT", "LIST"});
  ASSERT_NE(list, nullptr);
  ASSERT_EQ(list->type, REDIS_REPLY_STRING);
  const std::string lines = text(*list);
  // Two lines: the quiet client idle 7 s, the asking one 0 s (it just spoke).
  EXPECT_NE(lines.find(" idle=7 "), std::string::npos) << lines;
  EXPECT_NE(lines.find(" idle=0 "), std::string::npos) << lines;
}

}  // namespace
}  // namespace sp::session
