// Workload resolution: redis-benchmark test phases, memtier ratio cycles, command templates.
#include "workload.h"

#include <gtest/gtest.h>

#include "redis_tests.h"

namespace sp::bench {
namespace {

Workload build(std::vector<std::string> args) {
  Options o;
  std::string error;
  EXPECT_TRUE(parseOptions(args, &o, &error)) << error;
  Workload w;
  EXPECT_TRUE(buildWorkload(o, &w, &error)) << error;
  return w;
}

std::string first(const Workload& w, size_t phase, uint64_t key = 7) {
  std::string out;
  ExpandArgs a;
  a.key = key;
  a.key_prefix = w.key_prefix;
  a.data_fill = std::string_view(w.filler).substr(0, w.data_min);
  w.phases[phase].commands[0].tmpl.expand(out, a);
  return out;
}

TEST(RedisTestsTest, SelectionFollowsRedisBenchmarkOrder) {
  std::vector<size_t> sel;
  std::string error;
  ASSERT_TRUE(selectRedisTests({"get", "set", "ping"}, &sel, &error));
  std::vector<std::string_view> names;
  for (size_t i : sel) {
    names.push_back(redisTests()[i].name);
  }
  EXPECT_EQ(names, (std::vector<std::string_view>{"ping_inline", "ping_mbulk", "set", "get"}));
  ASSERT_TRUE(selectRedisTests({"lrange_300"}, &sel, &error));
  ASSERT_EQ(sel.size(), 2u);  // the LPUSH that fills the list comes first
  EXPECT_EQ(redisTests()[sel[0]].name, "lrange_prep");
  EXPECT_FALSE(selectRedisTests({"lrange_prep"}, &sel, &error));
}

TEST(WorkloadTest, TestsBecomePhasesWithRedisBenchmarkCommands) {
  Workload w = build({"-t", "set,get", "-d", "4"});
  ASSERT_EQ(w.phases.size(), 2u);
  EXPECT_EQ(w.phases[0].name, "SET");
  EXPECT_EQ(w.phases[1].name, "GET");
  EXPECT_EQ(w.phases[0].commands[0].kind, OpKind::kSet);
  EXPECT_EQ(w.phases[1].commands[0].kind, OpKind::kGet);
  // No -r: the literal key and the value baked in, as redis-benchmark sends them.
  EXPECT_TRUE(w.phases[0].commands[0].tmpl.isFixed());
  EXPECT_EQ(first(w, 0), "*3\r\n$3\r\nSET\r\n$16\r\nkey:__rand_int__\r\n$4\r\nxxxx\r\n");
}

TEST(WorkloadTest, RandomKeysWithR) {
  Workload w = build({"-t", "get,mset,zadd", "-r", "100"});
  ASSERT_EQ(w.phases.size(), 3u);
  EXPECT_EQ(first(w, 0, 42), "*2\r\n$3\r\nGET\r\n$16\r\nkey:000000000042\r\n");
  EXPECT_EQ(w.phases[1].name, "ZADD");
  EXPECT_EQ(w.phases[1].commands[0].tmpl.argv(),
            (std::vector<std::string>{"ZADD", "myzset", "__rand_int__", "element:__rand_int__"}));
  EXPECT_EQ(w.phases[2].name, "MSET (10 keys)");
  EXPECT_EQ(w.phases[2].commands[0].tmpl.argv().size(), 21u);
}

TEST(WorkloadTest, RatioCycle) {
  Workload w = build({"--ratio=2:3"});
  ASSERT_EQ(w.phases.size(), 1u);
  const Phase& p = w.phases[0];
  EXPECT_TRUE(p.totals_row);
  EXPECT_EQ(p.cycleLength(), 5u);
  std::vector<uint32_t> order;
  for (uint32_t i = 0; i < 5; ++i) {
    order.push_back(p.commandAt(i));
  }
  EXPECT_EQ(order, (std::vector<uint32_t>{0, 0, 1, 1, 1}));
  EXPECT_EQ(p.commands[0].row, "Sets");
  EXPECT_EQ(p.commands[1].row, "Gets");
  EXPECT_EQ(first(w, 0, 5),
            "*3\r\n$3\r\nSET\r\n$9\r\nmemtier-5\r\n$32\r\n" + std::string(32, 'x') + "\r\n");
}

TEST(WorkloadTest, ZeroSideOfTheRatioIsLeftOut) {
  Workload w = build({"--ratio=0:1"});
  ASSERT_EQ(w.phases[0].commands.size(), 1u);
  EXPECT_EQ(w.phases[0].commands[0].row, "Gets");
}

TEST(WorkloadTest, CommandTemplatesAreClassified) {
  Workload w = build({"--command=set __key__ __data__", "--command=get __key__",
                      "--command=hset __key__ f __data__", "--command=set __key__ x"});
  const auto& c = w.phases[0].commands;
  ASSERT_EQ(c.size(), 4u);
  EXPECT_EQ(c[0].kind, OpKind::kSet);
  EXPECT_EQ(c[1].kind, OpKind::kGet);
  EXPECT_EQ(c[2].kind, OpKind::kOther);
  EXPECT_EQ(c[3].kind, OpKind::kOther);  // not __data__: nothing to verify
  EXPECT_EQ(c[0].row, "SET");
  EXPECT_EQ(c[3].row, "SET#2");
}

TEST(WorkloadTest, VerifyAndRandomDataKeepValuesDynamic) {
  Workload w = build({"-t", "set", "-r", "100", "--verify"});
  EXPECT_FALSE(w.data_baked);
  Workload r = build({"--random-data", "-d", "10"});
  EXPECT_FALSE(r.data_baked);
  EXPECT_GE(r.filler.size(), 10u + 65536u);
  for (char ch : r.filler) {
    ASSERT_GE(ch, '!');
    ASSERT_LE(ch, '~');
  }
}

}  // namespace
}  // namespace sp::bench
