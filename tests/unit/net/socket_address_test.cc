// formatSocketAddress: a client's address as redis-server writes it in CLIENT LIST and the slow
// log ("[ip]:port" for IPv6, "path:0" for a Unix socket), cut to the space given, and nothing for
// another family.
#include "net/socket_address.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/un.h>

#include <cstring>
#include <string>

namespace sp::net {
namespace {

sockaddr_storage v4(const char* ip, uint16_t port) {
  sockaddr_storage s{};
  auto* a = reinterpret_cast<sockaddr_in*>(&s);
  a->sin_family = AF_INET;
  a->sin_port = htons(port);
  EXPECT_EQ(inet_pton(AF_INET, ip, &a->sin_addr), 1);
  return s;
}

sockaddr_storage v6(const char* ip, uint16_t port) {
  sockaddr_storage s{};
  auto* a = reinterpret_cast<sockaddr_in6*>(&s);
  a->sin6_family = AF_INET6;
  a->sin6_port = htons(port);
  EXPECT_EQ(inet_pton(AF_INET6, ip, &a->sin6_addr), 1);
  return s;
}

std::string format(const sockaddr_storage& addr, size_t size = 96) {
  char out[96];
  const size_t n = formatSocketAddress(addr, out, size);
  EXPECT_EQ(n, std::strlen(out));
  return std::string(out, n);
}

TEST(SocketAddressTest, IPv4IsHostColonPort) {
  EXPECT_EQ(format(v4("127.0.0.1", 54321)), "127.0.0.1:54321");
  EXPECT_EQ(format(v4("255.255.255.255", 65535)), "255.255.255.255:65535");
}

TEST(SocketAddressTest, IPv6IsBracketedAsRedisServerWritesIt) {
  EXPECT_EQ(format(v6("::1", 6380)), "[::1]:6380");
  EXPECT_EQ(format(v6("fe80::1:2:3:4", 1)), "[fe80::1:2:3:4]:1");
}

TEST(SocketAddressTest, AUnixSocketIsItsPathWithPortZero) {
  sockaddr_storage s{};
  auto* un = reinterpret_cast<sockaddr_un*>(&s);
  un->sun_family = AF_UNIX;
  std::strcpy(un->sun_path, "/run/shardproxy.sock");
  EXPECT_EQ(format(s), "/run/shardproxy.sock:0");
  // A path that fills sun_path has no terminating NUL: it is read to the field's end, no further.
  std::memset(un->sun_path, 'p', sizeof un->sun_path);
  char out[160];
  EXPECT_EQ(formatSocketAddress(s, out, sizeof out), sizeof un->sun_path + 2);
  EXPECT_EQ(std::string(out), std::string(sizeof un->sun_path, 'p') + ":0");
}

TEST(SocketAddressTest, ATooSmallBufferCutsTheTextAndOtherFamiliesGiveNothing) {
  EXPECT_EQ(format(v4("127.0.0.1", 54321), 6), "127.0");
  EXPECT_EQ(format(sockaddr_storage{}), "");
  sockaddr_storage other{};
  other.ss_family = AF_NETLINK;
  EXPECT_EQ(format(other), "");
}

}  // namespace
}  // namespace sp::net
