// toResp3: the proxy's own RESP2 replies re-encoded as redis-server 7 sends them to RESP3 clients.
#include "resp/resp3.h"

#include <gtest/gtest.h>

namespace sp::resp {
namespace {

TEST(Resp3Test, NullsBecomeTheNullTypeAtEveryDepth) {
  EXPECT_EQ(toResp3("$-1\r\n"), "_\r\n");
  EXPECT_EQ(toResp3("*-1\r\n"), "_\r\n");
  EXPECT_EQ(toResp3("*3\r\n$1\r\na\r\n$-1\r\n*2\r\n:1\r\n$-1\r\n"),
            "*3\r\n$1\r\na\r\n_\r\n*2\r\n:1\r\n_\r\n");
}

TEST(Resp3Test, EveryOtherTypeIsKept) {
  for (const char* reply : {"+OK\r\n", "-ERR x\r\n", ":42\r\n", "$0\r\n\r\n", "$3\r\na\r\n\r\n",
                            "*0\r\n", ",1.5\r\n", "#t\r\n", "(123\r\n", "_\r\n", "~1\r\n:1\r\n",
                            "%1\r\n$1\r\nk\r\n$1\r\nv\r\n", "=7\r\ntxt:abc\r\n", "!3\r\nERR\r\n",
                            ">2\r\n$1\r\na\r\n:1\r\n", "|1\r\n$1\r\na\r\n:1\r\n:2\r\n"}) {
    EXPECT_EQ(toResp3(reply), reply) << reply;
  }
}

TEST(Resp3Test, ShapesApplyToEachTopLevelReplyOnly) {
  // CONFIG GET, HELLO: pairs become a map; a nested array stays an array.
  EXPECT_EQ(toResp3("*4\r\n$1\r\na\r\n$1\r\n1\r\n$1\r\nb\r\n*0\r\n", Resp3Shape::kMap),
            "%2\r\n$1\r\na\r\n$1\r\n1\r\n$1\r\nb\r\n*0\r\n");
  // INFO, CLIENT LIST: text becomes a verbatim string of format txt.
  EXPECT_EQ(toResp3("$5\r\na\r\nbc\r\n", Resp3Shape::kVerbatim), "=9\r\ntxt:a\r\nbc\r\n");
  // Pub/sub confirmations (several in one reply) become pushes, their nil name the null type.
  EXPECT_EQ(toResp3("*3\r\n$11\r\nunsubscribe\r\n$-1\r\n:0\r\n*3\r\n$9\r\nsubscribe\r\n$1\r\n"
                    "c\r\n:1\r\n",
                    Resp3Shape::kPush),
            ">3\r\n$11\r\nunsubscribe\r\n_\r\n:0\r\n>3\r\n$9\r\nsubscribe\r\n$1\r\nc\r\n:1\r\n");
  // An odd array is no map: left an array.
  EXPECT_EQ(toResp3("*1\r\n:1\r\n", Resp3Shape::kMap), "*1\r\n:1\r\n");
}

TEST(Resp3Test, ConvertingTwiceChangesNothing) {
  const std::string once = toResp3("*2\r\n$1\r\nk\r\n$-1\r\n", Resp3Shape::kMap);
  EXPECT_EQ(toResp3(once, Resp3Shape::kMap), once);
  const std::string text = toResp3("$2\r\nhi\r\n", Resp3Shape::kVerbatim);
  EXPECT_EQ(toResp3(text, Resp3Shape::kVerbatim), text);
}

TEST(Resp3Test, WhatCannotBeWalkedIsReturnedUnchanged) {
  for (const char* bad : {"$5\r\nab\r\n", "*2\r\n:1\r\n", "?x\r\n", "$x\r\n", "*1\r\n", "+OK"}) {
    EXPECT_EQ(toResp3(bad), bad) << bad;
  }
  std::string deep;
  for (int i = 0; i < 100; ++i) {
    deep += "*1\r\n";
  }
  deep += ":1\r\n";
  EXPECT_EQ(toResp3(deep), deep);
}

}  // namespace
}  // namespace sp::resp
