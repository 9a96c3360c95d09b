// TCP keepalive on client and shard connections (limits.tcp_keepalive), set the way redis-server
// sets it, so that a peer that vanished without a FIN (a crashed host, a dropped NAT entry) is
// noticed and its connection closed instead of lingering.
#pragma once

#include <uv.h>

#include <cstdint>

namespace sp::net {

// seconds > 0: the first probe after `seconds` without traffic, then one every seconds / 3 (at
// least 1), and the connection fails after 3 unanswered probes (redis-server's anetKeepAlive).
// 0 turns keepalive off. Best effort: a socket that refuses an option keeps the kernel default.
void setTcpKeepAlive(uv_tcp_t* tcp, uint32_t seconds);

}  // namespace sp::net
