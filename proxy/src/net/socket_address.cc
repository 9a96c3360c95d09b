#include "net/socket_address.h"

#include <netinet/in.h>
#include <sys/un.h>
#include <uv.h>

#include <cstdio>
#include <cstring>

namespace sp::net {

size_t formatSocketAddress(const sockaddr_storage& addr, char* out, size_t size) {
  if (size == 0) {
    return 0;
  }
  out[0] = '\0';
  char host[64] = {};
  int n = -1;
  if (addr.ss_family == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(&addr);
    uv_ip4_name(in, host, sizeof host);
    n = std::snprintf(out, size, "%s:%u", host, static_cast<unsigned>(ntohs(in->sin_port)));
  } else if (addr.ss_family == AF_INET6) {
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(&addr);
    uv_ip6_name(in6, host, sizeof host);
    n = std::snprintf(out, size, "[%s]:%u", host, static_cast<unsigned>(ntohs(in6->sin6_port)));
  } else if (addr.ss_family == AF_UNIX) {
    const auto* un = reinterpret_cast<const sockaddr_un*>(&addr);
    n = std::snprintf(out, size, "%.*s:0",
                      static_cast<int>(strnlen(un->sun_path, sizeof un->sun_path)), un->sun_path);
  }
  if (n < 0) {  // another family, or an encoding error
    out[0] = '\0';
    return 0;
  }
  return std::strlen(out);
}

}  // namespace sp::net
