// Template splitting, compilation and expansion into RESP bytes.
#include "command_template.h"

#include <gtest/gtest.h>

#include "key_generator.h"

namespace sp::bench {
namespace {

CommandTemplate make(const std::string& text, TemplateEnv env = {}) {
  std::vector<std::string> argv;
  std::string error;
  EXPECT_TRUE(CommandTemplate::split(text, &argv, &error)) << error;
  CommandTemplate t;
  EXPECT_TRUE(CommandTemplate::compile(argv, env, &t, &error)) << error;
  return t;
}

std::string expand(const CommandTemplate& t, const ExpandArgs& a) {
  std::string out;
  const size_t n = t.expand(out, a);
  EXPECT_EQ(n, out.size());
  return out;
}

TEST(CommandTemplateTest, SplitsLikeRedisCli) {
  std::vector<std::string> argv;
  std::string error;
  ASSERT_TRUE(CommandTemplate::split("  set  \"a b\" 'c d'x \"q\\\"t\\n\" ", &argv, &error));
  EXPECT_EQ(argv, (std::vector<std::string>{"set", "a b", "c dx", "q\"t\n"}));
  EXPECT_FALSE(CommandTemplate::split("set \"open", &argv, &error));
  EXPECT_NE(error.find("unbalanced"), std::string::npos);
  EXPECT_FALSE(CommandTemplate::split("   ", &argv, &error));
}

TEST(CommandTemplateTest, FixedCommandIsPrecomputed) {
  CommandTemplate t = make("PING");
  EXPECT_TRUE(t.isFixed());
  EXPECT_EQ(expand(t, {}), "*1\r\n$4\r\nPING\r\n");
  EXPECT_EQ(t.name(), "PING");
}

TEST(CommandTemplateTest, KeyAndData) {
  CommandTemplate t = make("set __key__ __data__");
  EXPECT_TRUE(t.usesKey());
  EXPECT_TRUE(t.usesData());
  ExpandArgs a;
  a.key = 42;
  a.key_prefix = "memtier-";
  a.data_fill = "xxxx";
  EXPECT_EQ(expand(t, a), "*3\r\n$3\r\nset\r\n$10\r\nmemtier-42\r\n$4\r\nxxxx\r\n");
  EXPECT_EQ(t.name(), "SET");
}

TEST(CommandTemplateTest, DataHeadAndFill) {
  CommandTemplate t = make("set k __data__");
  ExpandArgs a;
  a.data_head = "HEAD:";
  a.data_fill = "yy";
  EXPECT_EQ(expand(t, a), "*3\r\n$3\r\nset\r\n$1\r\nk\r\n$7\r\nHEAD:yy\r\n");
}

TEST(CommandTemplateTest, RandIntIsZeroPaddedToTwelveDigits) {
  CommandTemplate t = make("GET key:__rand_int__");
  ExpandArgs a;
  a.key = 7;
  EXPECT_EQ(expand(t, a), "*2\r\n$3\r\nGET\r\n$16\r\nkey:000000000007\r\n");
  a.key = 1234567890123ull;  // more than 12 digits: all of them
  EXPECT_EQ(expand(t, a), "*2\r\n$3\r\nGET\r\n$17\r\nkey:1234567890123\r\n");
}

TEST(CommandTemplateTest, RandIntStaysLiteralWithoutAKeyRange) {
  TemplateEnv env;
  env.rand_int_literal = true;
  CommandTemplate t = make("GET key:__rand_int__", env);
  EXPECT_TRUE(t.isFixed());
  EXPECT_FALSE(t.usesKey());
  EXPECT_EQ(expand(t, {}), "*2\r\n$3\r\nGET\r\n$16\r\nkey:__rand_int__\r\n");
}

TEST(CommandTemplateTest, FixedDataIsBakedIn) {
  TemplateEnv env;
  env.rand_int_literal = true;
  env.data_fixed = true;
  env.fixed_data = "xxx";
  CommandTemplate t = make("SET key:__rand_int__ __data__", env);
  EXPECT_TRUE(t.isFixed());
  EXPECT_TRUE(t.usesData());
  EXPECT_EQ(expand(t, {}), "*3\r\n$3\r\nSET\r\n$16\r\nkey:__rand_int__\r\n$3\r\nxxx\r\n");
}

TEST(CommandTemplateTest, PlaceholdersInsideArguments) {
  CommandTemplate t = make("hset user:{__key__}:profile f__key__ pre__data__post");
  ExpandArgs a;
  a.key = 5;
  a.key_prefix = "p";
  a.data_fill = "D";
  EXPECT_EQ(expand(t, a),
            "*4\r\n$4\r\nhset\r\n$17\r\nuser:{p5}:profile\r\n$3\r\nfp5\r\n$8\r\npreDpost\r\n");
}

TEST(CommandTemplateTest, LaterRandIntsDrawFreshNumbers) {
  CommandTemplate t = make("MSET key:__rand_int__ v key:__rand_int__ v");
  KeyRange range{0, 999};
  KeyGenerator more(KeyPattern::kSequential, range, 500, 1, 1);  // yields 500, 501, ...
  ExpandArgs a;
  a.key = 3;
  a.more_keys = &more;
  EXPECT_EQ(expand(t, a),
            "*5\r\n$4\r\nMSET\r\n$16\r\nkey:000000000003\r\n$1\r\nv\r\n$16\r\nkey:000000000500\r\n"
            "$1\r\nv\r\n");
  // Without a generator every placeholder uses the request's key.
  a.more_keys = nullptr;
  EXPECT_EQ(expand(t, a),
            "*5\r\n$4\r\nMSET\r\n$16\r\nkey:000000000003\r\n$1\r\nv\r\n$16\r\nkey:000000000003\r\n"
            "$1\r\nv\r\n");
}

TEST(CommandTemplateTest, RepeatedKeyIsTheSameKey) {
  CommandTemplate t = make("rename __key__ __key__");
  ExpandArgs a;
  a.key = 9;
  a.key_prefix = "k";
  EXPECT_EQ(expand(t, a), "*3\r\n$6\r\nrename\r\n$2\r\nk9\r\n$2\r\nk9\r\n");
}

TEST(CommandTemplateTest, InlineCommand) {
  CommandTemplate t = CommandTemplate::inlineCommand("PING");
  EXPECT_EQ(expand(t, {}), "PING\r\n");
  EXPECT_EQ(t.name(), "PING");
}

TEST(CommandTemplateTest, ExpandAppends) {
  CommandTemplate t = make("PING");
  std::string out = "abc";
  EXPECT_EQ(t.expand(out, {}), 14u);
  EXPECT_EQ(out, "abc*1\r\n$4\r\nPING\r\n");
}

TEST(CommandTemplateTest, TooManyPlaceholdersInOneArgument) {
  std::string arg;
  for (size_t i = 0; i <= CommandTemplate::kMaxNumbersPerArg; ++i) {
    arg += "__key__";
  }
  CommandTemplate t;
  std::string error;
  EXPECT_FALSE(CommandTemplate::compile({"get", arg}, {}, &t, &error));
  EXPECT_NE(error.find("too many"), std::string::npos);
}

}  // namespace
}  // namespace sp::bench
