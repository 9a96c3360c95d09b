// A client's or listener's address as redis-server writes it in CLIENT LIST and the slow log.
#pragma once

#include <sys/socket.h>

#include <cstddef>

namespace sp::net {

// "ip:port" ("[ip]:port" for IPv6, "path:0" for a Unix socket) into out[size], cut to fit; "" for
// any other family. Returns the length written. Allocates nothing.
size_t formatSocketAddress(const sockaddr_storage& addr, char* out, size_t size);

}  // namespace sp::net
