// DeferredQueue on fake timers: each item is handed over once, when its time comes and not
// before; a nearer item re-arms the one timer; items due together are taken out before the
// callback runs, so the callback may push again; close() hands back what never came due.
#include "net/deferred_queue.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "fakes/fake_timers.h"

namespace sp::net {
namespace {

class DeferredQueueTest : public ::testing::Test {
 protected:
  void SetUp() override {
    queue_.init(timers_, "test.deferred", [this](std::string& item) { fired_.push_back(item); });
  }

  fakes::FakeTimers timers_;
  DeferredQueue<std::string> queue_;
  std::vector<std::string> fired_;
};

TEST_F(DeferredQueueTest, AnItemIsHandedOverWhenItsDelayHasPassedAndNotBefore) {
  queue_.push(100, "a");
  timers_.advance(99);
  EXPECT_TRUE(fired_.empty());
  timers_.advance(1);
  EXPECT_EQ(fired_, std::vector<std::string>{"a"});
  EXPECT_EQ(queue_.size(), 0u);
  EXPECT_EQ(timers_.armedCount("test."), 0u);
  timers_.advance(1000);
  EXPECT_EQ(fired_.size(), 1u);  // once only
}

TEST_F(DeferredQueueTest, ItemsComeDueInTheOrderOfTheirTimesNotOfTheirPushes) {
  queue_.push(300, "late");
  queue_.push(100, "early");  // re-arms the one timer nearer
  EXPECT_EQ(timers_.nextDueInMs("test."), 100u);
  queue_.push(200, "middle");
  EXPECT_EQ(timers_.armedCount("test."), 1u);
  timers_.advance(100);
  EXPECT_EQ(fired_, std::vector<std::string>{"early"});
  EXPECT_EQ(timers_.nextDueInMs("test."), 100u);  // armed again for the next one
  timers_.advance(200);
  EXPECT_EQ(fired_, (std::vector<std::string>{"early", "middle", "late"}));
}

TEST_F(DeferredQueueTest, ItemsDueTogetherAreAllHandedOverAndTheCallbackMayPushAgain) {
  fakes::FakeTimers timers;
  DeferredQueue<int> queue;
  std::vector<int> fired;
  queue.init(timers, "test.again", [&](int& n) {
    fired.push_back(n);
    if (n < 3) {
      queue.push(10, n + 10);  // a retry of each, later
    }
  });
  queue.push(5, 1);
  queue.push(5, 2);
  queue.push(5, 3);
  timers.advance(5);
  EXPECT_EQ(fired, (std::vector<int>{1, 2, 3}));
  EXPECT_EQ(queue.size(), 2u);
  timers.advance(10);
  EXPECT_EQ(fired, (std::vector<int>{1, 2, 3, 11, 12}));
}

TEST_F(DeferredQueueTest, CloseHandsBackWhatNeverCameDueAndDisarms) {
  queue_.push(10, "due");
  queue_.push(1000, "waiting");
  queue_.push(5000, "longer");
  timers_.advance(10);
  const std::vector<std::string> left = queue_.close();
  EXPECT_EQ(left, (std::vector<std::string>{"waiting", "longer"}));
  EXPECT_EQ(queue_.size(), 0u);
  EXPECT_EQ(timers_.armedCount("test."), 0u);
  timers_.advance(10'000);
  EXPECT_EQ(fired_, std::vector<std::string>{"due"});
}

}  // namespace
}  // namespace sp::net
