// Host name or address literal + port -> socket address, for backend connections.
#pragma once

#include <sys/socket.h>

#include <cstdint>
#include <string>

namespace sp::backend {

// Literals (IPv4, IPv6) need no lookup; names go through getaddrinfo (blocking, so callers do it
// once per connection attempt, never per request). False when the name does not resolve.
bool resolveAddress(const std::string& host, uint16_t port, sockaddr_storage* out);

}  // namespace sp::backend
