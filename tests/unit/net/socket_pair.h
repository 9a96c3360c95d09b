// SocketPair: a non-blocking AF_UNIX stream socket pair for tests of the worker's socket I/O.
// fds[0] is the side under test (the proxy's socket), fds[1] the peer.
#pragma once

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>

namespace sp::net {

struct SocketPair {
  int fds[2] = {-1, -1};
  SocketPair() { EXPECT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, fds), 0); }
  ~SocketPair() {
    for (int fd : fds) {
      if (fd >= 0) {
        ::close(fd);
      }
    }
  }
  SocketPair(const SocketPair&) = delete;
  SocketPair& operator=(const SocketPair&) = delete;

  // What the peer has received so far.
  std::string drain() {
    std::string got;
    char buf[65536];
    for (ssize_t n; (n = ::recv(fds[1], buf, sizeof buf, MSG_DONTWAIT)) > 0;) {
      got.append(buf, static_cast<size_t>(n));
    }
    return got;
  }
  // Fills the side under test's send buffer until not even a byte fits.
  void fill() {
    static const char kChunk[65536] = {};
    for (size_t size : {sizeof kChunk, size_t{1}}) {
      while (::send(fds[0], kChunk, size, MSG_DONTWAIT) > 0) {
      }
    }
  }
  // The peer sends `s` (it must fit at once).
  void write(const std::string& s) {
    ASSERT_EQ(::write(fds[1], s.data(), s.size()), static_cast<ssize_t>(s.size()));
  }
  // The peer closes its end.
  void closePeer() {
    ::close(fds[1]);
    fds[1] = -1;
  }
};

}  // namespace sp::net
