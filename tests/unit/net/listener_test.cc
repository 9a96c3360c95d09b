// Binding the listening sockets: a TCP socket on loopback (port 0 picks a free port, shared by
// every worker through SO_REUSEPORT, non-blocking), the exact errors for an address that is not
// an IP literal and a port held by another process, portTaken's answers, and the Unix socket's
// cases: a fresh path with its mode, a stale socket file replaced, one in use, a regular file in
// the way and an unusable path.
#include "net/listener.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <string>

namespace sp::net {
namespace {

// A plain listening TCP socket on 127.0.0.1 without SO_REUSEPORT, as another program would hold.
int foreignListener(uint16_t* port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::listen(fd, 4) != 0 || ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    return -1;
  }
  *port = ntohs(addr.sin_port);
  return fd;
}

class ListenerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char dir[] = "/tmp/sp-listener-XXXXXX";
    ASSERT_NE(::mkdtemp(dir), nullptr);
    dir_ = dir;
  }
  void TearDown() override {
    for (int fd : fds_) {
      ::close(fd);
    }
    ::unlink(path().c_str());
    ::rmdir(dir_.c_str());
  }
  std::string path() const { return dir_ + "/proxy.sock"; }
  // bindListenSocket and bindUnixListenSocket as a test reads them: the fd, or -1 with the
  // message in *error ("" when bound).
  static int tcp(const std::string& host, uint16_t port, uint16_t* bound, std::string* error) {
    int fd = -1;
    const Status status = bindListenSocket(host, port, bound, &fd);
    *error = status.message();
    return status.ok() ? fd : -1;
  }
  static int unixSocket(const std::string& path, uint32_t mode, std::string* error) {
    int fd = -1;
    const Status status = bindUnixListenSocket(path, mode, &fd);
    *error = status.message();
    return status.ok() ? fd : -1;
  }
  int keep(int fd) {
    if (fd >= 0) {
      fds_.push_back(fd);
    }
    return fd;
  }

  std::string dir_;
  std::vector<int> fds_;
};

TEST_F(ListenerTest, PortZeroBindsAFreeLoopbackPortNonBlocking) {
  uint16_t port = 0;
  std::string error;
  const int fd = keep(tcp("127.0.0.1", 0, &port, &error));
  ASSERT_GE(fd, 0) << error;
  EXPECT_NE(port, 0);
  EXPECT_NE(::fcntl(fd, F_GETFL) & O_NONBLOCK, 0);
  EXPECT_NE(::fcntl(fd, F_GETFD) & FD_CLOEXEC, 0);
  EXPECT_EQ(error, "");
}

TEST_F(ListenerTest, WorkersShareOnePortThroughReusePort) {
  uint16_t port = 0;
  uint16_t again = 0;
  std::string error;
  ASSERT_GE(keep(tcp("127.0.0.1", 0, &port, &error)), 0) << error;
  ASSERT_EQ(::listen(fds_.back(), 4), 0);
  EXPECT_GE(keep(tcp("127.0.0.1", port, &again, &error)), 0) << error;
  EXPECT_EQ(again, port);
}

TEST_F(ListenerTest, AHostNameIsNotAnAddress) {
  uint16_t port = 0;
  std::string error;
  EXPECT_EQ(tcp("localhost", 6379, &port, &error), -1);
  EXPECT_EQ(error, "listen address 'localhost' is not an IPv4 or IPv6 literal");
}

TEST_F(ListenerTest, ABracketedIpv6LiteralIsAccepted) {
  uint16_t port = 0;
  std::string error;
  const int fd = keep(tcp("[::1]", 0, &port, &error));
  if (fd < 0 && error.starts_with("socket: ")) {
    GTEST_SKIP() << "no IPv6 here: " << error;
  }
  if (fd < 0 && error.find("Cannot assign requested address") != std::string::npos) {
    GTEST_SKIP() << "no ::1 here: " << error;
  }
  ASSERT_GE(fd, 0) << error;
  EXPECT_NE(port, 0);
}

TEST_F(ListenerTest, APortHeldByAnotherProgramIsAnError) {
  uint16_t held = 0;
  ASSERT_GE(keep(foreignListener(&held)), 0);
  uint16_t port = 0;
  std::string error;
  EXPECT_EQ(tcp("127.0.0.1", held, &port, &error), -1);
  EXPECT_EQ(error, "bind 127.0.0.1:" + std::to_string(held) + ": Address already in use");
}

TEST_F(ListenerTest, PortTakenSeesAListenerOfAnyKind) {
  uint16_t foreign = 0;
  ASSERT_GE(keep(foreignListener(&foreign)), 0);
  EXPECT_TRUE(portTaken("127.0.0.1", foreign));
  uint16_t ours = 0;
  std::string error;
  ASSERT_GE(keep(tcp("127.0.0.1", 0, &ours, &error)), 0) << error;
  ASSERT_EQ(::listen(fds_.back(), 4), 0);
  EXPECT_TRUE(portTaken("127.0.0.1", ours));
}

TEST_F(ListenerTest, PortTakenIsFalseForPortZeroAndForANonAddress) {
  uint16_t foreign = 0;
  ASSERT_GE(keep(foreignListener(&foreign)), 0);
  EXPECT_FALSE(portTaken("127.0.0.1", 0));
  EXPECT_FALSE(portTaken("localhost", foreign));
}

TEST_F(ListenerTest, AUnixSocketIsBoundAtAFreshPathWithItsMode) {
  std::string error;
  const int fd = keep(unixSocket(path(), 0600, &error));
  ASSERT_GE(fd, 0) << error;
  struct stat st {};
  ASSERT_EQ(::lstat(path().c_str(), &st), 0);
  EXPECT_TRUE(S_ISSOCK(st.st_mode));
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_NE(::fcntl(fd, F_GETFL) & O_NONBLOCK, 0);
  EXPECT_FALSE(unixSocketAnswers(path()));  // bound, not yet listening
  ASSERT_EQ(::listen(fd, 4), 0);
  EXPECT_TRUE(unixSocketAnswers(path()));
}

TEST_F(ListenerTest, AStaleUnixSocketFileIsReplaced) {
  std::string error;
  const int first = unixSocket(path(), 0, &error);
  ASSERT_GE(first, 0) << error;
  ::close(first);  // the file stays, nobody answers on it
  EXPECT_GE(keep(unixSocket(path(), 0, &error)), 0) << error;
}

TEST_F(ListenerTest, AUnixSocketSomeoneAnswersOnIsInUse) {
  std::string error;
  ASSERT_GE(keep(unixSocket(path(), 0, &error)), 0) << error;
  ASSERT_EQ(::listen(fds_.back(), 4), 0);
  EXPECT_EQ(unixSocket(path(), 0, &error), -1);
  EXPECT_EQ(error, "listen.unix " + path() + " is already in use (another shardproxy?)");
}

TEST_F(ListenerTest, ARegularFileInTheWayIsNotReplaced) {
  std::ofstream(path()) << "data";
  std::string error;
  EXPECT_EQ(unixSocket(path(), 0, &error), -1);
  EXPECT_EQ(error, "listen.unix " + path() + ": the file exists and is not a socket");
  std::ifstream in(path());
  std::string kept;
  in >> kept;
  EXPECT_EQ(kept, "data");
}

TEST_F(ListenerTest, AnEmptyOrOverlongUnixPathIsUnusable) {
  std::string error;
  EXPECT_EQ(unixSocket("", 0, &error), -1);
  EXPECT_EQ(error, "listen.unix '': not a usable Unix socket path");
  const std::string longer = "/tmp/" + std::string(200, 'p');
  EXPECT_EQ(unixSocket(longer, 0, &error), -1);
  EXPECT_EQ(error, "listen.unix '" + longer + "': not a usable Unix socket path");
  EXPECT_FALSE(unixSocketAnswers(longer));
}

TEST_F(ListenerTest, AMissingDirectoryIsABindError) {
  std::string error;
  const std::string missing = dir_ + "/no/such/dir.sock";
  EXPECT_EQ(unixSocket(missing, 0, &error), -1);
  EXPECT_EQ(error, "bind " + missing + ": No such file or directory");
}

}  // namespace
}  // namespace sp::net
