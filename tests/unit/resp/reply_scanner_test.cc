// Tests for ReplyScanner: every vector is scanned whole, byte by byte (a growing buffer that is
// copied to a fresh allocation before every call, as a moved socket buffer would be) and at every
// split point.
#include "resp/reply_scanner.h"

#include <gtest/gtest.h>

#include <string>
#include <string_view>

namespace sp::resp {
namespace {

using namespace std::string_literals;

struct Outcome {
  ParseStatus status = ParseStatus::kIncomplete;
  size_t consumed = 0;
  ReplyInfo info;
  ParseError error = ParseError::kNone;
};

bool operator==(const Outcome& a, const Outcome& b) {
  return a.status == b.status && a.consumed == b.consumed && a.error == b.error &&
         a.info.type == b.info.type && a.info.value == b.info.value && a.info.size == b.info.size;
}

std::ostream& operator<<(std::ostream& os, const Outcome& o) {
  return os << "{status=" << static_cast<int>(o.status) << " consumed=" << o.consumed << " type='"
            << o.info.type << "' value=" << o.info.value << " size=" << o.info.size
            << " error=" << errorName(o.error) << "}";
}

Outcome scanOnce(ReplyScanner& scanner, std::string_view input) {
  Outcome o;
  // A copy per call: the scanner must keep offsets, never pointers into an earlier buffer.
  const std::string moved(input);
  o.status = scanner.scan(moved, &o.consumed, &o.info);
  o.error = scanner.error();
  if (o.status != ParseStatus::kOk) {
    o.info = ReplyInfo{};
  }
  return o;
}

Outcome scanWhole(std::string_view input, ScannerLimits limits) {
  ReplyScanner scanner(limits);
  return scanOnce(scanner, input);
}

Outcome scanByteByByte(std::string_view input, ScannerLimits limits) {
  ReplyScanner scanner(limits);
  Outcome o;
  for (size_t i = 1; i <= input.size(); ++i) {
    o = scanOnce(scanner, input.substr(0, i));
    if (o.status != ParseStatus::kIncomplete) {
      break;
    }
    EXPECT_EQ(o.consumed, 0u);
  }
  return o;
}

// Checks the three ways of feeding `input` agree with each other and returns the outcome.
Outcome scanAllWays(std::string_view input, ScannerLimits limits = {}) {
  const Outcome whole = scanWhole(input, limits);
  EXPECT_EQ(scanByteByByte(input, limits), whole) << "byte by byte";
  for (size_t split = 0; split < input.size(); ++split) {
    ReplyScanner scanner(limits);
    Outcome first = scanOnce(scanner, input.substr(0, split));
    if (first.status == ParseStatus::kIncomplete) {
      EXPECT_EQ(first.consumed, 0u);
      first = scanOnce(scanner, input);
    }
    EXPECT_EQ(first, whole) << "split at " << split;
  }
  return whole;
}

void expectReply(std::string_view input, char type, int64_t value, size_t size,
                 ScannerLimits limits = {}) {
  SCOPED_TRACE(testing::Message() << "input: " << testing::PrintToString(std::string(input)));
  const Outcome o = scanAllWays(input, limits);
  EXPECT_EQ(o.status, ParseStatus::kOk) << o;
  EXPECT_EQ(o.info.type, type);
  EXPECT_EQ(o.info.value, value);
  EXPECT_EQ(o.info.size, size);
  EXPECT_EQ(o.consumed, size);
}

void expectWholeReply(std::string_view input, char type, int64_t value = 0) {
  expectReply(input, type, value, input.size());
}

void expectError(std::string_view input, ParseError error, ScannerLimits limits = {}) {
  SCOPED_TRACE(testing::Message() << "input: " << testing::PrintToString(std::string(input)));
  const Outcome o = scanAllWays(input, limits);
  EXPECT_EQ(o.status, ParseStatus::kError) << o;
  EXPECT_EQ(o.error, error) << o;
  EXPECT_EQ(o.consumed, 0u);
}

void expectIncomplete(std::string_view input, ScannerLimits limits = {}) {
  SCOPED_TRACE(testing::Message() << "input: " << testing::PrintToString(std::string(input)));
  const Outcome o = scanAllWays(input, limits);
  EXPECT_EQ(o.status, ParseStatus::kIncomplete) << o;
  EXPECT_EQ(o.consumed, 0u);
}

TEST(ReplyScannerTest, SimpleStringAndError) {
  expectWholeReply("+OK\r\n", '+');
  expectWholeReply("+\r\n", '+');
  expectWholeReply("+a\rb\r\n", '+');  // a lone CR is content, as hiredis reads it
  expectWholeReply("-ERR unknown command\r\n", '-');
  expectWholeReply("-MOVED 3999 127.0.0.1:6381\r\n", '-');
  expectIncomplete("+OK");
  expectIncomplete("+OK\r");
  expectError("+OK\n", ParseError::kBadCrlf);
  expectError("+\n", ParseError::kBadCrlf);
  expectError("+a\nb\r\n", ParseError::kBadCrlf);
}

TEST(ReplyScannerTest, SimpleStringLimit) {
  ScannerLimits limits;
  limits.max_bulk_len = 4;
  expectReply("+abcd\r\n", '+', 0, 7, limits);
  expectError("+abcde\r\n", ParseError::kBulkTooLong, limits);
  expectError("+abcdefghij", ParseError::kBulkTooLong, limits);
  expectIncomplete("+abcd\r", limits);
  limits.max_bulk_len = 0;
  expectReply("+\r\n", '+', 0, 3, limits);
  expectError("+a\r\n", ParseError::kBulkTooLong, limits);
}

TEST(ReplyScannerTest, Integer) {
  expectWholeReply(":0\r\n", ':', 0);
  expectWholeReply(":1000\r\n", ':', 1000);
  expectWholeReply(":-42\r\n", ':', -42);
  expectWholeReply(":9223372036854775807\r\n", ':', INT64_MAX);
  expectWholeReply(":-9223372036854775808\r\n", ':', INT64_MIN);
  expectIncomplete(":12");
  expectIncomplete(":-");
  expectIncomplete(":12\r");
  expectError(":\r\n", ParseError::kBadInteger);
  expectError(":-\r\n", ParseError::kBadInteger);
  expectError(":+1\r\n", ParseError::kBadInteger);
  expectError(":01\r\n", ParseError::kBadInteger);
  expectError(":-0\r\n", ParseError::kBadInteger);
  expectError(":1a\r\n", ParseError::kBadInteger);
  expectError(": 1\r\n", ParseError::kBadInteger);
  expectError(":9223372036854775808\r\n", ParseError::kBadInteger);
  expectError(":-9223372036854775809\r\n", ParseError::kBadInteger);
  expectError(":1\rx", ParseError::kBadCrlf);
  expectError(":1\n", ParseError::kBadInteger);
}

TEST(ReplyScannerTest, Bulk) {
  expectWholeReply("$5\r\nhello\r\n", '$', 5);
  expectWholeReply("$0\r\n\r\n", '$', 0);
  expectWholeReply("$-1\r\n", '$', -1);
  expectWholeReply("$6\r\na\r\nb\0c\r\n"s, '$', 6);  // binary safe
  expectIncomplete("$5\r\nhel");
  expectIncomplete("$5\r\nhello");
  expectIncomplete("$5\r\nhello\r");
  expectError("$5\r\nhelloXY", ParseError::kBadCrlf);
  expectError("$5\r\nhello\rX", ParseError::kBadCrlf);
  expectError("$5\r\nhello\n\r", ParseError::kBadCrlf);
  expectError("$-2\r\n", ParseError::kBadBulkLen);
  expectError("$-0\r\n", ParseError::kBadBulkLen);
  expectError("$\r\n", ParseError::kBadBulkLen);
  expectError("$abc\r\n", ParseError::kBadBulkLen);
  expectError("$1x", ParseError::kBadBulkLen);
  expectError("$05\r\nhello\r\n", ParseError::kBadBulkLen);
  expectError("$?\r\n", ParseError::kBadBulkLen);  // streamed strings are not supported
  expectError("$5\rx", ParseError::kBadCrlf);
}

TEST(ReplyScannerTest, BulkLimits) {
  ScannerLimits limits;
  limits.max_bulk_len = 5;
  expectReply("$5\r\nhello\r\n", '$', 5, 11, limits);
  expectReply("$-1\r\n", '$', -1, 5, limits);
  expectError("$6\r\nhello!\r\n", ParseError::kBulkTooLong, limits);
  // Huge declared lengths are rejected from the header alone, before any payload arrives.
  expectError("$9223372036854775807\r\n", ParseError::kBulkTooLong);
  expectError("$9223372036854775808\r\n", ParseError::kBulkTooLong);
  expectError("$99999999999999999999999", ParseError::kBulkTooLong);
  expectError("$-99999999999999999999999", ParseError::kBadBulkLen);
  expectError("$-9223372036854775808\r\n", ParseError::kBadBulkLen);
}

TEST(ReplyScannerTest, LargeBulkArrivingInChunks) {
  const size_t len = 8u << 20;
  std::string reply = "$" + std::to_string(len) + "\r\n" + std::string(len, 'x') + "\r\n";
  ReplyScanner scanner;
  size_t consumed = 1;
  ReplyInfo info;
  for (size_t have = 1; have < reply.size(); have += 4096) {
    ASSERT_EQ(scanner.scan(std::string_view(reply).substr(0, have), &consumed, &info),
              ParseStatus::kIncomplete);
    ASSERT_EQ(consumed, 0u);
  }
  ASSERT_EQ(scanner.scan(reply, &consumed, &info), ParseStatus::kOk);
  EXPECT_EQ(consumed, reply.size());
  EXPECT_EQ(info.type, '$');
  EXPECT_EQ(info.value, static_cast<int64_t>(len));
}

TEST(ReplyScannerTest, Arrays) {
  expectWholeReply("*0\r\n", '*', 0);
  expectWholeReply("*-1\r\n", '*', -1);
  expectWholeReply("*2\r\n$3\r\nfoo\r\n$-1\r\n", '*', 2);
  expectWholeReply("*3\r\n:1\r\n+two\r\n-three\r\n", '*', 3);
  expectWholeReply("*2\r\n*2\r\n:1\r\n:2\r\n*0\r\n", '*', 2);
  expectWholeReply("*2\r\n*-1\r\n*1\r\n*1\r\n$0\r\n\r\n", '*', 2);
  expectWholeReply("*1\r\n*1\r\n*1\r\n*1\r\n:1\r\n", '*', 1);
  // CLUSTER SLOTS shape.
  expectWholeReply(
      "*1\r\n*3\r\n:0\r\n:5460\r\n*3\r\n$9\r\n127.0.0.1\r\n:30001\r\n$40\r\n"
      "09dbe9720cda62f7865eabc5fd8857c5d2678366\r\n",
      '*', 1);
  expectIncomplete("*2\r\n:1\r\n");
  expectIncomplete("*2\r\n*1\r\n:1\r\n");
  expectIncomplete("*1\r\n*1\r\n");
  expectError("*-2\r\n", ParseError::kBadArrayLen);
  expectError("*x\r\n", ParseError::kBadArrayLen);
  expectError("*\r\n", ParseError::kBadArrayLen);
  expectError("*1\r\n*-2\r\n", ParseError::kBadArrayLen);
  expectError("*2\r\n:1\r\n?\r\n", ParseError::kBadType);
  expectError("*1\n", ParseError::kBadArrayLen);
  expectError("*1\r:", ParseError::kBadCrlf);
}

TEST(ReplyScannerTest, ArrayLimits) {
  ScannerLimits limits;
  limits.max_array_len = 3;
  expectReply("*3\r\n:1\r\n:2\r\n:3\r\n", '*', 3, 16, limits);
  expectError("*4\r\n", ParseError::kArrayTooLong, limits);
  expectError("*1\r\n*4\r\n", ParseError::kArrayTooLong, limits);
  expectError("%2\r\n", ParseError::kArrayTooLong, ScannerLimits{.max_array_len = 1});
  expectError("*9223372036854775807\r\n", ParseError::kArrayTooLong);
  expectError("*9223372036854775808\r\n", ParseError::kArrayTooLong);
  expectError("*4294967297\r\n", ParseError::kArrayTooLong);
  // A huge count within the limit is owed, not allocated.
  expectIncomplete("*9223372036854775807\r\n:1\r\n", ScannerLimits{.max_array_len = UINT64_MAX});
}

TEST(ReplyScannerTest, DepthLimit) {
  ScannerLimits limits;
  limits.max_depth = 3;
  expectReply("*1\r\n*1\r\n*1\r\n:1\r\n", '*', 1, 16, limits);
  expectReply("*1\r\n*1\r\n*0\r\n", '*', 1, 12, limits);
  expectError("*1\r\n*1\r\n*1\r\n*1\r\n:1\r\n", ParseError::kTooDeep, limits);
  expectError("*1\r\n*1\r\n*1\r\n*0\r\n", ParseError::kTooDeep, limits);
  expectError("*1\r\n*1\r\n*1\r\n*-1\r\n", ParseError::kTooDeep, limits);
  expectError("*1\r\n%1\r\n~1\r\n>0\r\n", ParseError::kTooDeep, limits);
  limits.max_depth = 0;
  expectReply(":1\r\n", ':', 1, 4, limits);
  expectError("*0\r\n", ParseError::kTooDeep, limits);

  // The default limit allows 2^20 levels (a script's reply nested 8,000 deep passes through).
  // Scanned whole, once: byte by byte (expectReply) would be quadratic at 4 MB.
  std::string deep;
  for (uint32_t i = 0; i < (1u << 20); ++i) {
    deep += "*1\r\n";
  }
  deep += ":7\r\n";
  ReplyScanner scanner;
  size_t consumed = 0;
  ReplyInfo info;
  EXPECT_EQ(scanner.scan(deep, &consumed, &info), ParseStatus::kOk);
  EXPECT_EQ(consumed, deep.size());
  ReplyScanner deeper;
  EXPECT_EQ(deeper.scan("*1\r\n" + deep, &consumed, &info), ParseStatus::kError);
  EXPECT_EQ(deeper.error(), ParseError::kTooDeep);
}

TEST(ReplyScannerTest, Resp3Scalars) {
  expectWholeReply("_\r\n", '_');
  expectWholeReply("#t\r\n", '#', 1);
  expectWholeReply("#f\r\n", '#', 0);
  expectWholeReply(",3.14\r\n", ',');
  expectWholeReply(",-1.5e10\r\n", ',');
  expectWholeReply(",inf\r\n", ',');
  expectWholeReply(",-inf\r\n", ',');
  expectWholeReply(",nan\r\n", ',');
  expectWholeReply("(3492890328409238509324850943850943825024385\r\n", '(');
  expectWholeReply("(-1\r\n", '(');
  expectWholeReply("=15\r\ntxt:Some string\r\n", '=', 15);
  expectWholeReply("!21\r\nSYNTAX invalid syntax\r\n", '!', 21);
  expectError("_x\r\n", ParseError::kBadCrlf);
  expectError("_\n", ParseError::kBadCrlf);
  expectError("#x\r\n", ParseError::kBadInteger);
  expectError("#tt\r\n", ParseError::kBadCrlf);
  expectError(",\r\n", ParseError::kBadInteger);
  expectError(",1.0x\r\n", ParseError::kBadInteger);
  expectError("(\r\n", ParseError::kBadInteger);
  expectError("(12a\r\n", ParseError::kBadInteger);
  expectError("=-1\r\n", ParseError::kBadBulkLen);
  expectError("!-1\r\n", ParseError::kBadBulkLen);
  expectIncomplete("#t\r");
  expectIncomplete("_");
}

TEST(ReplyScannerTest, Resp3Aggregates) {
  // Maps and attributes owe two elements per entry.
  expectWholeReply("%2\r\n+first\r\n:1\r\n+second\r\n:2\r\n", '%', 2);
  expectIncomplete("%2\r\n+first\r\n:1\r\n+second\r\n");
  expectWholeReply("~3\r\n+a\r\n+b\r\n+c\r\n", '~', 3);
  expectWholeReply(">3\r\n$7\r\nmessage\r\n$3\r\nch1\r\n$5\r\nhello\r\n", '>', 3);
  expectWholeReply("%0\r\n", '%', 0);
  expectWholeReply("%1\r\n%1\r\n_\r\n#t\r\n*1\r\n,1.5\r\n", '%', 1);
  expectError("%-1\r\n", ParseError::kBadArrayLen);
  expectError("~-1\r\n", ParseError::kBadArrayLen);
  expectError(">-1\r\n", ParseError::kBadArrayLen);
  expectError("|-1\r\n", ParseError::kBadArrayLen);
}

TEST(ReplyScannerTest, AttributesAnnotateTheNextElement) {
  // At the top level the reply ends with the annotated element; the type stays '|'.
  expectWholeReply(
      "|1\r\n+key-popularity\r\n%2\r\n$1\r\na\r\n,0.1923\r\n$1\r\nb\r\n,0.0012\r\n"
      "*2\r\n:2039123\r\n:9543892\r\n",
      '|', 1);
  expectIncomplete("|1\r\n+k\r\n+v\r\n");
  expectWholeReply("|0\r\n:5\r\n", '|', 0);
  expectWholeReply("|1\r\n+a\r\n+b\r\n|1\r\n+c\r\n+d\r\n:5\r\n", '|', 1);
  // Inside an aggregate the attribute does not take its parent's slot.
  expectWholeReply("*2\r\n|1\r\n+k\r\n+v\r\n:1\r\n:2\r\n", '*', 2);
  expectIncomplete("*2\r\n|1\r\n+k\r\n+v\r\n:1\r\n");
  expectReply("*1\r\n|1\r\n+k\r\n+v\r\n:1\r\n:2\r\n", '*', 1, 20);
}

TEST(ReplyScannerTest, BadTypeByte) {
  for (const char c : "?@xX0 \r\n\t\x01\x7f\xff\0"s) {
    expectError(std::string(1, c) + "OK\r\n", ParseError::kBadType);
  }
}

TEST(ReplyScannerTest, PipelinedRepliesBackToBack) {
  const std::string stream = "+OK\r\n:12\r\n$3\r\nbar\r\n*2\r\n$1\r\na\r\n$-1\r\n-ERR x\r\n_\r\n";
  const struct {
    char type;
    int64_t value;
    size_t size;
  } want[] = {{'+', 0, 5}, {':', 12, 5}, {'$', 3, 9}, {'*', 2, 16}, {'-', 0, 8}, {'_', 0, 3}};
  ReplyScanner scanner;
  size_t off = 0;
  for (const auto& w : want) {
    size_t consumed = 0;
    ReplyInfo info;
    ASSERT_EQ(scanner.scan(std::string_view(stream).substr(off), &consumed, &info),
              ParseStatus::kOk);
    EXPECT_EQ(info.type, w.type);
    EXPECT_EQ(info.value, w.value);
    EXPECT_EQ(info.size, w.size);
    EXPECT_EQ(consumed, w.size);
    off += consumed;
  }
  EXPECT_EQ(off, stream.size());
  size_t consumed = 0;
  ReplyInfo info;
  EXPECT_EQ(scanner.scan(std::string_view(stream).substr(off), &consumed, &info),
            ParseStatus::kIncomplete);

  // Fed byte by byte with a growing buffer, the same replies come out in the same order.
  ReplyScanner slow;
  std::string buf;
  size_t got = 0;
  for (const char c : stream) {
    buf.push_back(c);
    const ParseStatus st = slow.scan(buf, &consumed, &info);
    ASSERT_NE(st, ParseStatus::kError);
    if (st == ParseStatus::kOk) {
      ASSERT_LT(got, std::size(want));
      EXPECT_EQ(info.type, want[got].type);
      EXPECT_EQ(info.size, want[got].size);
      buf.erase(0, consumed);
      ++got;
    }
  }
  EXPECT_EQ(got, std::size(want));
  EXPECT_TRUE(buf.empty());
}

TEST(ReplyScannerTest, ErrorIsStickyUntilReset) {
  ReplyScanner scanner;
  size_t consumed = 0;
  ReplyInfo info;
  EXPECT_EQ(scanner.scan("?\r\n", &consumed, &info), ParseStatus::kError);
  EXPECT_EQ(scanner.error(), ParseError::kBadType);
  EXPECT_EQ(scanner.scan("+OK\r\n", &consumed, &info), ParseStatus::kError);
  EXPECT_EQ(consumed, 0u);
  scanner.reset();
  EXPECT_EQ(scanner.error(), ParseError::kNone);
  EXPECT_EQ(scanner.scan("+OK\r\n", &consumed, &info), ParseStatus::kOk);
  EXPECT_EQ(consumed, 5u);
}

TEST(ReplyScannerTest, ResetForgetsPartialReply) {
  ReplyScanner scanner;
  size_t consumed = 0;
  ReplyInfo info;
  EXPECT_EQ(scanner.scan("*3\r\n:1\r\n$10\r\nab", &consumed, &info), ParseStatus::kIncomplete);
  scanner.reset();
  EXPECT_EQ(scanner.scan(":5\r\n", &consumed, &info), ParseStatus::kOk);
  EXPECT_EQ(info.type, ':');
  EXPECT_EQ(info.value, 5);
  EXPECT_EQ(consumed, 4u);
}

TEST(ReplyScannerTest, EmptyInputIsIncomplete) { expectIncomplete(""); }

}  // namespace
}  // namespace sp::resp
