// Error texts for malformed requests, and a reply at the edge, byte for byte against a
// redis-server of its own: a bad numkeys (EVAL, EVALSHA, FCALL, SINTERCARD, ZUNION and friends,
// LMPOP, ZMPOP and their blocking forms), an unbalanced XREAD, LMPOP's missing direction, and the
// same inside MULTI, where redis-server queues them and answers at EXEC; a script's reply nested
// 8,000 deep. Requests of these commands whose keys cannot be read go to a shard for its own error
// (session_checks.h); none of them may run.
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "integration/harness.h"

namespace sp::test {
namespace {

using namespace std::chrono_literals;

std::vector<std::string> split(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> out;
  for (std::string word; in >> word;) {
    out.push_back(word);
  }
  return out;
}

// One request and its whole reply: every reply here is a single line or a short array of them.
std::string exchange(RawConn& conn, const std::string& line) {
  EXPECT_TRUE(conn.sendAll(encodeCommand(split(line))));
  std::string got;
  // Ends with CRLF and, for an array, holds as many lines as it announces (errors and integers
  // only, one line each).
  while (conn.readSome(&got, 5000ms) == RawConn::Read::kData) {
    if (got.size() < 2 || !got.ends_with("\r\n")) {
      continue;
    }
    if (got[0] != '*') {
      break;
    }
    const size_t lines = static_cast<size_t>(std::count(got.begin(), got.end(), '\n'));
    if (lines >= 1 + std::stoul(got.substr(1))) {
      break;
    }
  }
  return got;
}

class ErrorParityTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (directMode()) {
      GTEST_SKIP() << "compares the proxy with a redis-server of its own";
    }
    env_ = std::make_unique<Deployment>(3, 2);
    ref_ = std::make_unique<RedisServer>();
  }

  void expectSameReplies(const std::vector<std::string>& lines) {
    RawConn proxy(env_->port());
    RawConn ref(ref_->port());
    for (const std::string& line : lines) {
      EXPECT_EQ(exchange(proxy, line), exchange(ref, line)) << line;
    }
  }

  std::unique_ptr<Deployment> env_;
  std::unique_ptr<RedisServer> ref_;
};

const std::vector<std::string> kMalformed = {"EVAL x -1",
                                             "EVAL x abc",
                                             "EVAL x 3 a",
                                             "EVAL x 1",
                                             "EVAL_RO x 5 a",
                                             "EVALSHA x -1",
                                             "EVALSHA x 2 a",
                                             "FCALL f -1",
                                             "FCALL f 2 a",
                                             "FCALL f abc",
                                             "FCALL_RO f 2 a",
                                             "SINTERCARD -1 a",
                                             "SINTERCARD 3 a b",
                                             "SINTERCARD abc a",
                                             "SINTERCARD 0 a",
                                             "ZUNION -1 a",
                                             "ZUNION 3 a b",
                                             "ZUNION abc a",
                                             "ZINTER 2 a",
                                             "ZDIFF 3 a b",
                                             "ZUNIONSTORE d 3 a b",
                                             "ZUNIONSTORE d -1 a",
                                             "ZINTERSTORE d 2 a",
                                             "ZINTERCARD 2 a",
                                             "LMPOP 2 mylist LEFT",
                                             "LMPOP -1 a LEFT",
                                             "LMPOP abc a LEFT",
                                             "LMPOP 2 a b MIDDLE",
                                             "LMPOP 2 a b",
                                             "BLMPOP 0 2 mylist LEFT",
                                             "ZMPOP 2 a MIN",
                                             "BZMPOP 0 2 a MIN",
                                             "XREAD COUNT 1 STREAMS a",
                                             "XREAD STREAMS a b c"};

TEST_F(ErrorParityTest, MalformedNumkeysGetRedisServersErrors) {
  expectSameReplies(kMalformed);
  // Nothing ran: no key was written anywhere.
  Client c(env_->port());
  EXPECT_EQ(c.cmd({"DBSIZE"}), "(integer) 0");
}

// A script's reply nested about 8,000 levels deep (down to "reached lua stack limit") is a reply
// like any other: passed through whole, the shard never taken for broken.
TEST_F(ErrorParityTest, DeeplyNestedRepliesPassThrough) {
  const std::string script =
      "local t = {} local c = t for i = 1, 8000 do local n = {} c[1] = n c = n end return t";
  RawConn proxy(env_->port());
  RawConn ref(ref_->port());
  std::string replies[2];
  RawConn* conns[2] = {&proxy, &ref};
  for (int i = 0; i < 2; ++i) {
    ASSERT_TRUE(conns[i]->sendAll(encodeCommand({"EVAL", script, "0"})));
    replies[i] = conns[i]->readUntil("stack limit\r\n", 10000ms);
  }
  EXPECT_GT(replies[1].size(), 8000u * 4);
  EXPECT_EQ(replies[0], replies[1]);
  EXPECT_EQ(exchange(proxy, "PING"), "+PONG\r\n");
  Client c(env_->port());
  EXPECT_EQ(c.cmd({"SET", "after-deep", "1"}), "OK");  // every shard still up
}

TEST_F(ErrorParityTest, InsideMultiTheyFailAtExecAsOnRedisServer) {
  std::vector<std::string> lines = {
      "MULTI",        "SET {t}a 1", "EVAL x -1", "LMPOP 2 mylist LEFT",
      "ZUNION 3 a b", "INCR {t}a",  "EXEC"};
  expectSameReplies(lines);
  Client c(env_->port());
  EXPECT_EQ(c.cmd({"GET", "{t}a"}), "2");
}

}  // namespace
}  // namespace sp::test
