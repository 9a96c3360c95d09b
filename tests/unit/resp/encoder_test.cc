// Tests for the RESP2 encoder helpers, checked against literal bytes and against our own parsers.
#include "resp/encoder.h"

#include <gtest/gtest.h>

#include <array>
#include <string>
#include <string_view>
#include <vector>

#include "resp/reply_scanner.h"
#include "resp/request_parser.h"

namespace sp::resp {
namespace {

using namespace std::string_literals;

TEST(EncoderTest, Scalars) {
  std::string out;
  appendInteger(out, 0);
  appendInteger(out, -42);
  appendInteger(out, INT64_MAX);
  appendInteger(out, INT64_MIN);
  EXPECT_EQ(out, ":0\r\n:-42\r\n:9223372036854775807\r\n:-9223372036854775808\r\n");
  out.clear();
  appendStatus(out, "OK");
  appendError(out, "ERR unknown command");
  appendNullBulk(out);
  EXPECT_EQ(out, "+OK\r\n-ERR unknown command\r\n$-1\r\n");
}

TEST(EncoderTest, BulkAndArrays) {
  std::string out = "prefix";
  appendBulk(out, "");
  appendBulk(out, "a\r\n\0"s);
  appendArrayHeader(out, 2);
  appendArrayHeader(out, -1);
  EXPECT_EQ(out, "prefix$0\r\n\r\n$4\r\na\r\n\0\r\n*2\r\n*-1\r\n"s);
}

TEST(EncoderTest, CommandRoundTripsThroughParserAndScanner) {
  const std::vector<std::string> args = {"MSET", "k1", std::string(1000, 'v'), "k\r\n2", ""};
  std::string out;
  appendCommand(out, args);
  EXPECT_EQ(out.substr(0, 18), "*5\r\n$4\r\nMSET\r\n$2\r\n");

  RequestParser parser;
  RequestFrame frame;
  size_t consumed = 0;
  ASSERT_EQ(parser.parse(out, &consumed, &frame), ParseStatus::kOk);
  EXPECT_EQ(consumed, out.size());
  ASSERT_EQ(frame.args.size(), args.size());
  for (size_t i = 0; i < args.size(); ++i) {
    EXPECT_EQ(frame.args[i], args[i]);
  }

  ReplyScanner scanner;
  ReplyInfo info;
  ASSERT_EQ(scanner.scan(out, &consumed, &info), ParseStatus::kOk);
  EXPECT_EQ(info.type, '*');
  EXPECT_EQ(info.value, 5);
  EXPECT_EQ(info.size, out.size());

  const std::array<std::string_view, 2> views = {"GET", "key"};
  std::string get;
  appendCommand(get, views);
  EXPECT_EQ(get, "*2\r\n$3\r\nGET\r\n$3\r\nkey\r\n");
}

}  // namespace
}  // namespace sp::resp
