// Pipelined backend connection: connect, batched writes, reply framing, failure and reconnect.
#include "backend/backend_conn.h"

#include <algorithm>
#include <cstring>

#include <spdlog/spdlog.h>

#include "backend/cluster_redirector.h"
#include "backend/stream_socket.h"
#include "backend/worker_backends.h"
#include "core/assert.h"
#include "core/clock.h"
#include "metrics/latency_histogram.h"
#include "net/worker.h"
#include "resp/errors.h"

namespace sp::backend {
namespace {

constexpr std::string_view kPing = "*1\r\n$4\r\nPING\r\n";

// -MOVED <slot> <addr> or -ASK <slot> <addr>: the cluster sends the request elsewhere.
bool isRedirect(std::string_view reply) {
  return reply.size() > 6 && reply[0] == '-' &&
         (reply.substr(1, 6) == "MOVED " || reply.substr(1, 4) == "ASK ");
}

// One backend reply to a client request (a fragment, for a split one), before it is handed on:
// the shard's duration histogram, error replies, MOVED/ASK/TRYAGAIN. now_ns: when the read that
// carried the reply returned (one clock read per read, not per reply). The duration is kept in
// the request, so the request's own histogram reuses it when this reply completes it.
void observeBackendReply(net::ShardStats& stats, InFlightRequest& request, std::string_view reply,
                         uint64_t now_ns) {
  if constexpr (metrics::kMetricsEnabled) {
    request.reply_us = (now_ns - request.start_ns) / 1000;
    const size_t bucket = metrics::latencyBucket(request.reply_us);
    request.reply_bucket = static_cast<uint8_t>(bucket);
    stats.duration.observe(request.reply_us, bucket);
  }
  if (!reply.empty() && reply[0] == '-') {
    stats.reply_errors.add();
    if (reply.starts_with("-MOVED ")) {
      stats.moved.add();
    } else if (reply.starts_with("-ASK ")) {
      stats.ask.add();
    } else if (reply.starts_with("-TRYAGAIN")) {
      stats.tryagain.add();
    }
  }
}

}  // namespace

BackendConn::BackendConn(net::Worker& worker, uint16_t shard, route::ShardAddress address,
                         Credentials credentials, bool replica, resp::Protocol protocol)
    : worker_(worker),
      stats_(replica ? worker.stats().replica_shards[shard] : worker.stats().shards[shard]),
      shard_(shard),
      address_(std::move(address)),
      credentials_(std::move(credentials)),
      protocol_(protocol),
      replica_(replica),
      link_(worker, *this, kMinReadSpace, 0) {}

BackendConn::~BackendConn() { SP_ASSERT(fifo_.empty()); }

std::string BackendConn::unavailableError(std::string_view reason) const {
  return resp::err::shardUnavailable(address_.label(), reason);
}

const char* standingName(Standing standing) {
  switch (standing) {
    case Standing::kServing:
      return "serving";
    case Standing::kEjected:
      return "ejected";
    case Standing::kProbing:
      return "probing";
    case Standing::kRetiring:
      return "retiring";
    case Standing::kShutDown:
      return "shut down";
  }
  return "unknown";
}

bool canMove(Standing from, Standing to) {
  switch (from) {
    case Standing::kServing:
      return to == Standing::kEjected || to == Standing::kRetiring || to == Standing::kShutDown;
    case Standing::kEjected:
      return to == Standing::kProbing || to == Standing::kRetiring || to == Standing::kShutDown;
    case Standing::kProbing:
      return to == Standing::kServing || to == Standing::kEjected || to == Standing::kRetiring ||
             to == Standing::kShutDown;
    case Standing::kRetiring:
      return to == Standing::kShutDown;
    case Standing::kShutDown:
      return false;
  }
  return false;
}

void BackendConn::enter(Standing next) {
  SP_ASSERT(canMove(standing_, next));
  if (!failsFast(standing_) && failsFast(next)) {
    stats_.ejections.add();
    stats_.ejected.add();
  } else if (failsFast(standing_) && !failsFast(next)) {
    stats_.ejected.sub();
  }
  standing_ = next;
}

std::string BackendConn::ejectedError() const {
  if (standing_ == Standing::kShutDown) {
    return unavailableError("proxy shutting down");
  }
  return unavailableError("ejected after " +
                          std::to_string(worker_.config().backend_failure_limit) +
                          " failures (last: " + last_failure_ + ")");
}

net::BackendState BackendConn::state() const {
  if (failsFast(standing_)) {
    return net::BackendState::kEjected;
  }
  switch (link_.state()) {
    case ShardLink::State::kUp:
      return net::BackendState::kUp;
    case ShardLink::State::kConnecting:
      return net::BackendState::kConnecting;
    case ShardLink::State::kClosed:
      break;
  }
  return net::BackendState::kDown;
}

void BackendConn::start() {
  timer_ = worker_.timers().timer("shard.link", [this] { onTimer(); });
  request_timer_ = worker_.timers().timer("shard.request", [this] { onRequestTimer(); });
  connect();
}

void BackendConn::connect() {
  if (link_.connect(address_)) {
    timer_->start(worker_.config().backend_connect_timeout_ms);
  }
}

void BackendConn::onLinkHandshaking() {
  // Still connecting until the handshake is done, under the same time limit.
  timer_->start(worker_.config().backend_connect_timeout_ms);
  worker_.flushes().markShard(this);  // the ClientHello
}

void BackendConn::onLinkUp() {
  timer_->stop();
  stats_.connects.add();
  if (ever_up_) {
    stats_.reconnects.add();
  }
  stats_.connections_up.add();
  // What a fresh connection must say before anything queued while it was connecting: AUTH
  // first, then HELLO 3 on a RESP3 connection, then READONLY on a cluster replica.
  if (replica_ && worker_.config().cluster_mode) {
    prepend("*1\r\n$8\r\nREADONLY\r\n", OpKind::kReadOnly);
  }
  if (protocol_ == resp::Protocol::kResp3) {
    prepend("*2\r\n$5\r\nHELLO\r\n$1\r\n3\r\n", OpKind::kHello);
  }
  if (!credentials_.password.empty()) {
    std::string auth;
    appendAuth(auth, credentials_.username, credentials_.password);
    prepend(auth, OpKind::kAuth);
  }
  if (standing_ == Standing::kProbing) {
    queue(kPing, nullptr, 0, OpKind::kPing, false);
    ping_outstanding_ = true;
  }
  spdlog::debug("worker {}: connected to {}", worker_.index(), address_.label());
  if (!fifo_.empty()) {
    startStallClock();
    armRequestTimer();
  }
  if (link_.hasPending()) {
    worker_.flushes().markShard(this);  // what was queued, and the handshake's last records
  }
}

void BackendConn::prepend(std::string_view bytes, OpKind kind) {
  Buffer& out = link_.out();
  Buffer queued;
  queued.swap(out);
  out.append(bytes);
  out.append(queued.view());
  BackendOp* op = opsOf(worker_).acquire();
  op->request = nullptr;
  op->fragment = 0;
  op->kind = kind;
  op->slow = false;
  fifo_.pushFront(op);
  ++unsent_ops_;  // only before the first flush, when every op is still unsent
  stats_.inflight.add();
}

void BackendConn::sendAsking() {
  SP_ASSERT(accepting());
  queue("*1\r\n$6\r\nASKING\r\n", nullptr, 0, OpKind::kAsking, false);
}

void BackendConn::send(std::string_view bytes, InFlightRequest* request, uint32_t fragment) {
  SP_ASSERT(accepting());
  stats_.requests.add();
  if (replica_) {
    stats_.replica_reads.add();
  }
  queue(bytes, request, fragment, OpKind::kRequest, worker_.slowCommand(request->cmd));
}

void BackendConn::queue(std::string_view bytes, InFlightRequest* request, uint32_t fragment,
                        OpKind kind, bool slow) {
  // The bytes first: when they do not fit in memory (std::bad_alloc, handled by the client's
  // session), no op is left waiting for a reply to a command that was never sent.
  link_.out().append(bytes);
  BackendOp* op = opsOf(worker_).acquire();
  op->request = request;
  op->fragment = fragment;
  op->kind = kind;
  op->slow = slow;
  const bool was_empty = fifo_.empty();
  fifo_.push(op);
  ++unsent_ops_;
  if (slow) {
    ++slow_ops_;
  }
  stats_.inflight.add();
  if (link_.up()) {
    worker_.flushes().markShard(this);
    if (was_empty) {
      startStallClock();  // nothing was outstanding: the clock starts now
      armRequestTimer();
    }
  }
}

void BackendConn::startStallClock() {
  stall_.restart(worker_.timers().nowMs(), link_.writeQueue());
}

uint64_t BackendConn::stallLimitMs() const {
  const auto& cfg = worker_.config();
  return slow_ops_ > 0 ? std::max(cfg.backend_slow_timeout_ms, cfg.backend_timeout_ms)
                       : cfg.backend_timeout_ms;
}

void BackendConn::armRequestTimer() {
  if (!request_timer_armed_) {
    request_timer_armed_ = true;
    request_timer_->start(stallLimitMs());
  }
}

void BackendConn::ping() {
  const bool pinged = standing_ == Standing::kServing || standing_ == Standing::kRetiring;
  if (link_.up() && !ping_outstanding_ && pinged) {
    ping_outstanding_ = true;
    queue(kPing, nullptr, 0, OpKind::kPing, false);
  }
}

size_t BackendConn::trimBuffers() { return link_.trim(kBufferKeepBytes); }

void BackendConn::flush() {
  dirty = false;
  switch (link_.flush()) {
    case ShardLink::Flushed::kNothing:
    case ShardLink::Flushed::kFailed:
      return;
    case ShardLink::Flushed::kDone:
      break;
    case ShardLink::Flushed::kQueued:
      onLinkBackedUp();
      break;
  }
  if (link_.out().empty()) {
    unsent_ops_ = 0;  // every queued request's bytes are now the kernel's or libuv's
  }
}

void BackendConn::onLinkBackedUp() {
  // The queued write is the baseline from which the shard is seen to take it.
  stall_.restart(worker_.timers().freshNowMs(), link_.writeQueue(), link_.kernelQueue());
}

void BackendConn::onLinkWritten() {
  // The socket was backed up: the kernel's queue is the baseline from which the shard is seen to
  // take the rest.
  stall_.restart(worker_.timers().freshNowMs(), 0, link_.kernelQueue());
  if (link_.hasPending()) {
    worker_.flushes().markShard(this);
  }
}

void BackendConn::onLinkFlushWanted() { worker_.flushes().markShard(this); }

void BackendConn::onLinkRead(size_t /*nread*/) {
  read_ns_ = metrics::kMetricsEnabled ? monoNanos() : 0;
  // Progress: the armed timer (if any) sees it when it fires, and goes quiet if the FIFO is
  // empty by then.
  stall_.progress(worker_.timers().nowMs());
  timeout_confirming_ = false;
}

void BackendConn::onLinkReply(std::string_view reply) {
  if (fifo_.empty()) {
    link_.protocolError("reply without a request");
    return;
  }
  complete(reply);
}

void BackendConn::onLinkFailed(std::string_view reason, ShardLink::Failure kind) {
  if (kind == ShardLink::Failure::kConnect) {
    stats_.connect_failures.add();
  }
  fail(reason);
}

void BackendConn::complete(std::string_view reply) {
  BackendOp* op = fifo_.pop();
  stats_.inflight.sub();
  InFlightRequest* request = op->request;
  const uint32_t fragment = op->fragment;
  const OpKind kind = op->kind;
  if (op->slow) {
    --slow_ops_;
  }
  opsOf(worker_).release(op);  // a reply comes only for sent ops: unsent_ops_ is 0 here
  if (kind == OpKind::kRequest) {
    // The duration histogram, error replies, MOVED/ASK.
    observeBackendReply(stats_, *request, reply, read_ns_);
  }
  if (standing_ == Standing::kRetiring && fifo_.empty()) {
    // The last request sent before the connection was replaced has its reply: deliver it (or
    // follow its redirect), then close. Nothing else will be sent here.
    if (kind == OpKind::kRequest) {
      deliver(request, fragment, reply);
    }
    shutdown();
    return;
  }
  switch (kind) {
    case OpKind::kRequest:
      healthy();
      deliver(request, fragment, reply);
      return;
    case OpKind::kAsking:
      return;
    case OpKind::kReadOnly:
      if (resp::isError(reply) && worker_.logLimiter().allow()) {
        spdlog::warn("worker {}: {} refused READONLY: {}", worker_.index(), address_.label(),
                     reply.substr(1, reply.size() - 3));
      }
      return;
    case OpKind::kPing:
      ping_outstanding_ = false;
      if (reply.starts_with("-BUSY") || reply.starts_with("-LOADING")) {
        // Alive, busy in a script or loading its data: requests get that error from the shard
        // itself, as they would from redis-server. Not a failure, and not a reason to eject.
        stats_.ping_busy.add();
        healthy();
        return;
      }
      if (resp::isError(reply)) {
        stats_.ping_failures.add();
        fail("PING answered " + std::string(reply.substr(1, reply.size() - 3)));
        return;
      }
      healthy();
      return;
    case OpKind::kAuth:
      if (resp::isError(reply)) {
        fail("authentication failed: " + std::string(reply.substr(1, reply.size() - 3)));
        return;
      }
      return;
    case OpKind::kHello:
      if (resp::isError(reply)) {
        fail("RESP3 refused: " + std::string(reply.substr(1, reply.size() - 3)));
        return;
      }
      return;
  }
}

void BackendConn::deliver(InFlightRequest* request, uint32_t fragment, std::string_view reply) {
  if (worker_.config().cluster_mode && resp::isError(reply)) {
    if (isRedirect(reply) && redirectorOf(worker_).redirect(request, fragment, reply)) {
      return;  // sent again to the node the cluster named
    }
    if (reply.starts_with("-TRYAGAIN") &&
        redirectorOf(worker_).retryLater(request, fragment, address_, reply)) {
      return;  // sent here again after a pause
    }
  }
  deliverReply(worker_, request, fragment, reply);
}

void BackendConn::healthy() {
  failures_ = 0;
  reconnect_ms_ = 0;
  if (failsFast(standing_)) {
    if (standing_ == Standing::kEjected) {
      enter(Standing::kProbing);  // not expected (ejection closes the socket), but legal
    }
    enter(Standing::kServing);
    eject_ms_ = 0;
    spdlog::info("worker {}: {} re-admitted", worker_.index(), address_.label());
  } else if (!ever_up_) {
    spdlog::debug("worker {}: {} up", worker_.index(), address_.label());
  }
  ever_up_ = true;
}

void BackendConn::failOp(BackendOp* op, const std::string& error) {
  stats_.inflight.sub();
  if (op->slow) {
    --slow_ops_;
  }
  InFlightRequest* request = op->request;
  const uint32_t fragment = op->fragment;
  const bool is_request = op->kind == OpKind::kRequest;
  opsOf(worker_).release(op);
  if (is_request) {
    stats_.errors.add();
    deliverUnavailable(worker_, request, fragment, error);
  }
}

void BackendConn::failAllOps(std::string_view reason) {
  unsent_ops_ = 0;
  if (fifo_.empty()) {
    return;
  }
  std::string error = unavailableError(reason);
  while (!fifo_.empty()) {
    failOp(fifo_.pop(), error);
  }
}

void BackendConn::failSentOps(std::string_view reason) {
  if (fifo_.size() <= unsent_ops_) {
    return;
  }
  std::string error = unavailableError(reason);
  // Answering a request cannot queue on this connection (it is closed), so the count holds.
  for (size_t sent = fifo_.size() - unsent_ops_; sent > 0; --sent) {
    failOp(fifo_.pop(), error);
  }
}

void BackendConn::closeSocket(bool keep_unsent) {
  if (link_.up()) {
    stats_.connections_up.sub();
  }
  link_.close(keep_unsent);
  if (timer_ != nullptr) {
    timer_->stop();
    request_timer_->stop();
  }
  request_timer_armed_ = false;
  timeout_confirming_ = false;
  ping_outstanding_ = false;
}

void BackendConn::fail(std::string_view reason, bool keep_unsent) {
  if (standing_ == Standing::kShutDown) {
    return;
  }
  const bool was_up = link_.up();
  last_failure_ = std::string(reason);
  ++failures_;
  if (worker_.config().cluster_mode) {
    worker_.requestTopologyRefresh();  // a failed node may have been failed over
  }
  // Requests whose bytes never left (the link's out()) wait for the next connection after a stall;
  // a write in flight may have reached the shard, so its requests fail with the rest.
  keep_unsent = keep_unsent && standing_ == Standing::kServing && timer_ != nullptr &&
                failures_ < worker_.config().backend_failure_limit;
  closeSocket(keep_unsent);
  if (keep_unsent) {
    failSentOps(reason);
  } else {
    failAllOps(reason);
  }
  if (standing_ == Standing::kRetiring) {
    shutdown();
    return;
  }
  if (timer_ == nullptr) {
    return;
  }
  const auto& cfg = worker_.config();
  uint32_t delay = 0;
  if (failsFast(standing_)) {
    // A probe failed: stay ejected, for longer.
    if (standing_ == Standing::kProbing) {
      enter(Standing::kEjected);
    }
    eject_ms_ = std::min(eject_ms_ * 2, cfg.backend_retry_timeout_max_ms);
    delay = eject_ms_;
    spdlog::debug("worker {}: probe of {} failed: {}", worker_.index(), address_.label(), reason);
  } else if (failures_ >= cfg.backend_failure_limit) {
    enter(Standing::kEjected);
    eject_ms_ = cfg.backend_retry_timeout_ms;
    delay = eject_ms_;
    spdlog::warn("worker {}: {} ejected after {} failures (last: {}); probing in {} ms",
                 worker_.index(), address_.label(), failures_, reason, delay);
  } else {
    reconnect_ms_ = reconnect_ms_ == 0 ? cfg.backend_reconnect_min_ms
                                       : std::min(reconnect_ms_ * 2, cfg.backend_reconnect_max_ms);
    delay = reconnect_ms_;
    if (was_up) {
      spdlog::warn("worker {}: {} down: {}", worker_.index(), address_.label(), reason);
    }
  }
  timer_->start(delay);
}

void BackendConn::retire() {
  if (standing_ == Standing::kRetiring || standing_ == Standing::kShutDown) {
    return;
  }
  enter(Standing::kRetiring);
  if (fifo_.empty()) {
    shutdown();
  }
}

void BackendConn::onTimer() {
  if (standing_ == Standing::kShutDown) {
    return;
  }
  if (link_.connecting()) {
    stats_.connect_failures.add();
    fail(link_.handshakeStarted() ? "TLS handshake timeout" : "connect timeout");
    return;
  }
  if (link_.closing()) {
    timer_->start(1);
    return;
  }
  if (standing_ == Standing::kEjected) {
    enter(Standing::kProbing);
  }
  connect();
}

void BackendConn::onRequestTimer() {
  request_timer_armed_ = false;
  if (standing_ == Standing::kShutDown || !link_.up() || fifo_.empty()) {
    timeout_confirming_ = false;
    return;
  }
  const uint64_t limit = stallLimitMs();
  const uint64_t left =
      stall_.check(worker_.timers().nowMs(), link_.writeQueue(), link_.kernelQueue(), limit);
  if (left > 0) {
    request_timer_armed_ = true;  // bytes moved since it was armed: wait for the rest
    timeout_confirming_ = false;
    request_timer_->start(left);
    return;
  }
  if (!timeout_confirming_) {
    // libuv runs due timers before it polls, so after the worker itself was descheduled for
    // longer than the timeout, replies may be waiting unread in the socket. Look once more
    // after the next poll before failing the connection.
    timeout_confirming_ = true;
    request_timer_armed_ = true;
    request_timer_->start(1);
    return;
  }
  timeout_confirming_ = false;
  stats_.timeouts.add();
  fail("timeout after " + std::to_string(limit) + " ms", true);
}

void BackendConn::shutdown() {
  if (standing_ == Standing::kShutDown) {
    return;
  }
  closeSocket(false);
  enter(Standing::kShutDown);
  timer_.reset();
  request_timer_.reset();
  failAllOps("proxy shutting down");
}

}  // namespace sp::backend
