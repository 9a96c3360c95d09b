// TCP keepalive: SO_KEEPALIVE and TCP_KEEPIDLE through libuv, the interval and count directly.
#include "net/tcp_keepalive.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <algorithm>

namespace sp::net {

namespace {
constexpr int kProbes = 3;  // unanswered probes before the kernel drops the connection
}  // namespace

void setTcpKeepAlive(uv_tcp_t* tcp, uint32_t seconds) {
  if (uv_tcp_keepalive(tcp, seconds > 0 ? 1 : 0, seconds) != 0 || seconds == 0) {
    return;
  }
  uv_os_fd_t fd = -1;
  if (uv_fileno(reinterpret_cast<uv_handle_t*>(tcp), &fd) != 0) {
    return;
  }
  const int interval = std::max(1, static_cast<int>(seconds / 3));
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &interval, sizeof(interval));
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &kProbes, sizeof(kProbes));
}

}  // namespace sp::net
