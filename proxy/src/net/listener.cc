// SO_REUSEPORT listening sockets.
#include "net/listener.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace sp::net {

namespace {

bool toSockaddr(const std::string& host, uint16_t port, sockaddr_storage* addr, socklen_t* len) {
  auto* v4 = reinterpret_cast<sockaddr_in*>(addr);
  auto* v6 = reinterpret_cast<sockaddr_in6*>(addr);
  std::string h = host;
  if (h.size() > 2 && h.front() == '[' && h.back() == ']') {
    h = h.substr(1, h.size() - 2);
  }
  if (inet_pton(AF_INET, h.c_str(), &v4->sin_addr) == 1) {
    v4->sin_family = AF_INET;
    v4->sin_port = htons(port);
    *len = sizeof(sockaddr_in);
    return true;
  }
  if (inet_pton(AF_INET6, h.c_str(), &v6->sin6_addr) == 1) {
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons(port);
    *len = sizeof(sockaddr_in6);
    return true;
  }
  return false;
}

bool toUnixSockaddr(const std::string& path, sockaddr_un* addr) {
  addr->sun_family = AF_UNIX;
  if (path.empty() || path.size() >= sizeof(addr->sun_path)) {
    return false;
  }
  std::memcpy(addr->sun_path, path.data(), path.size());
  return true;
}

}  // namespace

bool portTaken(const std::string& host, uint16_t port) {
  sockaddr_storage addr{};
  socklen_t len = 0;
  if (port == 0 || !toSockaddr(host, port, &addr, &len)) {
    return false;
  }
  int fd = socket(addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    return false;
  }
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  const bool taken = bind(fd, reinterpret_cast<sockaddr*>(&addr), len) != 0 && errno == EADDRINUSE;
  ::close(fd);
  return taken;
}

Status bindListenSocket(const std::string& host, uint16_t port, uint16_t* bound_port, int* fd_out) {
  sockaddr_storage addr{};
  socklen_t len = 0;
  if (!toSockaddr(host, port, &addr, &len)) {
    return Status::failure("listen address '" + host + "' is not an IPv4 or IPv6 literal");
  }
  int fd = socket(addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    return Status::failure(std::string("socket: ") + std::strerror(errno));
  }
  int one = 1;
  if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0 ||
      setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one)) != 0) {
    Status failed = Status::failure(std::string("setsockopt: ") + std::strerror(errno));
    ::close(fd);
    return failed;
  }
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), len) != 0) {
    Status failed =
        Status::failure("bind " + host + ":" + std::to_string(port) + ": " + std::strerror(errno));
    ::close(fd);
    return failed;
  }
  sockaddr_storage actual{};
  socklen_t actual_len = sizeof(actual);
  getsockname(fd, reinterpret_cast<sockaddr*>(&actual), &actual_len);
  *bound_port =
      ntohs(actual.ss_family == AF_INET ? reinterpret_cast<sockaddr_in*>(&actual)->sin_port
                                        : reinterpret_cast<sockaddr_in6*>(&actual)->sin6_port);
  *fd_out = fd;
  return Status();
}

bool unixSocketAnswers(const std::string& path) {
  sockaddr_un addr{};
  if (!toUnixSockaddr(path, &addr)) {
    return false;
  }
  const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  const bool answered =
      fd >= 0 && ::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) == 0;
  if (fd >= 0) {
    ::close(fd);
  }
  return answered;
}

Status bindUnixListenSocket(const std::string& path, uint32_t mode, int* fd_out) {
  sockaddr_un addr{};
  if (!toUnixSockaddr(path, &addr)) {
    return Status::failure("listen.unix '" + path + "': not a usable Unix socket path");
  }
  // A socket file left by a process that is gone is replaced; one that answers is in use.
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0) {
    if (!S_ISSOCK(st.st_mode)) {
      return Status::failure("listen.unix " + path + ": the file exists and is not a socket");
    }
    if (unixSocketAnswers(path)) {
      return Status::failure("listen.unix " + path + " is already in use (another shardproxy?)");
    }
    ::unlink(path.c_str());
  }
  const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    return Status::failure(std::string("socket: ") + std::strerror(errno));
  }
  if (bind(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) != 0) {
    Status failed = Status::failure("bind " + path + ": " + std::strerror(errno));
    ::close(fd);
    return failed;
  }
  if (mode != 0 && ::chmod(path.c_str(), static_cast<mode_t>(mode)) != 0) {
    Status failed = Status::failure("chmod " + path + ": " + std::strerror(errno));
    ::close(fd);
    ::unlink(path.c_str());
    return failed;
  }
  *fd_out = fd;
  return Status();
}

}  // namespace sp::net
