// Buffer: appends, growth across the read offset, empty views and giving memory back; BufferPool:
// reuse within a bound in bytes.
#include "core/buffer.h"

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

namespace sp {
namespace {

TEST(BufferTest, AppendAndConsume) {
  Buffer b;
  b.append("hello ");
  b.append(std::string_view("world"));
  EXPECT_EQ(b.view(), "hello world");
  b.consume(6);
  EXPECT_EQ(b.view(), "world");
  b.consume(5);
  EXPECT_TRUE(b.empty());
}

TEST(BufferTest, AnEmptyViewAppendsNothing) {
  // A default-constructed view has a null data pointer; appending it must be a no-op (it used to
  // reach memcpy, which UBSAN reports for a null source even with length 0).
  Buffer b;
  b.append(std::string_view());
  EXPECT_TRUE(b.empty());
  Buffer empty;
  b.append(empty.view());
  EXPECT_TRUE(b.empty());
  b.append("x");
  b.append(std::string_view());
  EXPECT_EQ(b.view(), "x");
}

TEST(BufferTest, GrowsPastItsCapacityKeepingTheUnreadBytes) {
  Buffer b;
  std::string expected;
  for (int i = 0; i < 10000; ++i) {
    const std::string piece = std::to_string(i) + ",";
    b.append(piece);
    expected += piece;
    if (i % 7 == 0) {
      b.consume(1);
      expected.erase(0, 1);
    }
  }
  EXPECT_EQ(b.view(), expected);
}

TEST(BufferTest, AnEmptyBufferPastTheLimitGivesItsMemoryBack) {
  Buffer b;
  b.append(std::string(200 * 1024, 'x'));
  const size_t grown = b.capacity();
  ASSERT_GE(grown, 200u * 1024);
  EXPECT_EQ(b.shrinkIfEmpty(kBufferKeepBytes), 0u) << "not empty: keeps its bytes";
  b.consume(b.size() - 1);
  EXPECT_EQ(b.shrinkIfEmpty(kBufferKeepBytes), 0u);
  EXPECT_EQ(b.view(), "x");
  b.consume(1);
  EXPECT_EQ(b.shrinkIfEmpty(kBufferKeepBytes), grown);
  EXPECT_EQ(b.capacity(), 0u);
  EXPECT_TRUE(b.empty());
  b.append("after");  // usable again: grows from nothing
  EXPECT_EQ(b.view(), "after");
}

TEST(BufferTest, ASmallBufferKeepsItsMemory) {
  Buffer b;
  b.append(std::string(1000, 'x'));
  b.clear();
  const size_t cap = b.capacity();
  EXPECT_EQ(b.shrinkIfEmpty(kBufferKeepBytes), 0u);
  EXPECT_EQ(b.capacity(), cap);
}

TEST(BufferTest, ShrinkMovesAFewBytesLeftIntoSmallStorage) {
  Buffer b;
  b.append(std::string(300 * 1024, 'x'));
  const size_t grown = b.capacity();
  b.consume(b.size());
  b.append("*1\r\n$4\r\nPING\r\n");  // queued after the large value went
  EXPECT_EQ(b.shrinkIfEmpty(kBufferKeepBytes), 0u) << "not empty";
  EXPECT_EQ(b.shrink(kBufferKeepBytes), grown - kBufferMinBytes);
  EXPECT_EQ(b.capacity(), kBufferMinBytes);
  EXPECT_EQ(b.view(), "*1\r\n$4\r\nPING\r\n");
  b.append("more");
  EXPECT_EQ(b.view(), "*1\r\n$4\r\nPING\r\nmore");
}

TEST(BufferTest, ASmallReplyTakesTheLeastStorage) {
  Buffer b;
  EXPECT_EQ(b.capacity(), 0u);
  b.append("$5\r\nhello\r\n");
  EXPECT_EQ(b.capacity(), kBufferMinBytes);
  b.append(std::string(kBufferMinBytes, 'x'));  // then it doubles
  EXPECT_EQ(b.capacity(), 2 * kBufferMinBytes);
  b.append(std::string(5 * kBufferMinBytes, 'y'));  // or grows to what it must hold
  EXPECT_EQ(b.capacity(), 11 + 6 * kBufferMinBytes);
}

TEST(BufferTest, ShrinkKeepsABufferThatIsStillFull) {
  Buffer b;
  b.append(std::string(300 * 1024, 'x'));
  const size_t grown = b.capacity();
  b.consume(300 * 1024 - kBufferKeepBytes);  // more than keep / 2 left: still in use
  EXPECT_EQ(b.shrink(kBufferKeepBytes), 0u);
  EXPECT_EQ(b.capacity(), grown);
  b.consume(b.size());
  EXPECT_EQ(b.shrink(kBufferKeepBytes), grown);  // empty: all of it goes
  EXPECT_EQ(b.capacity(), 0u);
  Buffer small;
  small.append("abc");
  EXPECT_EQ(small.shrink(kBufferKeepBytes), 0u);  // within the limit: untouched
  EXPECT_EQ(small.view(), "abc");
}

// A buffer from the pool that grew to `bytes`.
Buffer* grownBuffer(BufferPool& pool, size_t bytes) {
  Buffer* b = pool.acquire();
  b->ensureWritable(bytes);
  return b;
}

TEST(BufferPoolTest, ReusesAndComesDownToItsBoundAtRest) {
  BufferPool pool(64 * 1024);
  std::vector<Buffer*> live;
  for (int i = 0; i < 10; ++i) {
    live.push_back(grownBuffer(pool, 16 * 1024));  // 16 KB capacity each
  }
  EXPECT_EQ(pool.liveCount(), 10u);
  for (Buffer* b : live) {
    pool.release(b);
  }
  // Busy: all kept (within kBusyFactor times the bound), and reused with their capacity.
  EXPECT_EQ(pool.liveCount(), 0u);
  EXPECT_EQ(pool.freeCount(), 10u);
  EXPECT_EQ(pool.retainedBytes(), 160u * 1024);
  pool.trim();  // all of them were out during this interval: kept
  EXPECT_EQ(pool.retainedBytes(), 160u * 1024);
  Buffer* again = pool.acquire();
  EXPECT_EQ(again->capacity(), 16u * 1024);
  EXPECT_TRUE(again->empty());
  pool.release(again);
  EXPECT_EQ(pool.takeFreedBytes(), 0u);
  pool.trim();  // only 16 KB were needed during this one: the excess over the bound goes
  EXPECT_EQ(pool.retainedBytes(), 64u * 1024);
  EXPECT_EQ(pool.freeCount(), 4u);
  EXPECT_EQ(pool.takeFreedBytes(), 6u * 16 * 1024);
  pool.trim();
  EXPECT_EQ(pool.retainedBytes(), 64u * 1024) << "within the bound: kept";
  EXPECT_EQ(pool.takeFreedBytes(), 0u);
}

TEST(BufferPoolTest, BuffersInUseEveryIntervalAreKept) {
  // A steady load that has 8 buffers out at once, part of every interval, must not free and
  // allocate them again and again, even when they are more than the bound.
  BufferPool pool(32 * 1024);
  std::vector<Buffer*> live;
  for (int round = 0; round < 5; ++round) {
    for (int i = 0; i < 8; ++i) {
      live.push_back(round == 0 ? grownBuffer(pool, 16 * 1024) : pool.acquire());
    }
    for (Buffer* b : live) {
      EXPECT_EQ(b->capacity(), 16u * 1024);
      pool.release(b);
    }
    live.clear();
    pool.trim();
    EXPECT_EQ(pool.takeFreedBytes(), 0u) << round;
  }
  pool.trim();  // the load stops: after an interval unused, the excess goes
  EXPECT_EQ(pool.retainedBytes(), 32u * 1024);
}

TEST(BufferPoolTest, ABurstOfLargeBuffersIsNotKept) {
  // 2,000 clients with ~1 MB requests each used to leave 2,000 buffers of 1 MB in the pool.
  BufferPool pool;  // the default bound: 4 MB
  std::vector<Buffer*> live;
  for (int i = 0; i < 200; ++i) {
    live.push_back(grownBuffer(pool, 900 * 1024));
  }
  for (Buffer* b : live) {
    pool.release(b);
  }
  EXPECT_LE(pool.retainedBytes(), BufferPool::kDefaultMaxBytes * BufferPool::kBusyFactor);
  EXPECT_GE(pool.takeFreedBytes(), 100u * 900 * 1024);
  pool.trim();
  pool.trim();
  EXPECT_LE(pool.retainedBytes(), BufferPool::kDefaultMaxBytes);
  EXPECT_LE(pool.freeCount(), 4u);
}

TEST(BufferPoolTest, ABufferLargerThanTheRetainedCapacityIsFreed) {
  BufferPool pool(64 << 20, 1 << 20);
  pool.release(grownBuffer(pool, 2 << 20));
  EXPECT_EQ(pool.freeCount(), 0u);
  EXPECT_EQ(pool.retainedBytes(), 0u);
  EXPECT_GE(pool.takeFreedBytes(), 2u << 20);
}

TEST(BufferPoolTest, ABoundOfZeroKeepsNothing) {
  BufferPool pool(0);
  pool.release(grownBuffer(pool, 4096));
  EXPECT_EQ(pool.freeCount(), 0u);
  pool.release(pool.acquire());  // an untouched buffer has no capacity: kept, it costs nothing
  EXPECT_EQ(pool.retainedBytes(), 0u);
}

TEST(BufferPoolTest, ALowerBoundFreesTheExcessAtOnce) {
  BufferPool pool(1 << 20);
  std::vector<Buffer*> live;
  for (int i = 0; i < 8; ++i) {
    live.push_back(grownBuffer(pool, 64 * 1024));
  }
  for (Buffer* b : live) {
    pool.release(b);
  }
  EXPECT_EQ(pool.retainedBytes(), 8u * 64 * 1024);
  pool.setMaxBytes(128 * 1024);
  EXPECT_EQ(pool.retainedBytes(), 128u * 1024);
  EXPECT_EQ(pool.freeCount(), 2u);
  EXPECT_EQ(pool.takeFreedBytes(), 6u * 64 * 1024);
}

}  // namespace
}  // namespace sp
