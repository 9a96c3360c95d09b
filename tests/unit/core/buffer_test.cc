// Buffer: appends, growth across the read offset, and empty views.
#include "core/buffer.h"

#include <gtest/gtest.h>

#include <string>
#include <string_view>

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

}  // namespace
}  // namespace sp
