// Tests for the reply readers (readInteger, readArrayElements, readString, isError).
#include "resp/reply_reader.h"

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

namespace sp::resp {
namespace {

using namespace std::string_literals;
using Views = std::vector<std::string_view>;

TEST(ReplyReaderTest, ReadInteger) {
  int64_t v = 7;
  EXPECT_TRUE(readInteger(":0\r\n", &v));
  EXPECT_EQ(v, 0);
  EXPECT_TRUE(readInteger(":12345\r\n", &v));
  EXPECT_EQ(v, 12345);
  EXPECT_TRUE(readInteger(":-3\r\n", &v));
  EXPECT_EQ(v, -3);
  EXPECT_TRUE(readInteger(":9223372036854775807\r\n", &v));
  EXPECT_EQ(v, INT64_MAX);
  EXPECT_TRUE(readInteger(":-9223372036854775808\r\n", &v));
  EXPECT_EQ(v, INT64_MIN);
  EXPECT_TRUE(readInteger(":5\r\n+OK\r\n", &v));  // bytes after the reply are ignored
  EXPECT_EQ(v, 5);
  for (const char* bad : {"", ":", ":\r\n", ":1", ":1\r", ":1\n", ":+1\r\n", ":01\r\n", ":-0\r\n",
                          ":1a\r\n", ":9223372036854775808\r\n", "+1\r\n", "$1\r\n1\r\n"}) {
    EXPECT_FALSE(readInteger(bad, &v)) << bad;
  }
}

TEST(ReplyReaderTest, ReadString) {
  std::string_view s;
  EXPECT_TRUE(readString("$5\r\nhello\r\n", &s));
  EXPECT_EQ(s, "hello");
  EXPECT_TRUE(readString("$0\r\n\r\n", &s));
  EXPECT_EQ(s, "");
  const std::string binary = "$5\r\na\r\n\0b\r\n"s;
  EXPECT_TRUE(readString(binary, &s));
  EXPECT_EQ(s, "a\r\n\0b"s);
  EXPECT_TRUE(readString("+OK\r\n", &s));
  EXPECT_EQ(s, "OK");
  EXPECT_TRUE(readString("+\r\n", &s));
  EXPECT_EQ(s, "");
  for (const char* bad : {"", "$-1\r\n", "$5\r\nhell", "$5\r\nhello", "$5\r\nhelloXY", "$x\r\n",
                          "$-2\r\n", "+OK", "+OK\n", "-ERR x\r\n", ":1\r\n", "*1\r\n+a\r\n"}) {
    EXPECT_FALSE(readString(bad, &s)) << bad;
  }
}

TEST(ReplyReaderTest, ReadArrayElements) {
  Views out;
  ASSERT_TRUE(readArrayElements("*3\r\n$3\r\nfoo\r\n$-1\r\n:7\r\n", &out));
  EXPECT_EQ(out, (Views{"$3\r\nfoo\r\n", "$-1\r\n", ":7\r\n"}));
  ASSERT_TRUE(readArrayElements("*0\r\n", &out));
  EXPECT_TRUE(out.empty());
  // Nested elements are returned whole.
  ASSERT_TRUE(readArrayElements("*2\r\n*2\r\n:1\r\n*1\r\n+x\r\n-ERR e\r\n", &out));
  EXPECT_EQ(out, (Views{"*2\r\n:1\r\n*1\r\n+x\r\n", "-ERR e\r\n"}));
  // RESP3 elements, a map and an attribute with the element it annotates.
  ASSERT_TRUE(readArrayElements("*3\r\n%1\r\n+k\r\n:1\r\n|1\r\n+a\r\n+b\r\n#t\r\n_\r\n", &out));
  EXPECT_EQ(out, (Views{"%1\r\n+k\r\n:1\r\n", "|1\r\n+a\r\n+b\r\n#t\r\n", "_\r\n"}));
  // A CLUSTER SLOTS entry.
  const std::string slots =
      "*1\r\n*3\r\n:0\r\n:5460\r\n*3\r\n$9\r\n127.0.0.1\r\n:30001\r\n$4\r\nabcd\r\n";
  ASSERT_TRUE(readArrayElements(slots, &out));
  ASSERT_EQ(out.size(), 1u);
  Views entry;
  ASSERT_TRUE(readArrayElements(out[0], &entry));
  ASSERT_EQ(entry.size(), 3u);
  int64_t v = 0;
  EXPECT_TRUE(readInteger(entry[1], &v));
  EXPECT_EQ(v, 5460);
  Views node;
  ASSERT_TRUE(readArrayElements(entry[2], &node));
  std::string_view host;
  EXPECT_TRUE(readString(node[0], &host));
  EXPECT_EQ(host, "127.0.0.1");

  for (const char* bad :
       {"", "*-1\r\n", "*-2\r\n", "*x\r\n", "*2\r\n:1\r\n", "*1\r\n$3\r\nab\r\n", "*1\r\n?\r\n",
        "*1\r\n*99999999\r\n:1\r\n", "*1\r\n:x\r\n", "*1\r\n$2\r\nabc\r\n", "+OK\r\n", ":1\r\n",
        "*1\r\n%1\r\n+k\r\n", "*1\r\n|1\r\n+a\r\n+b\r\n", "*1\r\n=-1\r\n", "*1\r\n~-1\r\n"}) {
    out.push_back("stale");
    EXPECT_FALSE(readArrayElements(bad, &out)) << testing::PrintToString(std::string(bad));
    EXPECT_TRUE(out.empty());
  }
}

TEST(ReplyReaderTest, IsError) {
  EXPECT_TRUE(isError("-ERR x\r\n"));
  EXPECT_TRUE(isError("!3\r\nerr\r\n"));
  EXPECT_FALSE(isError("+OK\r\n"));
  EXPECT_FALSE(isError(""));
}

}  // namespace
}  // namespace sp::resp
