// IntrusiveQueue: FIFO order, and insertBefore for the pub/sub pushes placed ahead of a reply.
#include "core/intrusive_queue.h"

#include <gtest/gtest.h>

#include <vector>

namespace sp {
namespace {

struct Item {
  int value = 0;
  Item* next = nullptr;
};

using Queue = IntrusiveQueue<Item, &Item::next>;

std::vector<int> drain(Queue& q) {
  std::vector<int> out;
  while (Item* item = q.pop()) {
    out.push_back(item->value);
  }
  return out;
}

TEST(IntrusiveQueueTest, PushPopPushFront) {
  Item a{1}, b{2}, c{3};
  Queue q;
  EXPECT_TRUE(q.empty());
  q.push(&a);
  q.push(&b);
  q.pushFront(&c);
  EXPECT_EQ(q.size(), 3u);
  EXPECT_EQ(q.front(), &c);
  EXPECT_EQ(q.back(), &b);
  EXPECT_EQ(drain(q), (std::vector<int>{3, 1, 2}));
  EXPECT_TRUE(q.empty());
  EXPECT_EQ(q.back(), nullptr);
}

TEST(IntrusiveQueueTest, InsertBeforeTheFrontTheMiddleAndTheBack) {
  Item a{1}, b{2}, c{3}, x{10}, y{20}, z{30};
  Queue q;
  q.push(&a);
  q.push(&b);
  q.push(&c);
  EXPECT_TRUE(q.insertBefore(&x, &a));  // the front
  EXPECT_TRUE(q.insertBefore(&y, &b));  // the middle
  EXPECT_TRUE(q.insertBefore(&z, &c));  // before the back: the back stays c
  EXPECT_EQ(q.back(), &c);
  EXPECT_EQ(q.size(), 6u);
  EXPECT_EQ(drain(q), (std::vector<int>{10, 1, 20, 2, 30, 3}));
}

TEST(IntrusiveQueueTest, InsertBeforeSomethingNotQueuedQueuesNothing) {
  Item a{1}, stranger{2}, x{10};
  Queue q;
  EXPECT_FALSE(q.insertBefore(&x, &a));  // empty
  q.push(&a);
  EXPECT_FALSE(q.insertBefore(&x, &stranger));
  EXPECT_FALSE(q.insertBefore(&x, nullptr));
  EXPECT_EQ(q.size(), 1u);
  EXPECT_EQ(drain(q), (std::vector<int>{1}));
}

}  // namespace
}  // namespace sp
