// Pipelined backend connection: connect, batched writes, reply framing, failure and reconnect.
#include "backend/backend_conn.h"

#include <netdb.h>

#include <algorithm>
#include <cstring>

#include <spdlog/spdlog.h>

#include "core/assert.h"
#include "net/worker.h"
#include "session/client_session.h"

namespace sp::backend {
namespace {

constexpr std::string_view kPing = "*1\r\n$4\r\nPING\r\n";
constexpr size_t kMinReadSpace = 64 * 1024;

// Resolves host:port to a socket address; literals need no lookup.
bool resolve(const std::string& host, uint16_t port, sockaddr_storage* out) {
  std::memset(out, 0, sizeof(*out));
  if (uv_ip4_addr(host.c_str(), port, reinterpret_cast<sockaddr_in*>(out)) == 0) {
    return true;
  }
  if (uv_ip6_addr(host.c_str(), port, reinterpret_cast<sockaddr_in6*>(out)) == 0) {
    return true;
  }
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  if (getaddrinfo(host.c_str(), nullptr, &hints, &res) != 0 || res == nullptr) {
    return false;
  }
  std::memcpy(out, res->ai_addr, res->ai_addrlen);
  if (res->ai_family == AF_INET) {
    reinterpret_cast<sockaddr_in*>(out)->sin_port = htons(port);
  } else {
    reinterpret_cast<sockaddr_in6*>(out)->sin6_port = htons(port);
  }
  freeaddrinfo(res);
  return true;
}

}  // namespace

BackendConn::BackendConn(net::Worker& worker, uint16_t shard, route::ShardAddress address)
    : worker_(worker),
      stats_(worker.stats().shards[shard]),
      shard_(shard),
      address_(std::move(address)) {}

BackendConn::~BackendConn() { SP_ASSERT(!tcp_open_ && fifo_.empty()); }

std::string BackendConn::unavailableError(std::string_view reason) const {
  std::string out = "-ERR shard ";
  out += address_.label();
  out += " unavailable: ";
  out += reason;
  out += "\r\n";
  return out;
}

void BackendConn::start() {
  uv_timer_init(worker_.loop(), &timer_);
  timer_.data = this;
  timer_open_ = true;
  connect();
}

void BackendConn::connect() {
  sockaddr_storage addr;
  state_ = net::BackendState::kConnecting;
  if (!resolve(address_.host, address_.port, &addr)) {
    fail("cannot resolve host");
    return;
  }
  uv_tcp_init(worker_.loop(), &tcp_);
  tcp_.data = this;
  tcp_open_ = true;
  connect_req_.data = this;
  int rc = uv_tcp_connect(&connect_req_, &tcp_, reinterpret_cast<const sockaddr*>(&addr),
                          &BackendConn::onConnectCb);
  if (rc != 0) {
    fail(uv_strerror(rc));
    return;
  }
  uv_timer_start(&timer_, &BackendConn::onTimerCb, worker_.config().backend_connect_timeout_ms, 0);
}

void BackendConn::onConnectCb(uv_connect_t* req, int status) {
  auto* self = static_cast<BackendConn*>(req->data);
  if (status == UV_ECANCELED) {
    return;
  }
  self->onConnected(status);
}

void BackendConn::onConnected(int status) {
  if (state_ != net::BackendState::kConnecting) {
    return;
  }
  uv_timer_stop(&timer_);
  if (status < 0) {
    stats_.connect_failures.add();
    fail(uv_strerror(status));
    return;
  }
  state_ = net::BackendState::kUp;
  backoff_ms_ = 0;
  stats_.connects.add();
  stats_.connections_up.add();
  uv_tcp_nodelay(&tcp_, 1);
  uv_read_start(reinterpret_cast<uv_stream_t*>(&tcp_), &BackendConn::onAllocCb,
                &BackendConn::onReadCb);
  spdlog::debug("worker {}: connected to shard {}", worker_.index(), address_.label());
  if (!out_.empty()) {
    worker_.markDirty(this);
  }
}

void BackendConn::send(std::string_view bytes, session::PendingRequest* request,
                       uint32_t fragment) {
  SP_ASSERT(accepting());
  session::BackendOp* op = worker_.ops().acquire();
  op->request = request;
  op->fragment = fragment;
  fifo_.push(op);
  out_.append(bytes);
  stats_.requests.add();
  stats_.inflight.add();
  if (state_ == net::BackendState::kUp) {
    worker_.markDirty(this);
  }
}

void BackendConn::ping() {
  if (state_ == net::BackendState::kUp && !ping_outstanding_ && !shut_down_) {
    ping_outstanding_ = true;
    send(kPing, nullptr, 0);
  }
}

void BackendConn::flush() {
  dirty = false;
  if (state_ != net::BackendState::kUp || writing_ || out_.empty()) {
    return;
  }
  uv_buf_t buf = uv_buf_init(const_cast<char*>(out_.readPtr()), static_cast<unsigned>(out_.size()));
  int n = uv_try_write(reinterpret_cast<uv_stream_t*>(&tcp_), &buf, 1);
  if (n == static_cast<int>(out_.size())) {
    out_.clear();
    return;
  }
  if (n < 0 && n != UV_EAGAIN) {
    fail(uv_strerror(n));
    return;
  }
  if (n > 0) {
    out_.consume(static_cast<size_t>(n));
  }
  SP_ASSERT(write_buf_.empty());
  write_buf_.swap(out_);
  buf = uv_buf_init(const_cast<char*>(write_buf_.readPtr()),
                    static_cast<unsigned>(write_buf_.size()));
  write_req_.data = this;
  int rc = uv_write(&write_req_, reinterpret_cast<uv_stream_t*>(&tcp_), &buf, 1,
                    &BackendConn::onWriteCb);
  if (rc != 0) {
    write_buf_.clear();
    fail(uv_strerror(rc));
    return;
  }
  writing_ = true;
}

void BackendConn::onWriteCb(uv_write_t* req, int status) {
  auto* self = static_cast<BackendConn*>(req->data);
  self->writing_ = false;
  self->write_buf_.clear();
  if (status < 0) {
    if (status != UV_ECANCELED) {
      self->fail(uv_strerror(status));
    }
    return;
  }
  if (!self->out_.empty()) {
    self->worker_.markDirty(self);
  }
}

void BackendConn::onAllocCb(uv_handle_t* handle, size_t /*suggested*/, uv_buf_t* buf) {
  auto* self = static_cast<BackendConn*>(handle->data);
  self->in_.ensureWritable(kMinReadSpace);
  *buf = uv_buf_init(self->in_.writePtr(), static_cast<unsigned>(self->in_.writable()));
}

void BackendConn::onReadCb(uv_stream_t* stream, ssize_t nread, const uv_buf_t* /*buf*/) {
  static_cast<BackendConn*>(stream->data)->onRead(nread);
}

void BackendConn::onRead(ssize_t nread) {
  if (nread < 0) {
    fail(nread == UV_EOF ? "connection closed by the shard" : uv_strerror(static_cast<int>(nread)));
    return;
  }
  in_.commit(static_cast<size_t>(nread));
  while (!in_.empty() && state_ == net::BackendState::kUp) {
    size_t consumed = 0;
    resp::ReplyInfo info;
    resp::ParseStatus st = scanner_.scan(in_.view(), &consumed, &info);
    if (st == resp::ParseStatus::kIncomplete) {
      break;
    }
    if (st == resp::ParseStatus::kError) {
      worker_.stats().protocol_errors_backend.add();
      fail(std::string("protocol error: ") + resp::errorMessage(scanner_.error()));
      return;
    }
    if (fifo_.empty()) {
      worker_.stats().protocol_errors_backend.add();
      fail("protocol error: reply without a request");
      return;
    }
    complete(std::string_view(in_.readPtr(), consumed));
    in_.consume(consumed);
  }
}

void BackendConn::complete(std::string_view reply) {
  session::BackendOp* op = fifo_.pop();
  stats_.inflight.sub();
  session::PendingRequest* request = op->request;
  uint32_t fragment = op->fragment;
  worker_.ops().release(op);
  if (request == nullptr) {
    ping_outstanding_ = false;
    if (resp::isError(reply) && worker_.logLimiter().allow()) {
      spdlog::warn("worker {}: shard {} answered PING with {}", worker_.index(), address_.label(),
                   reply.substr(0, reply.size() - 2));
    }
    return;
  }
  session::ClientSession::onBackendReply(worker_, request, fragment, reply);
}

void BackendConn::failAllOps(std::string_view reason) {
  if (fifo_.empty()) {
    return;
  }
  std::string error = unavailableError(reason);
  while (!fifo_.empty()) {
    session::BackendOp* op = fifo_.front();
    if (op->request != nullptr) {
      stats_.errors.add();
    }
    complete(error);
  }
}

void BackendConn::fail(std::string_view reason) {
  const bool was_up = state_ == net::BackendState::kUp;
  if (was_up) {
    stats_.connections_up.sub();
  }
  state_ = net::BackendState::kDown;
  if (tcp_open_) {
    uv_read_stop(reinterpret_cast<uv_stream_t*>(&tcp_));
    tcp_open_ = false;
    uv_close(reinterpret_cast<uv_handle_t*>(&tcp_), &BackendConn::onCloseCb);
    tcp_closing_ = true;
  }
  if (timer_open_) {
    uv_timer_stop(&timer_);
  }
  fail_reason_ = std::string(reason);
  if (was_up) {
    spdlog::warn("worker {}: shard {} down: {}", worker_.index(), address_.label(), reason);
  } else if (worker_.logLimiter().allow()) {
    spdlog::debug("worker {}: shard {} connect failed: {}", worker_.index(), address_.label(),
                  reason);
  }
  out_.clear();
  in_.clear();
  scanner_.reset();
  ping_outstanding_ = false;
  failAllOps(reason);
  if (shut_down_ || !timer_open_) {
    return;
  }
  const auto& cfg = worker_.config();
  backoff_ms_ = backoff_ms_ == 0 ? cfg.backend_reconnect_min_ms
                                 : std::min(backoff_ms_ * 2, cfg.backend_reconnect_max_ms);
  uv_timer_start(&timer_, &BackendConn::onTimerCb, backoff_ms_, 0);
}

void BackendConn::onCloseCb(uv_handle_t* handle) {
  static_cast<BackendConn*>(handle->data)->tcp_closing_ = false;
}

void BackendConn::onTimerCb(uv_timer_t* timer) {
  auto* self = static_cast<BackendConn*>(timer->data);
  if (self->shut_down_) {
    return;
  }
  if (self->state_ == net::BackendState::kConnecting) {
    self->stats_.connect_failures.add();
    self->fail("connect timeout");
    return;
  }
  if (self->tcp_closing_) {
    uv_timer_start(&self->timer_, &BackendConn::onTimerCb, 1, 0);
    return;
  }
  self->connect();
}

void BackendConn::shutdown() {
  if (shut_down_) {
    return;
  }
  shut_down_ = true;
  if (state_ == net::BackendState::kUp) {
    stats_.connections_up.sub();
  }
  state_ = net::BackendState::kDown;
  if (tcp_open_) {
    uv_read_stop(reinterpret_cast<uv_stream_t*>(&tcp_));
    tcp_open_ = false;
    uv_close(reinterpret_cast<uv_handle_t*>(&tcp_), nullptr);
  }
  if (timer_open_) {
    timer_open_ = false;
    uv_timer_stop(&timer_);
    uv_close(reinterpret_cast<uv_handle_t*>(&timer_), nullptr);
  }
  failAllOps("proxy shutting down");
}

}  // namespace sp::backend
