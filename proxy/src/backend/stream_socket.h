// A backend connection's socket: TCP to host:port, or a Unix socket for a shard whose address is
// a path ("unix:/run/redis.sock" in the config), and the socket steps of a shard connection as
// plain functions. ShardLink (shard_link.h), the core under both connection kinds, reads, writes
// and closes it as a uv_stream_t, whichever it is.
#pragma once

#include <uv.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "core/buffer.h"
#include "core/status.h"
#include "route/topology.h"
#include "tls/tls_channel.h"

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

// Starts connecting an initialised socket; `cb` reports the outcome. Fails when the attempt cannot
// start (the host does not resolve, no socket).
Status connectStreamSocket(const route::ShardAddress& address, StreamSocket* socket,
                           uv_connect_t* req, uv_connect_cb cb);

// The AUTH the proxy sends first on a shard connection: "AUTH password", or "AUTH username
// password" with a user, appended to `out`.
void appendAuth(std::string& out, std::string_view username, std::string_view password);

// libuv's alloc callback of a shard link (shard_link.h): where the next read goes. Under TLS, the
// worker's shared read buffer (`shared`: ciphertext, fed to the channel at once, the plaintext
// going to `in`); else `in`'s free space, grown to at least `min_space`, or none when memory runs
// out (the read callback then gets UV_ENOBUFS). Inline: once per read.
inline uv_buf_t readSpace(bool tls, uv_buf_t shared, Buffer& in, size_t min_space) {
  if (tls) {
    return shared;
  }
  if (!in.tryEnsureWritable(min_space)) {
    return uv_buf_init(nullptr, 0);
  }
  return uv_buf_init(in.writePtr(), static_cast<unsigned>(in.writable()));
}

// The write step of a shard link: as much of `wire` as the socket takes at once
// (uv_try_write), and the rest moved into `in_flight` (which must be empty) and handed to libuv
// in one uv_write(req, cb); req->data is the caller's. kQueued: that write is in flight and its
// callback will report; kFailed: nothing is in flight, *error is libuv's code. `wire` is empty
// after kDone and kQueued. Inline: once per flush on the request path.
enum class WriteStep : uint8_t { kDone, kQueued, kFailed };
inline WriteStep writeOrQueue(StreamSocket* socket, Buffer& wire, Buffer& in_flight,
                              uv_write_t* req, uv_write_cb cb, int* error) {
  uv_buf_t buf = uv_buf_init(const_cast<char*>(wire.readPtr()), static_cast<unsigned>(wire.size()));
  const int n = uv_try_write(&socket->stream, &buf, 1);
  if (n == static_cast<int>(wire.size())) {
    wire.clear();
    return WriteStep::kDone;
  }
  if (n < 0 && n != UV_EAGAIN) {
    *error = n;
    return WriteStep::kFailed;
  }
  if (n > 0) {
    wire.consume(static_cast<size_t>(n));
  }
  in_flight.swap(wire);
  wire.clear();
  buf =
      uv_buf_init(const_cast<char*>(in_flight.readPtr()), static_cast<unsigned>(in_flight.size()));
  const int rc = uv_write(req, &socket->stream, &buf, 1, cb);
  if (rc != 0) {
    in_flight.clear();
    *error = rc;
    return WriteStep::kFailed;
  }
  return WriteStep::kQueued;
}

// A failed read (nread < 0) in the words the connection's requests are failed with.
std::string_view readFailure(ssize_t nread);

// A TLS channel for a connection to `address` under backend.tls (`context`; nullptr: plain).
// Always nullptr for a Unix socket shard: redis-server speaks TLS on TCP only.
std::unique_ptr<tls::TlsChannel> makeTlsChannel(std::shared_ptr<const tls::TlsContext> context,
                                                const route::ShardAddress& address);

// Best effort, before closing a TLS connection that failed: the alert the channel wrote ("unknown
// CA", "handshake failure") goes out if the socket takes it at once, so the peer logs the reason
// rather than an unexpected end of file.
void sendTlsAlert(tls::TlsChannel& tls, uv_stream_t* stream);

// backend.tls, reading: every plaintext byte the channel holds, appended to `in`. Fails when the
// channel fails or memory runs out.
Status readTlsPlaintext(tls::TlsChannel& tls, Buffer& in);

// backend.tls, writing: `out` sealed into records (taken whole once the handshake is done, left
// alone before) and every pending record appended to `wire`.
Status sealTlsRecords(tls::TlsChannel& tls, Buffer& out, Buffer& wire);

}  // namespace sp::backend
