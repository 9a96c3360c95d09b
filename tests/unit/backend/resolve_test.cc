// Backend address resolution: literals without a lookup, names through the resolver.
#include "backend/resolve.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <gtest/gtest.h>

namespace sp::backend {
namespace {

TEST(ResolveTest, Ipv4Literal) {
  sockaddr_storage out;
  ASSERT_TRUE(resolveAddress("127.0.0.1", 6379, &out));
  const auto* v4 = reinterpret_cast<const sockaddr_in*>(&out);
  EXPECT_EQ(v4->sin_family, AF_INET);
  EXPECT_EQ(ntohs(v4->sin_port), 6379);
  EXPECT_EQ(ntohl(v4->sin_addr.s_addr), INADDR_LOOPBACK);
}

TEST(ResolveTest, Ipv6Literal) {
  sockaddr_storage out;
  ASSERT_TRUE(resolveAddress("::1", 7000, &out));
  const auto* v6 = reinterpret_cast<const sockaddr_in6*>(&out);
  EXPECT_EQ(v6->sin6_family, AF_INET6);
  EXPECT_EQ(ntohs(v6->sin6_port), 7000);
  EXPECT_TRUE(IN6_IS_ADDR_LOOPBACK(&v6->sin6_addr));
}

TEST(ResolveTest, LocalhostByName) {
  sockaddr_storage out;
  ASSERT_TRUE(resolveAddress("localhost", 6380, &out));
  ASSERT_TRUE(out.ss_family == AF_INET || out.ss_family == AF_INET6);
  const uint16_t port = out.ss_family == AF_INET
                            ? ntohs(reinterpret_cast<const sockaddr_in*>(&out)->sin_port)
                            : ntohs(reinterpret_cast<const sockaddr_in6*>(&out)->sin6_port);
  EXPECT_EQ(port, 6380);
}

TEST(ResolveTest, UnresolvableNameIsFalse) {
  sockaddr_storage out;
  EXPECT_FALSE(resolveAddress("", 6379, &out));  // no name at all: no lookup can succeed
}

}  // namespace
}  // namespace sp::backend
