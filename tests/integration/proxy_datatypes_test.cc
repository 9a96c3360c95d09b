// Per-data-type commands through the real proxy in front of 2 and 16 real redis-server shards:
// strings, hashes, lists, sets, sorted sets and expiry. Keys are spread so that every test touches
// several shards; same-slot multi-key commands use hash tags.
#include <gtest/gtest.h>
#include <hiredis/hiredis.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "integration/harness.h"

namespace sp::test {
namespace {

template <typename N>
class DataTypesTest : public ::testing::Test {
 protected:
  // The deployment is shared by the suite's tests but created in SetUp, so that a failure to
  // start fails the test (a throwing SetUpTestSuite makes ctest report "skipped").
  static void TearDownTestSuite() {
    delete env_;
    env_ = nullptr;
  }
  void SetUp() override {
    if (env_ == nullptr) {
      env_ = new Deployment(N::value);
    }
    client_ = std::make_unique<Client>(env_->port());
    ASSERT_TRUE(client_->ok());
  }
  std::string cmd(const std::vector<std::string>& argv) { return client_->cmd(argv); }

  // The elements of an array reply, sorted (for replies whose order Redis does not define).
  std::vector<std::string> sorted(const std::vector<std::string>& argv) {
    std::vector<std::string> out;
    std::vector<const char*> ptrs;
    std::vector<size_t> lens;
    for (const auto& a : argv) {
      ptrs.push_back(a.data());
      lens.push_back(a.size());
    }
    auto* r = static_cast<redisReply*>(
        redisCommandArgv(client_->ctx(), static_cast<int>(argv.size()), ptrs.data(), lens.data()));
    if (r == nullptr) {
      ADD_FAILURE() << "no reply";
      return out;
    }
    if (r->type != REDIS_REPLY_ARRAY) {
      ADD_FAILURE() << "not an array: " << render(r);
    } else {
      for (size_t i = 0; i < r->elements; ++i) {
        out.push_back(render(r->element[i]));
      }
    }
    freeReplyObject(r);
    std::sort(out.begin(), out.end());
    return out;
  }

  static Deployment* env_;
  std::unique_ptr<Client> client_;
};

template <typename N>
Deployment* DataTypesTest<N>::env_ = nullptr;

using ShardCounts =
    ::testing::Types<std::integral_constant<int, 2>, std::integral_constant<int, 16>>;
TYPED_TEST_SUITE(DataTypesTest, ShardCounts);

TYPED_TEST(DataTypesTest, Strings) {
  for (int i = 0; i < 64; ++i) {
    const std::string k = "str:" + std::to_string(i);
    EXPECT_EQ(this->cmd({"SET", k, "value-" + std::to_string(i)}), "OK");
  }
  for (int i = 0; i < 64; ++i) {
    EXPECT_EQ(this->cmd({"GET", "str:" + std::to_string(i)}), "value-" + std::to_string(i));
  }
  EXPECT_EQ(this->cmd({"GET", "str:missing"}), "(nil)");
  EXPECT_EQ(this->cmd({"APPEND", "str:0", "-tail"}), "(integer) 12");
  EXPECT_EQ(this->cmd({"STRLEN", "str:0"}), "(integer) 12");
  EXPECT_EQ(this->cmd({"GETRANGE", "str:0", "0", "4"}), "value");
  EXPECT_EQ(this->cmd({"SETRANGE", "str:0", "0", "VALUE"}), "(integer) 12");
  EXPECT_EQ(this->cmd({"GET", "str:0"}), "VALUE-0-tail");
  EXPECT_EQ(this->cmd({"SET", "str:0", "x", "NX"}), "(nil)");
  EXPECT_EQ(this->cmd({"SET", "str:new", "x", "XX"}), "(nil)");
  EXPECT_EQ(this->cmd({"SETNX", "str:new", "first"}), "(integer) 1");
  EXPECT_EQ(this->cmd({"SETNX", "str:new", "second"}), "(integer) 0");
  EXPECT_EQ(this->cmd({"GETSET", "str:new", "third"}), "first");
  EXPECT_EQ(this->cmd({"SET", "str:new", "fourth", "GET"}), "third");
  EXPECT_EQ(this->cmd({"GETDEL", "str:new"}), "fourth");
  EXPECT_EQ(this->cmd({"GET", "str:new"}), "(nil)");
  EXPECT_EQ(this->cmd({"INCR", "str:n"}), "(integer) 1");
  EXPECT_EQ(this->cmd({"INCRBY", "str:n", "41"}), "(integer) 42");
  EXPECT_EQ(this->cmd({"DECR", "str:n"}), "(integer) 41");
  EXPECT_EQ(this->cmd({"DECRBY", "str:n", "40"}), "(integer) 1");
  EXPECT_EQ(this->cmd({"INCRBYFLOAT", "str:n", "1.5"}), "2.5");
  EXPECT_EQ(this->cmd({"INCR", "str:1"}), "(error) ERR value is not an integer or out of range");
  EXPECT_EQ(this->cmd({"TYPE", "str:1"}), "string");
  EXPECT_EQ(this->cmd({"EXISTS", "str:1"}), "(integer) 1");
}

TYPED_TEST(DataTypesTest, Hashes) {
  for (int i = 0; i < 32; ++i) {
    const std::string k = "hash:" + std::to_string(i);
    EXPECT_EQ(this->cmd({"HSET", k, "name", "n" + std::to_string(i), "age", std::to_string(i)}),
              "(integer) 2");
  }
  for (int i = 0; i < 32; ++i) {
    const std::string k = "hash:" + std::to_string(i);
    EXPECT_EQ(this->cmd({"HGET", k, "name"}), "n" + std::to_string(i));
    EXPECT_EQ(this->cmd({"HMGET", k, "age", "nope", "name"}),
              "[" + std::to_string(i) + ", (nil), n" + std::to_string(i) + "]");
  }
  EXPECT_EQ(this->cmd({"HSET", "hash:0", "name", "renamed"}), "(integer) 0");
  EXPECT_EQ(this->cmd({"HGETALL", "hash:0"}), "[name, renamed, age, 0]");
  EXPECT_EQ(this->cmd({"HINCRBY", "hash:0", "age", "5"}), "(integer) 5");
  EXPECT_EQ(this->cmd({"HLEN", "hash:0"}), "(integer) 2");
  EXPECT_EQ(this->cmd({"HEXISTS", "hash:0", "age"}), "(integer) 1");
  EXPECT_EQ(this->cmd({"HDEL", "hash:0", "age", "nope"}), "(integer) 1");
  EXPECT_EQ(this->cmd({"HEXISTS", "hash:0", "age"}), "(integer) 0");
  EXPECT_EQ(this->cmd({"HKEYS", "hash:0"}), "[name]");
  EXPECT_EQ(this->cmd({"HSETNX", "hash:0", "name", "x"}), "(integer) 0");
  EXPECT_EQ(this->cmd({"HGET", "hash:missing", "f"}), "(nil)");
  EXPECT_EQ(this->cmd({"TYPE", "hash:1"}), "hash");
  EXPECT_EQ(this->cmd({"GET", "hash:1"}),
            "(error) WRONGTYPE Operation against a key holding the wrong kind of value");
}

TYPED_TEST(DataTypesTest, Lists) {
  for (int i = 0; i < 32; ++i) {
    const std::string k = "list:" + std::to_string(i);
    EXPECT_EQ(this->cmd({"RPUSH", k, "b", "c"}), "(integer) 2");
    EXPECT_EQ(this->cmd({"LPUSH", k, "a"}), "(integer) 3");
  }
  for (int i = 0; i < 32; ++i) {
    EXPECT_EQ(this->cmd({"LRANGE", "list:" + std::to_string(i), "0", "-1"}), "[a, b, c]");
  }
  EXPECT_EQ(this->cmd({"LLEN", "list:0"}), "(integer) 3");
  EXPECT_EQ(this->cmd({"LINDEX", "list:0", "1"}), "b");
  EXPECT_EQ(this->cmd({"LSET", "list:0", "1", "B"}), "OK");
  EXPECT_EQ(this->cmd({"LPOS", "list:0", "c"}), "(integer) 2");
  EXPECT_EQ(this->cmd({"RPUSH", "list:0", "a", "a"}), "(integer) 5");
  EXPECT_EQ(this->cmd({"LREM", "list:0", "0", "a"}), "(integer) 3");
  EXPECT_EQ(this->cmd({"LRANGE", "list:0", "0", "-1"}), "[B, c]");
  EXPECT_EQ(this->cmd({"LPOP", "list:1"}), "a");
  EXPECT_EQ(this->cmd({"RPOP", "list:1"}), "c");
  EXPECT_EQ(this->cmd({"LPOP", "list:1", "5"}), "[b]");
  EXPECT_EQ(this->cmd({"LPOP", "list:1"}), "(nil)");
  EXPECT_EQ(this->cmd({"EXISTS", "list:1"}), "(integer) 0");
  EXPECT_EQ(this->cmd({"LTRIM", "list:2", "1", "1"}), "OK");
  EXPECT_EQ(this->cmd({"LRANGE", "list:2", "0", "-1"}), "[b]");
  // Same-slot two-key list commands with a hash tag.
  EXPECT_EQ(this->cmd({"RPUSH", "{lt}src", "x", "y"}), "(integer) 2");
  EXPECT_EQ(this->cmd({"LMOVE", "{lt}src", "{lt}dst", "LEFT", "RIGHT"}), "x");
  EXPECT_EQ(this->cmd({"RPOPLPUSH", "{lt}src", "{lt}dst"}), "y");
  EXPECT_EQ(this->cmd({"LRANGE", "{lt}dst", "0", "-1"}), "[y, x]");
}

TYPED_TEST(DataTypesTest, Sets) {
  for (int i = 0; i < 32; ++i) {
    const std::string k = "set:" + std::to_string(i);
    EXPECT_EQ(this->cmd({"SADD", k, "a", "b", "c", "a"}), "(integer) 3");
  }
  for (int i = 0; i < 32; ++i) {
    const std::string k = "set:" + std::to_string(i);
    EXPECT_EQ(this->cmd({"SCARD", k}), "(integer) 3");
    EXPECT_EQ(this->sorted({"SMEMBERS", k}), (std::vector<std::string>{"a", "b", "c"}));
  }
  EXPECT_EQ(this->cmd({"SISMEMBER", "set:0", "b"}), "(integer) 1");
  EXPECT_EQ(this->cmd({"SISMEMBER", "set:0", "z"}), "(integer) 0");
  EXPECT_EQ(this->cmd({"SMISMEMBER", "set:0", "a", "z"}), "[(integer) 1, (integer) 0]");
  EXPECT_EQ(this->cmd({"SREM", "set:0", "a", "z"}), "(integer) 1");
  EXPECT_EQ(this->sorted({"SMEMBERS", "set:0"}), (std::vector<std::string>{"b", "c"}));
  EXPECT_EQ(this->cmd({"SADD", "{st}x", "1", "2", "3"}), "(integer) 3");
  EXPECT_EQ(this->cmd({"SADD", "{st}y", "2", "3", "4"}), "(integer) 3");
  EXPECT_EQ(this->sorted({"SINTER", "{st}x", "{st}y"}), (std::vector<std::string>{"2", "3"}));
  EXPECT_EQ(this->sorted({"SUNION", "{st}x", "{st}y"}),
            (std::vector<std::string>{"1", "2", "3", "4"}));
  EXPECT_EQ(this->sorted({"SDIFF", "{st}x", "{st}y"}), (std::vector<std::string>{"1"}));
  EXPECT_EQ(this->cmd({"SUNIONSTORE", "{st}z", "{st}x", "{st}y"}), "(integer) 4");
  EXPECT_EQ(this->cmd({"SMOVE", "{st}x", "{st}y", "1"}), "(integer) 1");
  EXPECT_EQ(this->cmd({"SCARD", "{st}y"}), "(integer) 4");
  EXPECT_EQ(this->cmd({"TYPE", "set:1"}), "set");
}

TYPED_TEST(DataTypesTest, SortedSets) {
  for (int i = 0; i < 32; ++i) {
    const std::string k = "zset:" + std::to_string(i);
    EXPECT_EQ(this->cmd({"ZADD", k, "1", "one", "2", "two", "3", "three"}), "(integer) 3");
  }
  for (int i = 0; i < 32; ++i) {
    const std::string k = "zset:" + std::to_string(i);
    EXPECT_EQ(this->cmd({"ZRANGE", k, "0", "-1", "WITHSCORES"}), "[one, 1, two, 2, three, 3]");
  }
  EXPECT_EQ(this->cmd({"ZSCORE", "zset:0", "two"}), "2");
  EXPECT_EQ(this->cmd({"ZRANK", "zset:0", "three"}), "(integer) 2");
  EXPECT_EQ(this->cmd({"ZINCRBY", "zset:0", "10", "one"}), "11");
  EXPECT_EQ(this->cmd({"ZRANGE", "zset:0", "0", "-1"}), "[two, three, one]");
  EXPECT_EQ(this->cmd({"ZREVRANGE", "zset:0", "0", "0"}), "[one]");
  EXPECT_EQ(this->cmd({"ZRANGEBYSCORE", "zset:0", "2", "3"}), "[two, three]");
  EXPECT_EQ(this->cmd({"ZCOUNT", "zset:0", "-inf", "+inf"}), "(integer) 3");
  EXPECT_EQ(this->cmd({"ZREM", "zset:0", "two", "nope"}), "(integer) 1");
  EXPECT_EQ(this->cmd({"ZCARD", "zset:0"}), "(integer) 2");
  EXPECT_EQ(this->cmd({"ZADD", "zset:0", "XX", "CH", "5", "three"}), "(integer) 1");
  EXPECT_EQ(this->cmd({"ZPOPMIN", "zset:0"}), "[three, 5]");
  EXPECT_EQ(this->cmd({"ZADD", "{zt}a", "1", "x", "2", "y"}), "(integer) 2");
  EXPECT_EQ(this->cmd({"ZADD", "{zt}b", "10", "y", "20", "z"}), "(integer) 2");
  EXPECT_EQ(this->cmd({"ZUNIONSTORE", "{zt}u", "2", "{zt}a", "{zt}b"}), "(integer) 3");
  EXPECT_EQ(this->cmd({"ZRANGE", "{zt}u", "0", "-1", "WITHSCORES"}), "[x, 1, y, 12, z, 20]");
  EXPECT_EQ(this->cmd({"ZINTER", "2", "{zt}a", "{zt}b", "WITHSCORES"}), "[y, 12]");
  EXPECT_EQ(this->cmd({"TYPE", "zset:1"}), "zset");
}

TYPED_TEST(DataTypesTest, Expiry) {
  EXPECT_EQ(this->cmd({"TTL", "exp:missing"}), "(integer) -2");
  EXPECT_EQ(this->cmd({"SET", "exp:a", "v", "EX", "100"}), "OK");
  const std::string ttl = this->cmd({"TTL", "exp:a"});
  EXPECT_TRUE(ttl == "(integer) 100" || ttl == "(integer) 99") << ttl;
  EXPECT_EQ(this->cmd({"SET", "exp:b", "v"}), "OK");
  EXPECT_EQ(this->cmd({"TTL", "exp:b"}), "(integer) -1");
  EXPECT_EQ(this->cmd({"EXPIRE", "exp:b", "500"}), "(integer) 1");
  const std::string ttl_b = this->cmd({"TTL", "exp:b"});
  EXPECT_TRUE(ttl_b == "(integer) 500" || ttl_b == "(integer) 499") << ttl_b;
  EXPECT_EQ(this->cmd({"EXPIRE", "exp:missing", "5"}), "(integer) 0");
  EXPECT_EQ(this->cmd({"PEXPIRE", "exp:b", "50000"}), "(integer) 1");
  const std::string pttl = this->cmd({"PTTL", "exp:b"});
  ASSERT_EQ(pttl.rfind("(integer) ", 0), 0u) << pttl;
  const long ms = std::stol(pttl.substr(10));
  EXPECT_GT(ms, 45000);
  EXPECT_LE(ms, 50000);
  EXPECT_EQ(this->cmd({"PERSIST", "exp:b"}), "(integer) 1");
  EXPECT_EQ(this->cmd({"TTL", "exp:b"}), "(integer) -1");

  // Keys on many shards that really expire.
  for (int i = 0; i < 16; ++i) {
    EXPECT_EQ(this->cmd({"SET", "exp:short:" + std::to_string(i), "v", "PX", "300"}), "OK");
  }
  EXPECT_EQ(this->cmd({"SET", "exp:c", "v"}), "OK");
  EXPECT_EQ(this->cmd({"PEXPIRE", "exp:c", "300"}), "(integer) 1");
  EXPECT_EQ(this->cmd({"GET", "exp:short:0"}), "v");
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  int remaining = 17;
  while (remaining > 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    remaining = 0;
    for (int i = 0; i < 16; ++i) {
      remaining += this->cmd({"EXISTS", "exp:short:" + std::to_string(i)}) == "(integer) 1";
    }
    remaining += this->cmd({"EXISTS", "exp:c"}) == "(integer) 1";
  }
  EXPECT_EQ(remaining, 0);
  EXPECT_EQ(this->cmd({"GET", "exp:short:0"}), "(nil)");
  EXPECT_EQ(this->cmd({"GET", "exp:c"}), "(nil)");
  EXPECT_EQ(this->cmd({"TTL", "exp:c"}), "(integer) -2");
}

}  // namespace
}  // namespace sp::test
