// Backend sockets: TCP or Unix.
#include "backend/stream_socket.h"

#include <array>

#include "backend/resolve.h"
#include "resp/encoder.h"

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

void appendAuth(std::string& out, std::string_view username, std::string_view password) {
  if (username.empty()) {
    resp::appendCommand(out, std::array<std::string_view, 2>{"AUTH", password});
  } else {
    resp::appendCommand(out, std::array<std::string_view, 3>{"AUTH", username, password});
  }
}

Status connectStreamSocket(const route::ShardAddress& address, StreamSocket* socket,
                           uv_connect_t* req, uv_connect_cb cb) {
  if (address.isUnixSocket()) {
    // Errors (no such file, refused) come through cb, as TCP's do.
    uv_pipe_connect(req, &socket->pipe, address.host.c_str(), cb);
    return Status();
  }
  sockaddr_storage addr;
  if (!resolveAddress(address.host, address.port, &addr)) {
    return Status::failure("cannot resolve host");
  }
  const int rc = uv_tcp_connect(req, &socket->tcp, reinterpret_cast<const sockaddr*>(&addr), cb);
  if (rc != 0) {
    return Status::failure(uv_strerror(rc));
  }
  return Status();
}

std::unique_ptr<tls::TlsChannel> makeTlsChannel(std::shared_ptr<const tls::TlsContext> context,
                                                const route::ShardAddress& address) {
  if (context == nullptr || address.isUnixSocket()) {
    return nullptr;
  }
  return std::make_unique<tls::TlsChannel>(std::move(context), address.host);
}

void sendTlsAlert(tls::TlsChannel& tls, uv_stream_t* stream) {
  char alert[256];  // an alert record is 7 bytes (31 under TLS 1.3's record layer)
  const size_t n = tls.takeCipher(alert, sizeof alert);
  if (n > 0) {
    uv_buf_t buf = uv_buf_init(alert, static_cast<unsigned>(n));
    uv_try_write(stream, &buf, 1);
  }
}

Status readTlsPlaintext(tls::TlsChannel& tls, Buffer& in) {
  constexpr size_t kReadSpace = 16 * 1024;  // a TLS record's plaintext at most
  for (;;) {
    if (!in.tryEnsureWritable(kReadSpace)) {
      return Status::failure("out of memory for the reply");
    }
    const ptrdiff_t n = tls.readPlain(in.writePtr(), in.writable());
    if (n < 0) {
      return Status::failure(tls.error());
    }
    if (n == 0) {
      return Status();
    }
    in.commit(static_cast<size_t>(n));
  }
}

Status sealTlsRecords(tls::TlsChannel& tls, Buffer& out, Buffer& wire) {
  if (!out.empty()) {
    const ptrdiff_t n = tls.writePlain(out.readPtr(), out.size());
    if (n < 0) {
      return Status::failure(tls.error());
    }
    out.consume(static_cast<size_t>(n));
  }
  const size_t pending = tls.pendingCipher();
  if (!wire.tryEnsureWritable(pending)) {
    return Status::failure("out of memory for TLS records");
  }
  wire.commit(tls.takeCipher(wire.writePtr(), pending));
  return Status();
}

std::string_view readFailure(ssize_t nread) {
  return nread == UV_EOF       ? "connection closed by the server"
         : nread == UV_ENOBUFS ? "out of memory for the reply"
                               : uv_strerror(static_cast<int>(nread));
}

}  // namespace sp::backend
