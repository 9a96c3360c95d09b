// ClusterRedirector's TRYAGAIN retries on the worker's clock (fakes/fake_timers.h, timer
// "cluster.retry"), against an in-process fake shard with a fake resend lookup: a retry goes out
// exactly when its delay has passed and not a millisecond before; the delays double from 2 ms up
// to 100 ms; retries waiting together go out in the order they fall due, not the order they came;
// a spent retry budget arms nothing.
#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "backend/backend_op.h"
#include "backend/cluster_redirector.h"
#include "backend/worker_backends.h"
#include "fakes/fake_shards.h"
#include "fakes/fake_timers.h"
#include "fakes/worker_harness.h"
#include "net/worker.h"
#include "unit/backend/fake_resend.h"

namespace sp::backend {
namespace {

using fakes::bulk;
using fakes::FakeReplyHandler;
using fakes::FakeTimers;
using fakes::getCommand;
using fakes::onWorker;
using fakes::WorkerHarness;

using testing::FakeRequest;
using testing::FakeResendLookup;

class ClusterRetryTimersTest : public ::testing::Test {
 protected:
  ClusterRetryTimersTest() {
    auto timers = std::make_unique<FakeTimers>();
    fake_ = timers.get();
    harness_ = std::make_unique<WorkerHarness>(
        shards_.topology(),
        [](config::Config& c) {
          c.cluster_mode = true;
          fakes::noPings(c);
        },
        WorkerHarness::Listen::kNo, std::move(timers));
  }

  // Queues `request`'s retry as a TRYAGAIN from the only shard would.
  bool retry(FakeRequest& request) {
    const route::ShardAddress node = shards_.topology()->shards()[0];
    return onWorker<bool>(harness_->worker(), [&](net::Worker& w) {
      return redirectorOf(w).retryLater(&request, 0, node, "-TRYAGAIN busy\r\n");
    });
  }
  void advance(uint64_t ms) {
    onWorker<bool>(harness_->worker(), [&](net::Worker&) {
      fake_->advance(ms);
      return true;
    });
  }
  uint64_t nextRetryDueInMs() {
    return onWorker<uint64_t>(harness_->worker(),
                              [&](net::Worker&) { return fake_->nextDueInMs("cluster.retry"); });
  }
  size_t waiting() {
    return onWorker<size_t>(harness_->worker(),
                            [](net::Worker& w) { return redirectorOf(w).waitingRetries(); });
  }
  std::vector<std::string> delivered() {
    std::lock_guard lock(handler_.catcher.mu);
    std::vector<std::string> replies;
    for (const fakes::DeliveredReply& d : handler_.catcher.delivered) {
      replies.push_back(d.reply);
    }
    return replies;
  }

  FakeReplyHandler handler_;
  FakeResendLookup lookup_;
  fakes::FakeShards shards_{1, [](const std::string& what) { ADD_FAILURE() << what; }};
  FakeTimers* fake_ = nullptr;
  std::unique_ptr<WorkerHarness> harness_;
};

TEST_F(ClusterRetryTimersTest, TheFirstRetryGoesOutExactlyAfterTwoMilliseconds) {
  FakeRequest request;
  request.bytes = getCommand("k");
  ASSERT_TRUE(retry(request));
  EXPECT_EQ(request.tries.retries, 1u);
  EXPECT_EQ(nextRetryDueInMs(), 2u);
  advance(1);
  EXPECT_EQ(waiting(), 1u);
  EXPECT_EQ(shards_.commandsServed(), 0u);
  advance(1);
  EXPECT_EQ(waiting(), 0u);
  ASSERT_TRUE(handler_.catcher.waitFor(1));
  EXPECT_EQ(delivered(), (std::vector<std::string>{bulk("s0|GET k")}));
}

TEST_F(ClusterRetryTimersTest, DelaysDoubleFromTwoMillisecondsUpToOneHundred) {
  std::vector<FakeRequest> requests(ClusterRedirector::kTryAgainRetries);
  std::vector<uint64_t> delays;
  for (uint32_t r = 0; r < requests.size(); ++r) {
    requests[r].bytes = getCommand("k" + std::to_string(r));
    requests[r].tries.retries = r;
    ASSERT_TRUE(retry(requests[r]));
    EXPECT_EQ(requests[r].tries.retries, r + 1);
    delays.push_back(nextRetryDueInMs());
    advance(delays.back());
    EXPECT_EQ(waiting(), 0u) << "retry " << r;
  }
  EXPECT_EQ(delays, (std::vector<uint64_t>{2, 4, 8, 16, 32, 64, 100, 100, 100, 100}));
  ASSERT_TRUE(handler_.catcher.waitFor(requests.size()));
}

TEST_F(ClusterRetryTimersTest, WaitingRetriesGoOutInTheOrderTheyFallDue) {
  FakeRequest late;
  late.bytes = getCommand("late");
  late.tries.retries = 5;  // 64 ms
  FakeRequest soon;
  soon.bytes = getCommand("soon");  // 2 ms
  ASSERT_TRUE(retry(late));
  ASSERT_TRUE(retry(soon));
  EXPECT_EQ(nextRetryDueInMs(), 2u);
  advance(2);
  ASSERT_TRUE(handler_.catcher.waitFor(1));
  EXPECT_EQ(waiting(), 1u);
  EXPECT_EQ(nextRetryDueInMs(), 62u);
  advance(61);
  EXPECT_EQ(waiting(), 1u);
  advance(1);
  ASSERT_TRUE(handler_.catcher.waitFor(2));
  EXPECT_EQ(delivered(), (std::vector<std::string>{bulk("s0|GET soon"), bulk("s0|GET late")}));
}

TEST_F(ClusterRetryTimersTest, ASpentBudgetArmsNothing) {
  FakeRequest request;
  request.bytes = getCommand("k");
  request.tries.retries = ClusterRedirector::kTryAgainRetries;
  EXPECT_FALSE(retry(request));
  EXPECT_EQ(request.tries.retries, ClusterRedirector::kTryAgainRetries);
  EXPECT_EQ(onWorker<size_t>(harness_->worker(),
                             [&](net::Worker&) { return fake_->armedCount("cluster.retry"); }),
            0u);
  EXPECT_EQ(waiting(), 0u);
}

}  // namespace
}  // namespace sp::backend
