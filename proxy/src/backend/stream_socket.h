// A backend connection's socket: TCP to host:port, or a Unix socket for a shard whose address is
// a path ("unix:/run/redis.sock" in the config). Both connection kinds (the shared pipelined one
// and the dedicated one) read, write and close it as a uv_stream_t, whichever it is.
#pragma once

#include <uv.h>

#include <string>

#include "route/topology.h"

namespace sp::backend {

union StreamSocket {
  uv_handle_t handle;
  uv_stream_t stream;
  uv_tcp_t tcp;
  uv_pipe_t pipe;
};

// uv_tcp_init or uv_pipe_init, by the address's kind, with handle.data = data.
void initStreamSocket(uv_loop_t* loop, const route::ShardAddress& address, StreamSocket* socket,
                      void* data);

// Starts connecting an initialised socket; `cb` reports the outcome. False with *error when the
// attempt cannot start (the host does not resolve, no socket).
bool connectStreamSocket(const route::ShardAddress& address, StreamSocket* socket,
                         uv_connect_t* req, uv_connect_cb cb, std::string* error);

}  // namespace sp::backend
