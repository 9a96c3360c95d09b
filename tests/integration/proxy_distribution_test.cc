// Key distribution: with 16 shards and the default even slot split, 100,000 random keys set
// through the proxy spread so that every shard holds 5-7.5% of them (6.25% expected), counted
// with DBSIZE on each redis-server directly.
#include <gtest/gtest.h>
#include <hiredis/hiredis.h>

#include <random>
#include <string>
#include <vector>

#include "integration/harness.h"

namespace sp::test {
namespace {

TEST(DistributionTest, SixteenShardsHoldEvenShares) {
  Deployment env(16);
  if (env.direct()) {
    GTEST_SKIP() << "needs the proxy";
  }
  constexpr int kKeys = 100000;
  constexpr int kBatch = 1000;
  Client client(env.port());
  ASSERT_TRUE(client.ok());
  std::mt19937_64 rng(20240601);
  const char* alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789:_-";
  for (int base = 0; base < kKeys; base += kBatch) {
    for (int i = base; i < base + kBatch; ++i) {
      std::string key;
      const size_t len = 4 + rng() % 20;
      for (size_t j = 0; j < len; ++j) {
        key += alphabet[rng() % 64];
      }
      key += "#" + std::to_string(i);  // unique
      redisAppendCommand(client.ctx(), "SET %b 1", key.data(), key.size());
    }
    for (int i = 0; i < kBatch; ++i) {
      void* reply = nullptr;
      ASSERT_EQ(redisGetReply(client.ctx(), &reply), REDIS_OK) << client.ctx()->errstr;
      ASSERT_EQ(render(static_cast<redisReply*>(reply)), "OK");
      freeReplyObject(reply);
    }
  }
  long total = 0;
  for (size_t s = 0; s < env.shards().size(); ++s) {
    Client direct(env.shards()[s]->port());
    std::string r = direct.cmd({"DBSIZE"});
    ASSERT_EQ(r.rfind("(integer) ", 0), 0u) << r;
    const long n = std::stol(r.substr(10));
    total += n;
    EXPECT_GE(n, kKeys * 5 / 100) << "shard " << s;
    EXPECT_LE(n, kKeys * 75 / 1000) << "shard " << s;
  }
  EXPECT_EQ(total, kKeys);
}

}  // namespace
}  // namespace sp::test
