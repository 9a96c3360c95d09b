// Addresses and target specs given on the command line, and --time-limit.
#include <gtest/gtest.h>

#include "options.h"
#include "target.h"

namespace sp::bench {
namespace {

TEST(TargetSpecTest, Endpoints) {
  Endpoint ep;
  std::string error;
  ASSERT_TRUE(parseEndpoint("127.0.0.1:6380", &ep, &error)) << error;
  EXPECT_EQ(ep.host, "127.0.0.1");
  EXPECT_EQ(ep.port, 6380);
  ASSERT_TRUE(parseEndpoint("[::1]:7000", &ep, &error)) << error;
  EXPECT_EQ(ep.host, "::1");
  EXPECT_EQ(ep.port, 7000);
  for (const char* bad : {"localhost", "host:", ":80", "h:0", "h:65536", "h:12x", "[::1]7000"}) {
    EXPECT_FALSE(parseEndpoint(bad, &ep, &error)) << bad;
  }
}

TEST(TargetSpecTest, NamedAndUnnamedTargets) {
  Target t;
  std::string error;
  ASSERT_TRUE(parseTargetSpec("twemproxy=127.0.0.1:22121", &t, &error)) << error;
  EXPECT_EQ(t.name, "twemproxy");
  EXPECT_EQ(t.endpoint.port, 22121);
  ASSERT_TRUE(parseTargetSpec("10.0.0.5:6380", &t, &error)) << error;
  EXPECT_EQ(t.name, "10.0.0.5:6380");
  EXPECT_FALSE(parseTargetSpec("=1.2.3.4:5", &t, &error));
  EXPECT_FALSE(parseTargetSpec("x=nowhere", &t, &error));
}

TEST(TargetSpecTest, TimeLimitFlag) {
  Options o;
  std::string error;
  ASSERT_TRUE(parseOptions({"-t", "set", "-n", "100", "--time-limit", "2.5"}, &o, &error)) << error;
  EXPECT_DOUBLE_EQ(o.time_limit_s, 2.5);
  EXPECT_FALSE(parseOptions({"--test-time", "1", "--time-limit", "2"}, &o, &error));
  EXPECT_NE(error.find("--test-time"), std::string::npos);
  EXPECT_FALSE(parseOptions({"--time-limit", "0"}, &o, &error));
}

}  // namespace
}  // namespace sp::bench
