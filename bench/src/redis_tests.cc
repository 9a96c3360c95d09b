// redis-benchmark's test table (Redis 7): names, commands and the fixed order they run in.
#include "redis_tests.h"

#include <algorithm>
#include <cctype>

namespace sp::bench {

const std::vector<RedisTest>& redisTests() {
  static const std::vector<RedisTest> tests = {
      {"ping_inline", "PING_INLINE", "PING", true, TestOp::kOther, 0},
      {"ping_mbulk", "PING_MBULK", "PING", false, TestOp::kOther, 0},
      {"set", "SET", "SET key:__rand_int__ __data__", false, TestOp::kSet, 0},
      {"get", "GET", "GET key:__rand_int__", false, TestOp::kGet, 0},
      {"incr", "INCR", "INCR counter:__rand_int__", false, TestOp::kWrite, 0},
      {"lpush", "LPUSH", "LPUSH mylist __data__", false, TestOp::kWrite, 0},
      {"rpush", "RPUSH", "RPUSH mylist __data__", false, TestOp::kWrite, 0},
      {"lpop", "LPOP", "LPOP mylist", false, TestOp::kWrite, 0},
      {"rpop", "RPOP", "RPOP mylist", false, TestOp::kWrite, 0},
      {"sadd", "SADD", "SADD myset element:__rand_int__", false, TestOp::kWrite, 0},
      {"hset", "HSET", "HSET myhash element:__rand_int__ __data__", false, TestOp::kWrite, 0},
      {"spop", "SPOP", "SPOP myset", false, TestOp::kWrite, 0},
      {"zadd", "ZADD", "ZADD myzset __score__ element:__rand_int__", false, TestOp::kWrite, 0},
      {"zpopmin", "ZPOPMIN", "ZPOPMIN myzset", false, TestOp::kWrite, 0},
      {"lrange_prep", "LPUSH (needed to benchmark LRANGE)", "LPUSH mylist __data__", false,
       TestOp::kWrite, 0},
      {"lrange_100", "LRANGE_100 (first 100 elements)", "LRANGE mylist 0 99", false, TestOp::kRead,
       0},
      {"lrange_300", "LRANGE_300 (first 300 elements)", "LRANGE mylist 0 299", false, TestOp::kRead,
       0},
      {"lrange_500", "LRANGE_500 (first 500 elements)", "LRANGE mylist 0 499", false, TestOp::kRead,
       0},
      {"lrange_600", "LRANGE_600 (first 600 elements)", "LRANGE mylist 0 599", false, TestOp::kRead,
       0},
      {"mset", "MSET (10 keys)", "MSET", false, TestOp::kWrite, 10},
  };
  return tests;
}

bool selectRedisTests(const std::vector<std::string>& names, std::vector<size_t>* selected,
                      std::string* error) {
  const auto& tests = redisTests();
  std::vector<bool> on(tests.size(), false);
  for (std::string name : names) {
    std::transform(name.begin(), name.end(), name.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    bool matched = false;
    for (size_t i = 0; i < tests.size(); ++i) {
      const std::string_view t = tests[i].name;
      // redis-benchmark: "ping" selects both pings, "lrange" every LRANGE size; any LRANGE
      // selection brings the LPUSH that fills the list.
      const bool hit = t == name || (name == "ping" && t.starts_with("ping_")) ||
                       (name == "lrange" && t.starts_with("lrange_")) ||
                       (name.starts_with("lrange") && t == "lrange_prep");
      if (hit && t != "lrange_prep") {
        matched = true;
      }
      if (hit) {
        on[i] = true;
      }
    }
    if (!matched || name == "lrange_prep") {
      std::string known;
      for (const auto& t : tests) {
        if (t.name != "lrange_prep") {
          known += known.empty() ? "" : ", ";
          known += t.name;
        }
      }
      *error = "unknown test '" + name + "' for -t (known: ping, lrange, " + known + ")";
      return false;
    }
  }
  selected->clear();
  for (size_t i = 0; i < tests.size(); ++i) {
    if (on[i]) {
      selected->push_back(i);
    }
  }
  return true;
}

}  // namespace sp::bench
