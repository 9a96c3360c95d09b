// Listening sockets: one per worker on the same address, with SO_REUSEPORT so the kernel spreads
// connections over workers. libuv 1.44 has no flag for it, so the socket is made here; the worker
// listens on it and accepts from it itself (net/worker.h says why not through uv_listen).
#pragma once

#include <cstdint>
#include <string>

namespace sp::net {

// A listening socket handed to a worker, and what its clients speak.
struct ListenSocket {
  int fd = -1;
  bool tls = false;  // tls.listen's: each client starts with a TLS handshake
};

// Creates, configures (SO_REUSEADDR, SO_REUSEPORT, non-blocking) and binds a TCP socket.
// Returns the fd, or -1 with *error set. *bound_port receives the port actually bound.
// True when something already holds host:port. SO_REUSEPORT would otherwise let a second proxy
// (same user) silently share the port with the first.
bool portTaken(const std::string& host, uint16_t port);

int bindListenSocket(const std::string& host, uint16_t port, uint16_t* bound_port,
                     std::string* error);

// True when a process accepts connections on the Unix socket at `path`.
bool unixSocketAnswers(const std::string& path);

// Creates and binds a non-blocking Unix stream socket at `path`, replacing a socket file that no
// process answers on, and gives it `mode` (0: as the umask leaves it). The workers share it.
// Returns the fd, or -1 with *error set.
int bindUnixListenSocket(const std::string& path, uint32_t mode, std::string* error);

}  // namespace sp::net
