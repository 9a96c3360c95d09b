// Backend sockets: TCP or Unix.
#include "backend/stream_socket.h"

#include "backend/resolve.h"

namespace sp::backend {

void initStreamSocket(uv_loop_t* loop, const route::ShardAddress& address, StreamSocket* socket,
                      void* data) {
  if (address.isUnixSocket()) {
    uv_pipe_init(loop, &socket->pipe, 0);
  } else {
    uv_tcp_init(loop, &socket->tcp);
  }
  socket->handle.data = data;
}

bool connectStreamSocket(const route::ShardAddress& address, StreamSocket* socket,
                         uv_connect_t* req, uv_connect_cb cb, std::string* error) {
  if (address.isUnixSocket()) {
    // Errors (no such file, refused) come through cb, as TCP's do.
    uv_pipe_connect(req, &socket->pipe, address.host.c_str(), cb);
    return true;
  }
  sockaddr_storage addr;
  if (!resolveAddress(address.host, address.port, &addr)) {
    *error = "cannot resolve host";
    return false;
  }
  const int rc = uv_tcp_connect(req, &socket->tcp, reinterpret_cast<const sockaddr*>(&addr), cb);
  if (rc != 0) {
    *error = uv_strerror(rc);
    return false;
  }
  return true;
}

}  // namespace sp::backend
