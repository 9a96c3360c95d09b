// Tests for RequestParser (and the names/messages of ParseError). Every vector is parsed whole,
// byte by byte (one more byte per call into a growing buffer, consumed frames erased from its
// front, the bytes copied to a fresh allocation before every call as a moved buffer would be) and
// split at every point; all three must yield the same frames and the same final status.
#include "resp/request_parser.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <new>
#include <string>
#include <string_view>
#include <vector>

#include "resp/encoder.h"

// Counts operator new calls made while g_count_allocs is set (for the no-allocation test). GCC
// cannot see that the replaced new and delete pair up through malloc/free.
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
namespace {
thread_local bool g_count_allocs = false;
thread_local size_t g_allocs = 0;
}  // namespace

void* operator new(size_t size) {
  if (g_count_allocs) {
    ++g_allocs;
  }
  if (void* p = std::malloc(size == 0 ? 1 : size)) {
    return p;
  }
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, size_t) noexcept { std::free(p); }

namespace sp::resp {
namespace {

using namespace std::string_literals;
using Args = std::vector<std::string>;

struct Frame {
  Args args;
  bool is_inline = false;
  bool operator==(const Frame&) const = default;
};

struct Outcome {
  std::vector<Frame> frames;
  ParseStatus status = ParseStatus::kIncomplete;  // of the last call
  ParseError error = ParseError::kNone;
  size_t leftover = 0;  // bytes not consumed at the end
  bool operator==(const Outcome&) const = default;
};

std::ostream& operator<<(std::ostream& os, const Outcome& o) {
  os << "{frames=[";
  for (const Frame& f : o.frames) {
    os << (f.is_inline ? "inline" : "") << testing::PrintToString(f.args) << " ";
  }
  return os << "] status=" << static_cast<int>(o.status) << " error=" << errorName(o.error)
            << " leftover=" << o.leftover << "}";
}

// Feeds the chunks one after another to one parser, as reads from a socket.
Outcome feed(const std::vector<std::string_view>& chunks, ParserLimits limits) {
  RequestParser parser(limits);
  RequestFrame frame;
  Outcome o;
  std::string buffer;
  for (const std::string_view chunk : chunks) {
    buffer.append(chunk);
    for (;;) {
      const std::string moved(buffer);
      size_t consumed = 12345;
      o.status = parser.parse(moved, &consumed, &frame);
      o.error = parser.error();
      if (o.status != ParseStatus::kOk) {
        EXPECT_EQ(consumed, 0u);
        break;
      }
      EXPECT_GT(consumed, 0u);
      EXPECT_LE(consumed, moved.size());
      EXPECT_EQ(parser.bytesNeeded(), 0u);
      Frame f{Args(frame.args.begin(), frame.args.end()), frame.is_inline};
      o.frames.push_back(std::move(f));
      buffer.erase(0, consumed);
    }
    if (o.status == ParseStatus::kError) {
      break;
    }
  }
  o.leftover = buffer.size();
  return o;
}

Outcome parseAllWays(std::string_view input, ParserLimits limits = {}) {
  const Outcome whole = feed({input}, limits);
  std::vector<std::string_view> bytes;
  for (size_t i = 0; i < input.size(); ++i) {
    bytes.push_back(input.substr(i, 1));
  }
  const Outcome slow = feed(bytes, limits);
  EXPECT_EQ(slow.frames, whole.frames) << "byte by byte";
  EXPECT_EQ(slow.status, whole.status) << "byte by byte";
  EXPECT_EQ(slow.error, whole.error) << "byte by byte";
  if (whole.status != ParseStatus::kError) {
    EXPECT_EQ(slow.leftover, whole.leftover) << "byte by byte";
  }
  for (size_t split = 0; split < input.size(); ++split) {
    const Outcome two = feed({input.substr(0, split), input.substr(split)}, limits);
    EXPECT_EQ(two.frames, whole.frames) << "split at " << split;
    EXPECT_EQ(two.status, whole.status) << "split at " << split;
    EXPECT_EQ(two.error, whole.error) << "split at " << split;
  }
  return whole;
}

// The input is exactly the given frames (multibulk unless marked inline).
void expectFrames(std::string_view input, const std::vector<Frame>& want,
                  ParserLimits limits = {}) {
  SCOPED_TRACE(testing::Message() << "input: " << testing::PrintToString(std::string(input)));
  const Outcome o = parseAllWays(input, limits);
  EXPECT_EQ(o.frames, want) << o;
  EXPECT_EQ(o.status, ParseStatus::kIncomplete) << o;
  EXPECT_EQ(o.error, ParseError::kNone) << o;
  EXPECT_EQ(o.leftover, 0u) << o;
}

void expectArgs(std::string_view input, const Args& args, ParserLimits limits = {}) {
  expectFrames(input, {Frame{args, false}}, limits);
}

void expectInline(std::string_view input, const Args& args, ParserLimits limits = {}) {
  expectFrames(input, {Frame{args, true}}, limits);
}

// The input yields `before` frames, then fails with `error`.
void expectError(std::string_view input, ParseError error, ParserLimits limits = {},
                 const std::vector<Frame>& before = {}) {
  SCOPED_TRACE(testing::Message() << "input: " << testing::PrintToString(std::string(input)));
  const Outcome o = parseAllWays(input, limits);
  EXPECT_EQ(o.frames, before) << o;
  EXPECT_EQ(o.status, ParseStatus::kError) << o;
  EXPECT_EQ(o.error, error) << o;
}

void expectIncomplete(std::string_view input, ParserLimits limits = {}) {
  SCOPED_TRACE(testing::Message() << "input: " << testing::PrintToString(std::string(input)));
  const Outcome o = parseAllWays(input, limits);
  EXPECT_TRUE(o.frames.empty()) << o;
  EXPECT_EQ(o.status, ParseStatus::kIncomplete) << o;
  EXPECT_EQ(o.leftover, input.size()) << o;
}

std::string command(const Args& args) {
  std::string out;
  appendCommand(out, args);
  return out;
}

TEST(RequestParserTest, Multibulk) {
  expectArgs("*1\r\n$4\r\nPING\r\n", {"PING"});
  expectArgs("*2\r\n$3\r\nGET\r\n$3\r\nfoo\r\n", {"GET", "foo"});
  expectArgs("*3\r\n$3\r\nset\r\n$0\r\n\r\n$0\r\n\r\n", {"set", "", ""});
  const Args set = {"SET", "key:000000000001", std::string(256, 'v')};
  expectArgs(command(set), set);
  expectIncomplete("*");
  expectIncomplete("*3\r");
  expectIncomplete("*3\r\n$3\r\nSET\r\n$3\r\nk");
  expectIncomplete("*2\r\n$3\r\nGET\r\n$3\r\nfoo\r");
}

TEST(RequestParserTest, BinarySafePayloads) {
  const Args args = {"SET", "k\r\n", "\r\n\0\r\n$3\r\n*1\r\n"s, std::string(1, '\0')};
  expectArgs(command(args), args);
  std::string all;
  for (int c = 0; c < 256; ++c) {
    all.push_back(static_cast<char>(c));
  }
  expectArgs(command({"SET", all, all}), {"SET", all, all});
}

TEST(RequestParserTest, EmptyRequests) {
  expectArgs("*0\r\n", {});
  expectArgs("*-1\r\n", {});
  expectArgs("*-5\r\n", {});  // redis-server treats any count <= 0 as an empty request
  expectInline("\r\n", {});
  expectInline("\n", {});
  expectInline("   \t \r\n", {});
}

TEST(RequestParserTest, PipelinedFramesBackToBack) {
  const std::string stream = command({"SET", "a", "1"}) + "*0\r\n" + command({"GET", "a"}) +
                             "PING\r\n" + command({"DEL", "a", "b", "c"}) + "\n" + "ECHO hi\n";
  expectFrames(stream, {{{"SET", "a", "1"}, false},
                        {{}, false},
                        {{"GET", "a"}, false},
                        {{"PING"}, true},
                        {{"DEL", "a", "b", "c"}, false},
                        {{}, true},
                        {{"ECHO", "hi"}, true}});
  // A trailing partial frame stays unconsumed.
  const Outcome o = parseAllWays(command({"GET", "a"}) + "*2\r\n$3\r\nGET\r\n");
  EXPECT_EQ(o.frames.size(), 1u);
  EXPECT_EQ(o.status, ParseStatus::kIncomplete);
  EXPECT_EQ(o.leftover, 13u);
  // An error after good frames: the good ones are returned first.
  expectError(command({"GET", "a"}) + "*1\r\n:1\r\n", ParseError::kExpectedBulk, {},
              {{{"GET", "a"}, false}});
}

TEST(RequestParserTest, BadArrayLength) {
  for (const char* in : {"*x\r\n", "*\r\n", "*01\r\n", "*-0\r\n", "*1 \r\n", "*+1\r\n", "* 1\r\n",
                         "*1x\r\n", "*-\r\n", "*-99999999999999999999\r\n", "*1\r\r\n"}) {
    expectError(in, ParseError::kBadArrayLen);
  }
}

TEST(RequestParserTest, ArrayTooLong) {
  ParserLimits limits;
  limits.max_array_len = 3;
  expectArgs("*3\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\nc\r\n", {"a", "b", "c"}, limits);
  expectError("*4\r\n", ParseError::kArrayTooLong, limits);
  expectError("*4294967296\r\n", ParseError::kArrayTooLong);
  expectError("*9223372036854775807\r\n", ParseError::kArrayTooLong);
  expectError("*99999999999999999999\r\n", ParseError::kArrayTooLong);
  // A count below the limit is never reserved up front: the frame just waits for its arguments.
  expectIncomplete("*1048576\r\n$1\r\na\r\n");
}

TEST(RequestParserTest, BadBulkLength) {
  for (const char* in : {"*1\r\n$-1\r\n", "*1\r\n$-2\r\n", "*1\r\n$x\r\n", "*1\r\n$\r\n",
                         "*1\r\n$01\r\na\r\n", "*1\r\n$-0\r\n", "*1\r\n$+1\r\na\r\n",
                         "*1\r\n$1 \r\na\r\n", "*1\r\n$ 1\r\na\r\n", "*2\r\n$1\r\na\r\n$1x\r\n"}) {
    expectError(in, ParseError::kBadBulkLen);
  }
}

TEST(RequestParserTest, BulkTooLong) {
  ParserLimits limits;
  limits.max_bulk_len = 5;
  expectArgs("*1\r\n$5\r\nhello\r\n", {"hello"}, limits);
  expectError("*1\r\n$6\r\n", ParseError::kBulkTooLong, limits);
  expectError("*1\r\n$536870913\r\n", ParseError::kBulkTooLong);  // default 512 MB
  expectError("*1\r\n$99999999999999999999\r\n", ParseError::kBulkTooLong);
  limits.max_bulk_len = 0;
  expectArgs("*1\r\n$0\r\n\r\n", {""}, limits);
  expectError("*1\r\n$1\r\n", ParseError::kBulkTooLong, limits);
}

TEST(RequestParserTest, ExpectedBulk) {
  for (const char* in : {"*1\r\n:1\r\n", "*1\r\n+OK\r\n", "*1\r\n*1\r\n", "*1\r\nPING\r\n",
                         "*2\r\n$1\r\na\r\nb\r\n", "*1\r\n\r\n"}) {
    expectError(in, ParseError::kExpectedBulk);
  }
}

TEST(RequestParserTest, BadCrlf) {
  for (const char* in :
       {"*1\n", "*1\n$1\r\na\r\n", "*1\r\n$1\na\r\n", "*1\r\n$1\r\nab\r\n", "*1\r\n$1\r\na\n\r",
        "*1\r\n$1\r\na\rx", "*1\r\n$3\r\nabc\nX", "*2\r\n$1\r\na\r\n$1\r\nbc"}) {
    expectError(in, ParseError::kBadCrlf);
  }
}

TEST(RequestParserTest, InlineTooLong) {
  ParserLimits limits;
  limits.max_inline_len = 8;
  expectInline("GET abcd\n", {"GET", "abcd"}, limits);  // 8 bytes before the LF
  expectInline("GET abc\r\n", {"GET", "abc"}, limits);  // the CR counts
  expectError("GET abcde\n", ParseError::kInlineTooLong, limits);
  expectError("GET abcd\r\n", ParseError::kInlineTooLong, limits);
  expectError("GET abcdefghijkl", ParseError::kInlineTooLong, limits);
  expectIncomplete("GET abcd", limits);
  // Header lines obey the same limit.
  expectError("*1        ", ParseError::kInlineTooLong, limits);
  expectError("*1\r\n$1       ", ParseError::kInlineTooLong, limits);
  expectIncomplete("*1\r\n$1      ", limits);
  expectError("*1\r\n$0000001\r\n", ParseError::kInlineTooLong, limits);
  expectError("*1\r\n$000001\r\n", ParseError::kBadBulkLen, limits);
}

TEST(RequestParserTest, InlineCommands) {
  expectInline("PING\r\n", {"PING"});
  expectInline("PING\n", {"PING"});
  expectInline("set  a\tb \r\n", {"set", "a", "b"});
  expectInline("  GET   key  \n", {"GET", "key"});
  expectInline("GET a\r\r\n", {"GET", "a"});  // only one CR is stripped; the other separates
  expectInline("a\vb\n", {"a\vb"});           // \v ends no word but is skipped between words
  expectInline("\va \fb\n", {"a", "b"});
  expectInline("GET a\0b c\r\n"s, {"GET", "a"});  // redis-server splits the line as a C string
  expectInline("$3 x\n", {"$3", "x"});            // only '*' starts a multibulk request
  expectIncomplete("PING");
  expectIncomplete("PING\r");
}

TEST(RequestParserTest, InlineQuoting) {
  expectInline("SET \"a b\" 'c d'\n", {"SET", "a b", "c d"});
  expectInline("ECHO \"\\n\\r\\t\\b\\a\\\\\\\"\\q\"\n", {"ECHO", "\n\r\t\b\a\\\"q"});
  expectInline("ECHO \"\\x41\\x6a\\x7A\\xzz\\x4\"\n", {"ECHO", "Ajzxzzx4"});
  expectInline("ECHO \"\\x00\"\n", {"ECHO", std::string(1, '\0')});
  expectInline("ECHO 'it\\'s' 'a\\nb' 'c\"d'\n", {"ECHO", "it's", "a\\nb", "c\"d"});
  expectInline("ECHO \"it's\"\n", {"ECHO", "it's"});
  expectInline("ECHO \"\" ''\n", {"ECHO", "", ""});
  expectInline("ECHO a\"b c\"\n", {"ECHO", "ab c"});  // a quote may start inside a word
  expectInline("ECHO \"a\"\tb\n", {"ECHO", "a", "b"});
  expectInline("ECHO \"a\"\r\n", {"ECHO", "a"});
  expectInline("ECHO \"a\"\v\n", {"ECHO", "a"});
  expectInline("\"x\" \"y\" \"z\" plain\n", {"x", "y", "z", "plain"});
}

TEST(RequestParserTest, UnbalancedQuotes) {
  for (const char* in : {"GET \"abc\r\n", "GET 'abc\n", "GET \"a\"b\n", "SET 'a'b c\n",
                         "GET \"abc\\\"\n", "GET \"\\\n", "GET '\\'\n"}) {
    expectError(in, ParseError::kUnbalancedQuotes);
  }
  expectError("ECHO \"a\0\"\n"s, ParseError::kUnbalancedQuotes);
}

TEST(RequestParserTest, QuotedArgumentsSurviveLaterOnes) {
  // Several quoted arguments in one line: earlier views into scratch stay valid.
  RequestParser parser;
  RequestFrame frame;
  frame.scratch = "x";  // a small scratch left over from an earlier line must be grown
  const std::string line =
      "MSET \"k 1\" 'v 1' \"k\\x202\" plain \"" + std::string(500, 'z') + "\"\n";
  size_t consumed = 0;
  ASSERT_EQ(parser.parse(line, &consumed, &frame), ParseStatus::kOk);
  ASSERT_EQ(frame.args.size(), 6u);
  EXPECT_EQ(frame.args[1], "k 1");
  EXPECT_EQ(frame.args[2], "v 1");
  EXPECT_EQ(frame.args[3], "k 2");
  EXPECT_EQ(frame.args[4], "plain");
  EXPECT_EQ(frame.args[5], std::string(500, 'z'));
  EXPECT_TRUE(frame.is_inline);
}

TEST(RequestParserTest, BytesNeededForPendingBulk) {
  RequestParser parser;
  RequestFrame frame;
  size_t consumed = 0;
  std::string head = "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$67108864\r\n";
  EXPECT_EQ(parser.parse("*3\r\n$3\r\nSE", &consumed, &frame), ParseStatus::kIncomplete);
  EXPECT_EQ(parser.bytesNeeded(), 4u + 4 + 3 + 2);
  EXPECT_EQ(parser.parse("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$671", &consumed, &frame),
            ParseStatus::kIncomplete);
  EXPECT_EQ(parser.bytesNeeded(), 0u);  // the size of the header is not known yet
  EXPECT_EQ(parser.parse(head + "abc", &consumed, &frame), ParseStatus::kIncomplete);
  EXPECT_EQ(parser.bytesNeeded(), head.size() + (64u << 20) + 2);

  std::string full = head + std::string(64u << 20, 'v') + "\r\n";
  for (size_t have = head.size() + 3; have < full.size(); have += 1u << 16) {
    ASSERT_EQ(parser.parse(std::string_view(full).substr(0, have), &consumed, &frame),
              ParseStatus::kIncomplete);
    ASSERT_EQ(parser.bytesNeeded(), full.size());
  }
  ASSERT_EQ(parser.parse(full, &consumed, &frame), ParseStatus::kOk);
  EXPECT_EQ(consumed, full.size());
  EXPECT_EQ(parser.bytesNeeded(), 0u);
  ASSERT_EQ(frame.args.size(), 3u);
  EXPECT_EQ(frame.args[2].size(), 64u << 20);
  EXPECT_EQ(frame.args[2].data(), full.data() + head.size());  // a view, not a copy
}

TEST(RequestParserTest, ManyArgumentsInManyReads) {
  Args args(100000, "");
  for (size_t i = 0; i < args.size(); ++i) {
    args[i] = "arg" + std::to_string(i);
  }
  const std::string req = command(args);
  RequestParser parser;
  RequestFrame frame;
  size_t consumed = 0;
  std::string buffer;
  size_t calls = 0;
  for (size_t off = 0; off < req.size(); off += 4000) {
    buffer.append(req, off, 4000);
    const std::string moved(buffer);
    const ParseStatus st = parser.parse(moved, &consumed, &frame);
    ++calls;
    if (off + 4000 < req.size()) {
      ASSERT_EQ(st, ParseStatus::kIncomplete);
      continue;
    }
    ASSERT_EQ(st, ParseStatus::kOk);
    EXPECT_EQ(consumed, req.size());
    ASSERT_EQ(frame.args.size(), args.size());
    for (size_t i = 0; i < args.size(); ++i) {
      ASSERT_EQ(frame.args[i], args[i]);
    }
  }
  EXPECT_GT(calls, 100u);
}

TEST(RequestParserTest, NoAllocationOnceWarm) {
  const std::string one = command({"SET", "key:000000000001", std::string(256, 'v')});
  std::string stream;
  for (int i = 0; i < 64; ++i) {
    stream += one;
  }
  stream += "GET key\r\n";
  RequestParser parser;
  RequestFrame frame;
  auto run = [&] {
    size_t off = 0;
    size_t consumed = 0;
    while (parser.parse(std::string_view(stream).substr(off), &consumed, &frame) ==
           ParseStatus::kOk) {
      off += consumed;
    }
    // And one frame split over two reads.
    EXPECT_EQ(parser.parse(std::string_view(one).substr(0, 30), &consumed, &frame),
              ParseStatus::kIncomplete);
    EXPECT_EQ(parser.parse(one, &consumed, &frame), ParseStatus::kOk);
    return off;
  };
  EXPECT_EQ(run(), stream.size());  // warm-up
  g_allocs = 0;
  g_count_allocs = true;
  const size_t off = run();
  g_count_allocs = false;
  EXPECT_EQ(off, stream.size());
  EXPECT_EQ(g_allocs, 0u);
}

TEST(RequestParserTest, ErrorIsStickyUntilReset) {
  RequestParser parser;
  RequestFrame frame;
  size_t consumed = 0;
  EXPECT_EQ(parser.parse("*1\r\n:1\r\n", &consumed, &frame), ParseStatus::kError);
  EXPECT_EQ(parser.error(), ParseError::kExpectedBulk);
  EXPECT_EQ(parser.parse("PING\r\n", &consumed, &frame), ParseStatus::kError);
  EXPECT_EQ(consumed, 0u);
  parser.reset();
  EXPECT_EQ(parser.error(), ParseError::kNone);
  ASSERT_EQ(parser.parse("PING\r\n", &consumed, &frame), ParseStatus::kOk);
  EXPECT_EQ(consumed, 6u);
}

TEST(RequestParserTest, ResetForgetsPartialFrame) {
  RequestParser parser;
  RequestFrame frame;
  size_t consumed = 0;
  EXPECT_EQ(parser.parse("*3\r\n$3\r\nSET\r\n$1\r\nk", &consumed, &frame),
            ParseStatus::kIncomplete);
  parser.reset();
  EXPECT_EQ(parser.bytesNeeded(), 0u);
  ASSERT_EQ(parser.parse("*1\r\n$4\r\nPING\r\n", &consumed, &frame), ParseStatus::kOk);
  ASSERT_EQ(frame.args.size(), 1u);
  EXPECT_EQ(frame.args[0], "PING");
}

TEST(ParseStatusTest, EveryErrorHasANameAndAMessage) {
  const struct {
    ParseError error;
    const char* name;
    const char* message;
  } want[] = {
      {ParseError::kNone, "none", "no error"},
      {ParseError::kBadType, "bad_type", "invalid reply type byte"},
      {ParseError::kBadArrayLen, "bad_array_len", "invalid multibulk length"},
      {ParseError::kArrayTooLong, "array_too_long", "invalid multibulk length"},
      {ParseError::kBadBulkLen, "bad_bulk_len", "invalid bulk length"},
      {ParseError::kBulkTooLong, "bulk_too_long", "invalid bulk length"},
      {ParseError::kExpectedBulk, "expected_bulk", "expected '$'"},
      {ParseError::kBadCrlf, "bad_crlf", "expected CRLF"},
      {ParseError::kInlineTooLong, "inline_too_long", "too big inline request"},
      {ParseError::kUnbalancedQuotes, "unbalanced_quotes", "unbalanced quotes in request"},
      {ParseError::kBadInteger, "bad_integer", "invalid integer value"},
      {ParseError::kTooDeep, "too_deep", "reply nesting too deep"},
  };
  for (const auto& w : want) {
    EXPECT_STREQ(errorName(w.error), w.name);
    EXPECT_STREQ(errorMessage(w.error), w.message);
  }
  EXPECT_EQ(static_cast<int>(ParseError::kTooDeep) + 1, static_cast<int>(std::size(want)));
}

}  // namespace
}  // namespace sp::resp
