// Dedicated backend connections: connect, ordered ops, subscriber pushes, failure, idle pool.
#include "backend/dedicated_conn.h"

#include <algorithm>
#include <cstring>

#include <spdlog/spdlog.h>

#include "backend/backend_conn.h"
#include "backend/backend_pool.h"
#include "backend/stream_socket.h"
#include "backend/worker_backends.h"
#include "core/assert.h"
#include "net/worker.h"
#include "resp/errors.h"
#include "resp/reply_reader.h"

namespace sp::backend {
namespace {

constexpr size_t kMinReadSpace = 16 * 1024;
// A buffer that grew past this gives its memory back as soon as it is empty (no periodic trim
// visits these connections). Large enough that a subscriber or a transaction moving values of up
// to half of it never frees and allocates a buffer per value.
constexpr size_t kKeepBytes = 1 << 20;

// A pub/sub message as redis-server 7 sends it in RESP2: ["message", channel, payload],
// ["pmessage", pattern, channel, payload] or ["smessage", channel, payload].
// A pub/sub message: an array in RESP2, a push in RESP3. (Subscribe confirmations, pushes too in
// RESP3, answer the (un)subscribe command that asked for them.)
bool isPush(std::string_view reply) {
  if (reply.empty() || (reply[0] != '*' && reply[0] != '>')) {
    return false;
  }
  const std::string_view rest = reply.substr(1);
  return rest.starts_with("3\r\n$7\r\nmessage\r\n") ||
         rest.starts_with("4\r\n$8\r\npmessage\r\n") || rest.starts_with("3\r\n$8\r\nsmessage\r\n");
}

bool sameAddress(const route::ShardAddress& a, const route::ShardAddress& b) {
  return a.host == b.host && a.port == b.port && a.username == b.username &&
         a.password == b.password;
}

}  // namespace

DedicatedConn::DedicatedConn(net::Worker& worker, DedicatedPool& pool, uint16_t shard,
                             route::ShardAddress address, Mode mode, resp::Protocol protocol)
    : worker_(worker),
      pool_(pool),
      shard_(shard),
      address_(std::move(address)),
      mode_(mode),
      protocol_(protocol),
      link_(worker, *this, kMinReadSpace, kKeepBytes) {}

void DedicatedConn::start() {
  timer_ = worker_.timers().timer("shard.dedicated", [this] { onTimer(); });
  if (!address_.password.empty()) {
    // AUTH goes first, ahead of whatever the owner queues while connecting.
    std::string auth;
    appendAuth(auth, address_.username, address_.password);
    link_.out().append(auth);
    Op op;
    op.auth = true;
    ops_.push_back(op);
  }
  if (protocol_ == resp::Protocol::kResp3) {
    link_.out().append("*2\r\n$5\r\nHELLO\r\n$1\r\n3\r\n");
    Op op;
    op.hello = true;
    ops_.push_back(op);
  }
  if (link_.connect(address_)) {
    timer_->start(worker_.config().backend_connect_timeout_ms);
  }
}

void DedicatedConn::onLinkHandshaking() {
  // Still connecting until the handshake is done, under the same time limit.
  timer_->start(worker_.config().backend_connect_timeout_ms);
  flush();  // the ClientHello
}

void DedicatedConn::onLinkUp() {
  timer_->stop();
  armTimer();
  flush();
}

void DedicatedConn::send(std::string_view bytes, InFlightRequest* request, uint32_t fragment,
                         uint32_t replies, bool blocking) {
  SP_ASSERT(life_ == Life::kServing && replies > 0);
  Op op;
  op.request = request;
  op.fragment = fragment;
  op.remaining = replies;
  op.blocking = blocking;
  op.slow = request != nullptr && worker_.slowCommand(request->cmd);
  link_.out().append(bytes);  // first: a command that did not fit in memory leaves no op behind
  const bool was_empty = ops_.empty();
  ops_.push_back(op);
  if (link_.up()) {
    if (was_empty) {
      armTimer();
    }
    flush();
  }
}

void DedicatedConn::flush() {
  if (link_.flush() == ShardLink::Flushed::kQueued) {
    onLinkBackedUp();
  }
}

void DedicatedConn::onLinkBackedUp() {
  stall_.restart(worker_.timers().freshNowMs(), link_.writeQueue(), link_.kernelQueue());
}

void DedicatedConn::onLinkWritten() {
  if (life_ != Life::kServing) {
    return;
  }
  // As BackendConn::onLinkWritten: the kernel's queue is the baseline for the shard taking the
  // rest.
  stall_.restart(worker_.timers().freshNowMs(), 0, link_.kernelQueue());
  flush();
}

void DedicatedConn::onLinkRead(size_t /*nread*/) { stall_.progress(worker_.timers().nowMs()); }

void DedicatedConn::onLinkFailed(std::string_view reason, ShardLink::Failure /*kind*/) {
  fail(reason);
}

InFlightRequest* DedicatedConn::oldestRequest() const {
  for (const Op& op : ops_) {
    if (op.request != nullptr) {
      return op.request;
    }
  }
  return nullptr;
}

void DedicatedConn::switchProtocol(resp::Protocol protocol) {
  if (protocol == protocol_ || life_ != Life::kServing) {
    return;
  }
  protocol_ = protocol;
  send(protocol == resp::Protocol::kResp3 ? "*2\r\n$5\r\nHELLO\r\n$1\r\n3\r\n"
                                          : "*2\r\n$5\r\nHELLO\r\n$1\r\n2\r\n",
       nullptr, 0, 1, false);
}

void DedicatedConn::onLinkReply(std::string_view reply) {
  if (mode_ == Mode::kSubscriber && isPush(reply)) {
    if (owner_ != nullptr) {
      owner_->onDedicatedPush(*this, reply);
    }
    return;
  }
  if (ops_.empty()) {
    link_.protocolError("reply without a request");
    return;
  }
  Op& op = ops_.front();
  if (op.auth || op.hello) {
    const bool auth = op.auth;
    ops_.pop_front();
    if (resp::isError(reply)) {
      fail((auth ? "authentication failed: " : "RESP3 refused: ") +
           std::string(reply.substr(1, reply.size() - 3)));
    }
    return;
  }
  InFlightRequest* request = op.request;
  const uint32_t fragment = op.fragment++;
  const bool last = --op.remaining == 0;
  if (last) {
    ops_.pop_front();
  }
  if (request != nullptr) {
    deliverReply(worker_, request, fragment, reply);
  }
  if (life_ != Life::kServing || !last) {
    return;
  }
  armTimer();
  if (ops_.empty() && owner_ != nullptr) {
    owner_->onDedicatedIdle(*this);
  }
}

void DedicatedConn::armTimer() {
  if (life_ != Life::kServing) {
    return;
  }
  if (link_.connecting()) {
    return;  // the connect timeout runs
  }
  if (ops_.empty() || ops_.front().blocking) {
    timer_->stop();
    return;
  }
  stall_.restart(worker_.timers().nowMs(), 0);
  timer_->start(stallLimitMs());
}

uint64_t DedicatedConn::stallLimitMs() const {
  const auto& cfg = worker_.config();
  for (const Op& op : ops_) {
    if (op.slow) {
      return std::max(cfg.backend_slow_timeout_ms, cfg.backend_timeout_ms);
    }
  }
  return cfg.backend_timeout_ms;
}

void DedicatedConn::onTimer() {
  if (life_ != Life::kServing) {
    return;
  }
  if (link_.connecting()) {
    fail(link_.handshakeStarted() ? "TLS handshake timeout" : "connect timeout");
    return;
  }
  if (ops_.empty() || ops_.front().blocking) {
    return;  // nothing outstanding that a stall could hold up
  }
  const uint64_t limit = stallLimitMs();
  const uint64_t left =
      stall_.check(worker_.timers().nowMs(), link_.writeQueue(), link_.kernelQueue(), limit);
  if (left > 0) {
    timer_->start(left);  // bytes moved
    return;
  }
  fail("timeout after " + std::to_string(limit) + " ms");
}

void DedicatedConn::failOps(std::string_view reason) {
  if (ops_.empty()) {
    return;
  }
  const std::string error = resp::err::shardUnavailable(address_.label(), reason);
  // Answering a request can make its session release or discard connections (this one
  // included), so take the ops out first.
  std::deque<Op> ops;
  ops.swap(ops_);
  for (Op& op : ops) {
    while (op.remaining > 0 && !op.auth && !op.hello) {
      --op.remaining;
      if (op.request != nullptr) {
        deliverUnavailable(worker_, op.request, op.fragment++, error);
      }
    }
  }
}

bool DedicatedConn::canMove(Life from, Life to) {
  switch (from) {
    case Life::kServing:
      return to == Life::kFailed || to == Life::kClosing;
    case Life::kFailed:
      return to == Life::kClosing;
    case Life::kClosing:
      return false;
  }
  return false;
}

void DedicatedConn::enter(Life next) {
  SP_ASSERT(canMove(life_, next));
  life_ = next;
}

void DedicatedConn::fail(std::string_view reason) {
  if (life_ != Life::kServing) {
    return;
  }
  enter(Life::kFailed);
  failure_ = reason.empty() ? std::string("failed") : std::string(reason);
  const std::string why(reason);
  spdlog::debug("worker {}: dedicated connection to {} failed: {}", worker_.index(),
                address_.label(), why);
  failOps(why);
  DedicatedOwner* owner = owner_;
  owner_ = nullptr;
  if (owner != nullptr) {
    owner->onDedicatedFailed(*this);
  }
  close(why);
}

void DedicatedConn::close(std::string_view reason) {
  if (life_ == Life::kClosing) {
    return;
  }
  enter(Life::kClosing);
  owner_ = nullptr;
  pool_.forget(this);
  failOps(reason);
  timer_.reset();
  link_.close(false);
}

void DedicatedConn::onLinkClosed() {  // the socket, its last handle
  pool_.closed();
  delete this;
}

// ---- DedicatedPool ----

DedicatedPool::DedicatedPool(net::Worker& worker) : worker_(worker) {}

DedicatedPool::~DedicatedPool() { SP_ASSERT(idleCount() == 0); }

size_t DedicatedPool::idleCount() const {
  size_t n = 0;
  for (const auto& list : idle_) {
    n += list.size();
  }
  return n;
}

DedicatedConn* DedicatedPool::acquire(uint16_t shard, DedicatedConn::Mode mode,
                                      DedicatedOwner* owner, resp::err::ErrorReply* error,
                                      resp::Protocol protocol) {
  const route::Topology& topology = worker_.topology();
  if (shut_down_ || shard >= topology.shardCount()) {
    *error = resp::err::kShuttingDown;
    return nullptr;
  }
  BackendConn& shared = poolOf(worker_).at(shard, 0);
  if (!shared.accepting()) {
    *error = {resp::err::ProxyError::kShardUnavailable, shared.ejectedError()};
    return nullptr;
  }
  const route::ShardAddress& address = topology.shards()[shard];
  if (idle_.size() < topology.shardCount()) {
    idle_.resize(topology.shardCount());
  }
  if (mode == DedicatedConn::Mode::kCommands) {
    auto& list = idle_[shard];
    for (size_t i = list.size(); i-- > 0;) {
      DedicatedConn* conn = list[i];
      if (!sameAddress(conn->address_, address)) {
        list.erase(list.begin() + static_cast<std::ptrdiff_t>(i));
        conn->close("shard address changed");
      } else if (conn->protocol_ == protocol) {
        list.erase(list.begin() + static_cast<std::ptrdiff_t>(i));
        conn->owner_ = owner;
        return conn;
      }
    }
  }
  auto* conn = new DedicatedConn(worker_, *this, shard, address, mode, protocol);
  ++open_;
  conn->start();
  if (conn->failed()) {
    // It failed at once (cannot resolve, cannot connect); it frees itself once closed.
    *error = {resp::err::ProxyError::kShardUnavailable,
              resp::err::shardUnavailable(address.label(), conn->failure_)};
    return nullptr;
  }
  conn->owner_ = owner;
  return conn;
}

void DedicatedPool::release(DedicatedConn* conn) {
  conn->owner_ = nullptr;
  if (conn->life_ == DedicatedConn::Life::kClosing) {
    return;
  }
  if (shut_down_ || conn->failed() || !conn->idle() ||
      conn->mode_ != DedicatedConn::Mode::kCommands || conn->shard_ >= idle_.size() ||
      idle_[conn->shard_].size() >= kMaxIdlePerShard) {
    conn->close("released");
    return;
  }
  idle_[conn->shard_].push_back(conn);
}

void DedicatedPool::discard(DedicatedConn* conn) {
  conn->owner_ = nullptr;
  conn->close("client gone");
}

void DedicatedPool::forget(DedicatedConn* conn) {
  if (conn->shard_ < idle_.size()) {
    auto& list = idle_[conn->shard_];
    list.erase(std::remove(list.begin(), list.end(), conn), list.end());
  }
}

void DedicatedPool::shutdown() {
  shut_down_ = true;
  for (auto& list : idle_) {
    std::vector<DedicatedConn*> conns;
    conns.swap(list);
    for (DedicatedConn* conn : conns) {
      conn->close("proxy shutting down");
    }
  }
}

}  // namespace sp::backend
