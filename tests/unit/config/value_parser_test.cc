// Tests for config/value_parser.cc: integers, sizes, ports, hosts and host:port addresses.
#include "config/value_parser.h"

#include <gtest/gtest.h>

#include <limits>

namespace sp::config {
namespace {

constexpr uint64_t kMax64 = std::numeric_limits<uint64_t>::max();

// Whether a parse succeeded; its message ("" when it did) into *err.
bool parsed(const Status& status, std::string* err) {
  *err = status.message();
  return status.ok();
}

TEST(ValueParserTest, UnsignedAcceptsPlainDecimal) {
  uint64_t v = 0;
  std::string err;
  EXPECT_TRUE(parsed(parseUnsigned("0", kMax64, &v), &err));
  EXPECT_EQ(v, 0u);
  EXPECT_TRUE(parsed(parseUnsigned("1048576", kMax64, &v), &err));
  EXPECT_EQ(v, 1048576u);
  EXPECT_TRUE(parsed(parseUnsigned("007", kMax64, &v), &err));
  EXPECT_EQ(v, 7u);
  EXPECT_TRUE(parsed(parseUnsigned("18446744073709551615", kMax64, &v), &err));
  EXPECT_EQ(v, kMax64);
}

TEST(ValueParserTest, UnsignedRejectsGarbageSignsAndOverflow) {
  for (const char* bad : {"", "12x", "x12", " 12", "12 ", "+1", "1.5", "0x10", "1e3", "1_000"}) {
    uint64_t v = 99;
    std::string err;
    EXPECT_FALSE(parsed(parseUnsigned(bad, kMax64, &v), &err)) << bad;
    EXPECT_EQ(v, 99u) << bad;
    EXPECT_NE(err.find("expected an integer"), std::string::npos) << err;
  }
  uint64_t v = 0;
  std::string err;
  EXPECT_FALSE(parsed(parseUnsigned("-1", kMax64, &v), &err));
  EXPECT_EQ(err, "expected a non-negative integer, got '-1'");
  EXPECT_FALSE(parsed(parseUnsigned("18446744073709551616", kMax64, &v), &err));
  EXPECT_NE(err.find("too large"), std::string::npos) << err;
  EXPECT_FALSE(parsed(parseUnsigned("1025", 1024, &v), &err));
  EXPECT_EQ(err, "value 1025 is too large (at most 1024)");
}

TEST(ValueParserTest, SizeUnitsArePowersOf1024AndCaseInsensitive) {
  struct Case {
    const char* text;
    uint64_t bytes;
  } cases[] = {
      {"0", 0},
      {"100", 100},
      {"100b", 100},
      {"100B", 100},
      {"1k", 1024},
      {"1kb", 1024},
      {"64KB", 64 * 1024},
      {"64Kb", 64 * 1024},
      {"1m", 1u << 20},
      {"512mb", 512ull << 20},
      {"512MB", 512ull << 20},
      {"1g", 1ull << 30},
      {"2GB", 2ull << 30},
      {"3 mb", 3ull << 20},
  };
  for (const Case& c : cases) {
    uint64_t v = 0;
    std::string err;
    EXPECT_TRUE(parsed(parseSize(c.text, kMax64, &v), &err)) << c.text << ": " << err;
    EXPECT_EQ(v, c.bytes) << c.text;
  }
}

TEST(ValueParserTest, SizeRejectsBadInput) {
  for (const char* bad :
       {"", "abc", "mb", "-1", "-1mb", "1.5gb", "12x", "1tb", "1kbb", "1 ", "+5", "1mb ", "0x10"}) {
    uint64_t v = 7;
    std::string err;
    EXPECT_FALSE(parsed(parseSize(bad, kMax64, &v), &err)) << bad;
    EXPECT_EQ(v, 7u);
    EXPECT_EQ(err, std::string("expected a size (e.g. 512mb, 64kb, 1024), got '") + bad + "'");
  }
}

TEST(ValueParserTest, SizeRejectsValuesPastTheMaximum) {
  uint64_t v = 0;
  std::string err;
  EXPECT_TRUE(parsed(parseSize("4gb", 4ull << 30, &v), &err));
  EXPECT_FALSE(parsed(parseSize("4gb", (4ull << 30) - 1, &v), &err));
  EXPECT_NE(err.find("too large"), std::string::npos);
  // Shifting would overflow 64 bits.
  EXPECT_FALSE(parsed(parseSize("17179869184gb", kMax64, &v), &err));
  EXPECT_FALSE(parsed(parseSize("99999999999999999999", kMax64, &v), &err));
}

TEST(ValueParserTest, PortRange) {
  uint16_t port = 0;
  std::string err;
  EXPECT_TRUE(parsed(parsePort("1", &port), &err));
  EXPECT_EQ(port, 1);
  EXPECT_TRUE(parsed(parsePort("65535", &port), &err));
  EXPECT_EQ(port, 65535);
  EXPECT_FALSE(parsed(parsePort("0", &port), &err));
  EXPECT_EQ(err, "port must be 1..65535, got '0'");
  EXPECT_FALSE(parsed(parsePort("65536", &port), &err));
  EXPECT_EQ(err, "port must be 1..65535, got '65536'");
  EXPECT_FALSE(parsed(parsePort("-1", &port), &err));
  EXPECT_FALSE(parsed(parsePort("80x", &port), &err));
  EXPECT_EQ(err, "expected a port number, got '80x'");
  EXPECT_FALSE(parsed(parsePort("", &port), &err));
}

TEST(ValueParserTest, Hosts) {
  for (const char* good : {"127.0.0.1", "localhost", "redis-1.internal", "my_host", "::1",
                           "::", "fe80::1%eth0", "2001:db8::7"}) {
    EXPECT_TRUE(isValidHost(good)) << good;
  }
  for (const char* bad : {"", "a b", "[::1]", "::1::2", "host/x", "1:2", "gg::1"}) {
    EXPECT_FALSE(isValidHost(bad)) << bad;
  }
}

TEST(ValueParserTest, HostPortIPv4AndNames) {
  std::string host;
  uint16_t port = 0;
  std::string err;
  ASSERT_TRUE(parsed(parseHostPort("127.0.0.1:7001", &host, &port), &err)) << err;
  EXPECT_EQ(host, "127.0.0.1");
  EXPECT_EQ(port, 7001);
  ASSERT_TRUE(parsed(parseHostPort("redis.local:6379", &host, &port), &err)) << err;
  EXPECT_EQ(host, "redis.local");
  EXPECT_EQ(port, 6379);
}

TEST(ValueParserTest, HostPortIPv6NeedsBrackets) {
  std::string host;
  uint16_t port = 0;
  std::string err;
  ASSERT_TRUE(parsed(parseHostPort("[::1]:7001", &host, &port), &err)) << err;
  EXPECT_EQ(host, "::1");
  EXPECT_EQ(port, 7001);
  ASSERT_TRUE(parsed(parseHostPort("[2001:db8::7]:65535", &host, &port), &err)) << err;
  EXPECT_EQ(host, "2001:db8::7");
  EXPECT_EQ(port, 65535);
  ASSERT_TRUE(parsed(parseHostPort("[fe80::1%eth0]:1", &host, &port), &err)) << err;
  EXPECT_EQ(host, "fe80::1%eth0");

  EXPECT_FALSE(parsed(parseHostPort("::1:7001", &host, &port), &err));
  EXPECT_NE(err.find("[addr]:port"), std::string::npos) << err;
  EXPECT_FALSE(parsed(parseHostPort("[::1]", &host, &port), &err));
  EXPECT_FALSE(parsed(parseHostPort("[::1]7001", &host, &port), &err));
  EXPECT_FALSE(parsed(parseHostPort("[::1:7001", &host, &port), &err));
  EXPECT_FALSE(parsed(parseHostPort("[127.0.0.1]:7001", &host, &port), &err));
  EXPECT_FALSE(parsed(parseHostPort("[zz::1]:7001", &host, &port), &err));
}

TEST(ValueParserTest, HostPortErrors) {
  std::string host = "unchanged";
  uint16_t port = 9;
  std::string err;
  EXPECT_FALSE(parsed(parseHostPort("foo", &host, &port), &err));
  EXPECT_EQ(err, "expected host:port, got 'foo'");
  EXPECT_FALSE(parsed(parseHostPort(":7001", &host, &port), &err));
  EXPECT_EQ(err, "expected host:port, got ':7001'");
  EXPECT_FALSE(parsed(parseHostPort("h:0", &host, &port), &err));
  EXPECT_EQ(err, "port must be 1..65535, got '0'");
  EXPECT_FALSE(parsed(parseHostPort("h:70000", &host, &port), &err));
  EXPECT_EQ(err, "port must be 1..65535, got '70000'");
  EXPECT_FALSE(parsed(parseHostPort("h:", &host, &port), &err));
  EXPECT_FALSE(parsed(parseHostPort("h:12ab", &host, &port), &err));
  EXPECT_FALSE(parsed(parseHostPort("bad host:1", &host, &port), &err));
  EXPECT_EQ(host, "unchanged");
  EXPECT_EQ(port, 9);
}

TEST(ValueParserTest, FormatHostPortBracketsIPv6) {
  EXPECT_EQ(formatHostPort("127.0.0.1", 7001), "127.0.0.1:7001");
  EXPECT_EQ(formatHostPort("::1", 7001), "[::1]:7001");
}

TEST(ValueParserTest, LogLevels) {
  for (const char* level : {"trace", "debug", "info", "warn", "error", "critical", "off"}) {
    EXPECT_TRUE(isLogLevel(level)) << level;
  }
  for (const char* level : {"", "INFO", "warning", "verbose", "err"}) {
    EXPECT_FALSE(isLogLevel(level)) << level;
  }
}

}  // namespace
}  // namespace sp::config
