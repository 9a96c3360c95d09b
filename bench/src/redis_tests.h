// The redis-benchmark tests that -t selects, with redis-benchmark's names, commands and order.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace sp::bench {

enum class TestOp : uint8_t { kOther, kWrite, kRead, kSet, kGet };

struct RedisTest {
  std::string_view name;     // as -t spells it and as reports show it (upper case there)
  std::string_view title;    // report title ("LPUSH (needed to benchmark LRANGE)")
  std::string_view command;  // template; "__data__" is the value, "__rand_int__" the key number
  bool inline_command;       // sent as an inline command ("PING\r\n")
  TestOp op;                 // kSet/kGet are verified; kWrite/kRead pick the set/get key pattern
  int mset_keys;             // MSET: number of key/value pairs
};

// All tests in the order redis-benchmark runs them (independent of the order given to -t).
const std::vector<RedisTest>& redisTests();

// Expands a -t list ("set,get", "ping", "lrange") into test indices in run order. False with a
// message naming the unknown test and listing the known ones.
bool selectRedisTests(const std::vector<std::string>& names, std::vector<size_t>* selected,
                      std::string* error);

}  // namespace sp::bench
