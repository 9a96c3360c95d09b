// BackendConn: one long-lived, pipelined connection from a worker to a shard.
//
// Requests of many clients are appended to one output buffer and recorded, in send order, in a
// FIFO of BackendOps. Each reply (framed by ReplyScanner, never parsed into values) completes the
// front op. When the connection fails, every op in the FIFO is answered with
// "-ERR shard <name> (<addr>) unavailable: <reason>" in order, and it reconnects with backoff.
#pragma once

#include <uv.h>

#include <string>
#include <string_view>

#include "core/buffer.h"
#include "core/intrusive_queue.h"
#include "net/worker_stats.h"
#include "resp/reply_reader.h"
#include "resp/reply_scanner.h"
#include "route/topology.h"
#include "session/pending_request.h"

namespace sp::net {
class Worker;
}

namespace sp::backend {

class BackendConn {
 public:
  BackendConn(net::Worker& worker, uint16_t shard, route::ShardAddress address);
  ~BackendConn();
  BackendConn(const BackendConn&) = delete;
  BackendConn& operator=(const BackendConn&) = delete;

  void start();     // first connect
  void shutdown();  // close for good (worker exit)

  // True when a request sent now would be queued (connected or connecting); false when the
  // shard is down and requests should fail fast.
  bool accepting() const { return state_ != net::BackendState::kDown && !shut_down_; }

  // Queues `bytes` (one complete command) for the shard; `request` gets the reply (fragment
  // `fragment` for split requests). Requires accepting().
  void send(std::string_view bytes, session::PendingRequest* request, uint32_t fragment);

  void flush();  // called by the worker's check phase when dirty
  void ping();   // health check: a PING that shares the pipeline
  bool dirty = false;

  net::BackendState state() const { return state_; }
  const route::ShardAddress& address() const { return address_; }
  uint16_t shard() const { return shard_; }
  std::string unavailableError(std::string_view reason) const;

 private:
  static void onConnectCb(uv_connect_t* req, int status);
  static void onAllocCb(uv_handle_t* handle, size_t suggested, uv_buf_t* buf);
  static void onReadCb(uv_stream_t* stream, ssize_t nread, const uv_buf_t* buf);
  static void onWriteCb(uv_write_t* req, int status);
  static void onCloseCb(uv_handle_t* handle);
  static void onTimerCb(uv_timer_t* timer);

  void connect();
  void onConnected(int status);
  void onRead(ssize_t nread);
  void fail(std::string_view reason);  // close the socket, answer every op, schedule reconnect
  void failAllOps(std::string_view reason);
  void complete(std::string_view reply);

  net::Worker& worker_;
  net::ShardStats& stats_;
  uint16_t shard_;
  route::ShardAddress address_;
  net::BackendState state_ = net::BackendState::kDown;
  bool shut_down_ = false;
  bool tcp_open_ = false;     // tcp_ initialised and not yet closed
  bool tcp_closing_ = false;  // uv_close(tcp_) issued, close callback not yet run
  bool writing_ = false;      // a uv_write of write_buf_ is in flight
  bool ping_outstanding_ = false;
  uint32_t backoff_ms_ = 0;
  std::string fail_reason_;

  uv_tcp_t tcp_{};
  uv_connect_t connect_req_{};
  uv_write_t write_req_{};
  uv_timer_t timer_{};  // connect timeout while connecting, reconnect delay while down
  bool timer_open_ = false;

  Buffer out_;        // bytes not yet handed to the kernel
  Buffer write_buf_;  // bytes of the uv_write in flight
  Buffer in_;         // replies received, not yet complete
  resp::ReplyScanner scanner_;
  IntrusiveQueue<session::BackendOp, &session::BackendOp::next> fifo_;
};

}  // namespace sp::backend
