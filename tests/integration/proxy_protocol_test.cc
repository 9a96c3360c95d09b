// Malformed and unusual client input over a raw TCP socket. A violation gets
// "-ERR Protocol error: ..." and the connection is closed (or just closed, for a truncated frame);
// the proxy process stays up and serves the next client. Inline commands work as in Redis.
#include <gtest/gtest.h>
#include <sys/socket.h>

#include <string>
#include <vector>

#include "integration/harness.h"

namespace sp::test {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

class ProtocolTest : public ::testing::Test {
 protected:
  void SetUp() override { env_ = std::make_unique<Deployment>(2); }

  // Sends `input` on a fresh connection and returns everything until the peer closes; fails the
  // test when the connection is still open after 5 s.
  std::string sendExpectClose(const std::string& input) {
    RawConn conn(env_->port());
    EXPECT_TRUE(conn.sendAll(input));
    std::string out;
    EXPECT_TRUE(conn.readToClose(&out, seconds(5))) << "connection not closed; got: " << out;
    return out;
  }

  void expectProtocolError(const std::string& input) {
    std::string out = sendExpectClose(input);
    EXPECT_EQ(out.rfind("-ERR Protocol error: ", 0), 0u)
        << "input " << printable(input) << " got " << printable(out);
    EXPECT_EQ(out.find("\r\n"), out.size() - 2) << "one error line only: " << printable(out);
    expectServing();
  }

  // The proxy is alive and a new connection gets PONG.
  void expectServing() {
    if (env_->proxy() != nullptr) {
      ASSERT_TRUE(env_->proxy()->process().alive()) << env_->proxy()->process().log();
    }
    Client c(env_->port());
    ASSERT_TRUE(c.ok());
    EXPECT_EQ(c.cmd({"PING"}), "PONG");
  }

  static std::string printable(const std::string& s) {
    std::string out;
    for (unsigned char ch : s.substr(0, 200)) {
      if (ch == '\r') {
        out += "\\r";
      } else if (ch == '\n') {
        out += "\\n";
      } else if (ch < 32 || ch > 126) {
        char buf[8];
        std::snprintf(buf, sizeof buf, "\\x%02x", ch);
        out += buf;
      } else {
        out += static_cast<char>(ch);
      }
    }
    return s.size() > 200 ? out + "..." : out;
  }

  std::unique_ptr<Deployment> env_;
};

TEST_F(ProtocolTest, NegativeBulkLength) { expectProtocolError("*1\r\n$-3\r\n"); }

TEST_F(ProtocolTest, HugeMultibulkLength) { expectProtocolError("*99999999999\r\n"); }

TEST_F(ProtocolTest, HugeBulkLength) {
  expectProtocolError("*1\r\n$999999999999\r\n");
  expectProtocolError("*1\r\n$536870913\r\n");  // one byte over the 512 MB bulk limit
}

TEST_F(ProtocolTest, NonNumericLengths) {
  expectProtocolError("*abc\r\n");
  expectProtocolError("*2\r\n$3\r\nGET\r\n$x1\r\nk\r\n");
  expectProtocolError("*1\r\n$1a\r\nP\r\n");
}

TEST_F(ProtocolTest, GarbageInsideMultibulk) {
  expectProtocolError("*1\r\nPING\r\n");                        // expected '$'
  expectProtocolError("*3\r\n$3\r\nset\r\n$1\r\na\r\n:1\r\n");  // expected '$', got ':'
  expectProtocolError("*\xff\xfegarbage\r\n");                  // invalid multibulk length
}

TEST_F(ProtocolTest, RandomGarbageIsRefusedOrCloses) {
  // Bytes that do not start with '*' are an inline command for Redis; whatever the proxy makes
  // of them, it must answer with errors only (or close) and keep serving.
  std::string garbage;
  uint32_t x = 12345;
  for (int i = 0; i < 4096; ++i) {
    x = x * 1103515245 + 12345;
    garbage += static_cast<char>((x >> 16) & 0xff);
  }
  garbage[0] = '\x01';
  RawConn conn(env_->port());
  conn.sendAll(garbage);
  ::shutdown(conn.fd(), SHUT_WR);
  std::string out;
  EXPECT_TRUE(conn.readToClose(&out, seconds(5)));
  for (size_t pos = 0; pos < out.size();) {
    EXPECT_EQ(out[pos], '-') << "non-error reply to garbage: " << printable(out.substr(pos));
    size_t eol = out.find("\r\n", pos);
    if (eol == std::string::npos) {
      ADD_FAILURE() << "unterminated reply: " << printable(out.substr(pos));
      break;
    }
    pos = eol + 2;
  }
  expectServing();
}

TEST_F(ProtocolTest, EmptyAndNegativeMultibulkAreIgnoredAsInRedis) {
  // redis-server treats *0 and *-N as an empty request: no reply, the connection stays usable.
  RawConn conn(env_->port());
  ASSERT_TRUE(conn.sendAll("*-5\r\n*0\r\n*-1\r\n*1\r\n$4\r\nPING\r\n"));
  EXPECT_EQ(conn.readUntil("\r\n", seconds(5)), "+PONG\r\n");
  ASSERT_TRUE(conn.sendAll("PING\r\n"));
  EXPECT_EQ(conn.readUntil("\r\n", seconds(5)), "+PONG\r\n");
}

TEST_F(ProtocolTest, UnbalancedQuotesInline) {
  expectProtocolError("SET a \"b\r\n");
  expectProtocolError("SET 'a b\r\n");
}

TEST_F(ProtocolTest, OverLongInlineLine) {
  expectProtocolError(std::string(70000, 'x'));  // 64 KB and still no end of line
  if (!env_->direct()) {
    // The proxy's inline limit is 64 KB per line even when the line is complete.
    expectProtocolError("SET a " + std::string(70000, 'x') + "\r\n");
  }
}

TEST_F(ProtocolTest, TooManyArrayElements) {
  if (env_->direct()) {
    GTEST_SKIP() << "redis-server allows more than 1M arguments";
  }
  expectProtocolError("*1048577\r\n");
}

TEST_F(ProtocolTest, TruncatedFrameThenHalfCloseJustCloses) {
  for (const std::string& partial :
       {std::string("*3\r\n$3\r\nSET\r\n$1\r\na\r\n$5\r\nab"), std::string("*2\r\n$3\r\nGET\r\n"),
        std::string("*2\r"), std::string("*1\r\n$4\r\nPI")}) {
    RawConn conn(env_->port());
    ASSERT_TRUE(conn.sendAll(partial));
    ::shutdown(conn.fd(), SHUT_WR);
    std::string out;
    EXPECT_TRUE(conn.readToClose(&out, seconds(5)));
    EXPECT_EQ(out, "") << "reply to a truncated frame";
  }
  expectServing();
}

TEST_F(ProtocolTest, TruncatedFrameThenCloseKeepsServing) {
  for (int i = 0; i < 20; ++i) {
    RawConn conn(env_->port());
    std::string frame = "*3\r\n$3\r\nSET\r\n$4\r\nkey" + std::to_string(i % 10) + "\r\n$100\r\n";
    frame += std::string(static_cast<size_t>(i * 4), 'v');  // cut inside the value
    ASSERT_TRUE(conn.sendAll(frame));
    conn.close();
  }
  expectServing();
  Client c(env_->port());
  EXPECT_EQ(c.cmd({"EXISTS", "key0", "key1"}), "(integer) 0") << "a truncated SET was executed";
}

TEST_F(ProtocolTest, ErrorAfterValidRequestsAnswersThemFirst) {
  RawConn conn(env_->port());
  ASSERT_TRUE(
      conn.sendAll("*3\r\n$3\r\nSET\r\n$2\r\npe\r\n$1\r\n1\r\n*2\r\n$3\r\nGET\r\n$2\r\npe"
                   "\r\n*1\r\n$-3\r\n"));
  std::string out;
  EXPECT_TRUE(conn.readToClose(&out, seconds(5)));
  EXPECT_EQ(out, "+OK\r\n$1\r\n1\r\n-ERR Protocol error: invalid bulk length\r\n");
  expectServing();
}

TEST_F(ProtocolTest, InlineCommands) {
  RawConn conn(env_->port());
  ASSERT_TRUE(conn.sendAll("PING\r\n"));
  EXPECT_EQ(conn.readUntil("\r\n", seconds(5)), "+PONG\r\n");
  ASSERT_TRUE(conn.sendAll("SET a b\r\n"));
  EXPECT_EQ(conn.readUntil("\r\n", seconds(5)), "+OK\r\n");
  ASSERT_TRUE(conn.sendAll("GET a\r\n"));
  EXPECT_EQ(conn.readUntil("b\r\n", seconds(5)), "$1\r\nb\r\n");
  // Quoting, a bare LF, empty lines, and inline mixed with multibulk in one write.
  ASSERT_TRUE(
      conn.sendAll("SET \"x y\" 'a b'\r\n\r\nGET \"x y\"\nMGET a \"x y\" nokey\r\n"
                   "*2\r\n$3\r\nGET\r\n$1\r\na\r\n"));
  const std::string expected =
      "+OK\r\n$3\r\na b\r\n*3\r\n$1\r\nb\r\n$3\r\na b\r\n$-1\r\n$1\r\nb\r\n";
  EXPECT_EQ(conn.readUntil(expected, seconds(5)), expected);
  ASSERT_TRUE(conn.sendAll("SET k \"\\x41\\n\"\r\nGET k\r\n"));
  EXPECT_EQ(conn.readUntil("A\n\r\n", seconds(5)), "+OK\r\n$2\r\nA\n\r\n");
}

}  // namespace
}  // namespace sp::test
