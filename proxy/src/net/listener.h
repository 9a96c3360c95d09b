// Listening sockets: one per worker on the same address, with SO_REUSEPORT so the kernel spreads
// connections over workers. libuv 1.44 has no flag for it, so the socket is made here; the worker
// listens on it and accepts from it itself (net/worker.h says why not through uv_listen).
#pragma once

#include <cstdint>
#include <string>

#include "core/status.h"

namespace sp::net {

// A listening socket handed to a worker, and what its clients speak.
struct ListenSocket {
  int fd = -1;
  bool tls = false;  // tls.listen's: each client starts with a TLS handshake
};

// True when something already holds host:port. SO_REUSEPORT would otherwise let a second proxy
// (same user) silently share the port with the first.
bool portTaken(const std::string& host, uint16_t port);

// Creates, configures (SO_REUSEADDR, SO_REUSEPORT, non-blocking) and binds a TCP socket: its fd
// into *fd_out, the port actually bound into *bound_port.
Status bindListenSocket(const std::string& host, uint16_t port, uint16_t* bound_port, int* fd_out);

// True when a process accepts connections on the Unix socket at `path`.
bool unixSocketAnswers(const std::string& path);

// Creates and binds a non-blocking Unix stream socket at `path`, replacing a socket file that no
// process answers on, and gives it `mode` (0: as the umask leaves it). The workers share it.
// Its fd into *fd_out.
Status bindUnixListenSocket(const std::string& path, uint32_t mode, int* fd_out);

}  // namespace sp::net
