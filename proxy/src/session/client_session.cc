// Client session: read, parse, dispatch, in-order replies, backpressure, close.
#include "session/client_session.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include <spdlog/spdlog.h>

#include "backend/backend_conn.h"
#include "backend/backend_pool.h"
#include "backend/stream_socket.h"
#include "backend/worker_backends.h"
#include "core/assert.h"
#include "core/clock.h"
#include "net/socket_address.h"
#include "net/worker.h"
#include "resp/command_table.h"
#include "resp/encoder.h"
#include "resp/errors.h"
#include "resp/reply_reader.h"
#include "session/fanout.h"
#include "session/local_commands.h"
#include "session/request_observer.h"
#include "session/session_checks.h"
#include "session/worker_clients.h"

namespace sp::session {
namespace {

// Reading pauses while this much output waits for a slow client (the hard limit closes it).
constexpr size_t kOutputPauseBytes = 4u << 20;
constexpr size_t kMinReadSpace = 16 * 1024;
constexpr net::CloseReason kOutOfMemory = net::CloseReason::kOutOfMemory;

// Copies a reply that must wait for the replies before it; false when there is no memory for it.
bool holdReply(std::string* slot, std::string_view reply) noexcept {
  try {
    slot->assign(reply);
    return true;
  } catch (const std::bad_alloc&) {
    return false;
  }
}

// How a local command's reply looks to a RESP3 client (resp3.h), as redis-server 7 sends it.
resp::Resp3Shape localReplyShape(const resp::CommandInfo& cmd) {
  switch (cmd.handler) {
    case resp::Handler::kInfo:
    case resp::Handler::kClientInfo:
    case resp::Handler::kClientList:
      return resp::Resp3Shape::kVerbatim;
    case resp::Handler::kCommand:
    case resp::Handler::kCommandInfo:
      return resp::Resp3Shape::kCommandInfo;
    case resp::Handler::kCommandDocs:
      return resp::Resp3Shape::kCommandDocs;
    case resp::Handler::kConfigGet:
      return resp::Resp3Shape::kMap;
    default:
      return resp::Resp3Shape::kPlain;
  }
}

}  // namespace

ClientSession::ClientSession(net::Worker& worker, uint64_t id)
    : worker_(worker), id_(id), parser_(worker.parserLimits()) {
  tcp_.data = this;
}

void ClientSession::start(bool unix_socket, std::shared_ptr<const tls::TlsContext> tls) {
  unix_socket_ = unix_socket;
  if (tls != nullptr) {
    tls_ = std::make_unique<tls::TlsChannel>(std::move(tls));
  }
  if (!unix_socket_) {
    uv_tcp_nodelay(&tcp_, 1);
    worker_.setKeepAlive(&tcp_);
  }
  last_active_ms_ = worker_.timers().nowMs();
  SessionState::onAccept(*this);  // clients that must AUTH first
  reading_ = true;
  startReads();
}

bool ClientSession::peerName(sockaddr_storage* out) {
  if (unix_socket_) {
    return false;
  }
  if (peer_.v4.sin_family == AF_UNSPEC) {
    sockaddr_storage addr{};
    int len = sizeof addr;
    if (uv_tcp_getpeername(&tcp_, reinterpret_cast<sockaddr*>(&addr), &len) != 0 ||
        (addr.ss_family != AF_INET && addr.ss_family != AF_INET6)) {
      return false;
    }
    std::memcpy(&peer_, &addr, addr.ss_family == AF_INET ? sizeof peer_.v4 : sizeof peer_.v6);
  }
  *out = sockaddr_storage{};
  std::memcpy(out, &peer_, sizeof peer_);
  return true;
}

size_t ClientSession::formatPeer(char* out, size_t size) {
  sockaddr_storage addr{};
  if (unix_socket_) {
    // As redis-server: the listening socket's path (the client's own has none).
    int len = sizeof addr;
    if (uv_tcp_getsockname(&tcp_, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
      addr.ss_family = AF_UNSPEC;
    }
  } else if (!peerName(&addr)) {
    addr.ss_family = AF_UNSPEC;
  }
  return net::formatSocketAddress(addr, out, size);
}

void ClientSession::startReads() {
  net::RingLoop& ring = worker_.ringReads();
  if (ring_slot_ != net::RingLoop::kNoSlot) {
    ring.resume(ring_slot_);
  } else if (tls_ == nullptr && ring.active()) {
    uv_os_fd_t fd = -1;
    uv_fileno(reinterpret_cast<uv_handle_t*>(&tcp_), &fd);
    ring_slot_ = ring.add(fd, this);
  } else {
    uv_read_start(reinterpret_cast<uv_stream_t*>(&tcp_), &ClientSession::onAllocCb,
                  &ClientSession::onReadCb);
  }
}

void ClientSession::stopReads() {
  if (ring_slot_ != net::RingLoop::kNoSlot) {
    worker_.ringReads().pause(ring_slot_);
  } else {
    uv_read_stop(reinterpret_cast<uv_stream_t*>(&tcp_));
  }
}

void ClientSession::onRingData(const char* data, size_t size) {
  if (closing_) {
    return;
  }
  takeInput(size, [&] {
    worker_.stats().client_reads.add();
    if (in_ == nullptr || in_->empty()) {
      consumeView(std::string_view(data, size));
    } else {
      in_->append(data, size);  // the rest of a request begun in an earlier read
      consumeHeld();
    }
  });
}

void ClientSession::onRingEnd(int error) { onRead(error == 0 ? UV_EOF : error, nullptr); }

void ClientSession::refuseConnection(std::string_view error_line) {
  if (tls_ != nullptr) {
    close(net::CloseReason::kMaxClients);  // no handshake yet, so no way to say why
    return;
  }
  uv_buf_t buf =
      uv_buf_init(const_cast<char*>(error_line.data()), static_cast<unsigned>(error_line.size()));
  uv_try_write(reinterpret_cast<uv_stream_t*>(&tcp_), &buf, 1);
  close(net::CloseReason::kMaxClients);
}

void ClientSession::onAllocCb(uv_handle_t* handle, size_t /*suggested*/, uv_buf_t* buf) {
  auto* self = static_cast<ClientSession*>(handle->data);
  if (self->tls_ != nullptr) {
    // Ciphertext: fed to the channel at once, so the worker's buffer is free again after.
    net::Worker& w = self->worker_;
    *buf = uv_buf_init(w.readBuffer(), static_cast<unsigned>(w.readBufferSize()));
    return;
  }
  if (!self->plainReadBuffer(buf)) {
    *buf = uv_buf_init(nullptr, 0);  // onRead gets UV_ENOBUFS and closes this client
  }
}

bool ClientSession::plainReadBuffer(uv_buf_t* buf) {
  if (in_ != nullptr && !in_->empty()) {
    // Room for the rest of the request, but never more than the bytes already here: a length
    // read off the wire is only a claim, and memory follows the bytes that actually arrive (a
    // client that declares a 512 MB bulk and sends 10 bytes costs 16 KB, not 512 MB).
    const size_t need = parser_.bytesNeeded();
    const size_t have = in_->size();
    const size_t rest = need > have ? need - have : 0;
    const size_t want = std::max(std::min(rest, have), kMinReadSpace);
    if (!in_->tryEnsureWritable(want)) {
      return false;
    }
    *buf = uv_buf_init(in_->writePtr(), static_cast<unsigned>(in_->writable()));
    return true;
  }
  *buf = uv_buf_init(worker_.readBuffer(), static_cast<unsigned>(worker_.readBufferSize()));
  return true;
}

void ClientSession::onReadCb(uv_stream_t* stream, ssize_t nread, const uv_buf_t* buf) {
  static_cast<ClientSession*>(stream->data)->onRead(nread, buf);
}

void ClientSession::onRead(ssize_t nread, const uv_buf_t* buf) {
  if (nread < 0) {
    if (nread == UV_EOF || nread == UV_ENOBUFS) {
      close(nread == UV_EOF ? net::CloseReason::kClientClosed : kOutOfMemory);
    } else {
      close(net::CloseReason::kError, uv_strerror(static_cast<int>(nread)));
    }
    return;
  }
  if (nread == 0 || closing_) {
    return;
  }
  takeInput(static_cast<size_t>(nread), [&] {  // TLS: counts the ciphertext
    if (tls_ != nullptr) {
      onTlsRead(static_cast<size_t>(nread), buf);
    } else {
      consumeInput(static_cast<size_t>(nread), buf);
    }
  });
}

template <typename Consume>
void ClientSession::takeInput(size_t size, Consume consume) {
  last_active_ms_ = worker_.timers().nowMs();
  worker_.stats().bytes_in.add(size);
  // A request or a reply too large for the memory left closes this client only; nothing thrown
  // may cross libuv's C frames (or the ring's loop), and no other connection is touched.
  try {
    consume();
  } catch (const std::bad_alloc&) {
    if (worker_.logLimiter().allow()) {
      spdlog::warn("worker {}: client {} closed: out of memory", worker_.index(), id_);
    }
    close(kOutOfMemory);
  }
}

void ClientSession::onTlsRead(size_t nread, const uv_buf_t* buf) {
  if (!tls_->feed(buf->base, nread)) {
    if (worker_.logLimiter().allow()) {
      spdlog::warn("worker {}: client {} closed: {}", worker_.index(), id_, tls_->error());
    }
    if (writing_ == nullptr) {
      backend::sendTlsAlert(*tls_, reinterpret_cast<uv_stream_t*>(&tcp_));
    }
    close(net::CloseReason::kTlsError, tls_->error());
    return;
  }
  drainTls();
}

void ClientSession::drainTls() {
  while (!closing_ && reading_) {
    uv_buf_t plain;
    if (!plainReadBuffer(&plain)) {
      close(kOutOfMemory);
      return;
    }
    const ptrdiff_t n = tls_->readPlain(plain.base, plain.len);
    if (n < 0) {
      close(net::CloseReason::kTlsError, tls_->error());
      return;
    }
    if (n == 0) {
      break;
    }
    consumeInput(static_cast<size_t>(n), &plain);
  }
  if (closing_) {
    return;
  }
  if (tls_->peerClosed()) {
    close(net::CloseReason::kClientClosed);
  } else if (tls_->pendingCipher() > 0) {
    worker_.flushes().markClient(this);  // handshake records or session tickets to send
  }
}

void ClientSession::consumeInput(size_t nread, const uv_buf_t* buf) {
  worker_.stats().client_reads.add();
  if (buf->base == worker_.readBuffer()) {
    consumeView(std::string_view(buf->base, nread));
    return;
  }
  in_->commit(nread);
  consumeHeld();
}

void ClientSession::consumeView(std::string_view data) {
  const size_t used = processInput(data);
  if (used < data.size() && !input_stopped_ && !closing_) {
    if (in_ == nullptr) {
      in_ = worker_.buffers().acquire();
    }
    in_->append(data.substr(used));
  }
}

void ClientSession::consumeHeld() {
  const size_t used = processInput(in_->view());
  if (in_ != nullptr) {
    in_->consume(used);
    if (in_->empty() || input_stopped_) {
      worker_.buffers().release(in_);
      in_ = nullptr;
    }
  }
}

size_t ClientSession::processInput(std::string_view data) {
  size_t offset = 0;
  while (offset < data.size() && !input_stopped_ && !closing_) {
    if (!mayRead()) {
      updateReading();
      break;
    }
    size_t consumed = 0;
    thread_local resp::RequestFrame frame;  // scratch, reused
    resp::ParseStatus st = parser_.parse(data.substr(offset), &consumed, &frame);
    if (st == resp::ParseStatus::kIncomplete) {
      break;
    }
    if (st == resp::ParseStatus::kError) {
      protocolError();
      return data.size();
    }
    deferred_ = false;
    dispatch(frame, data.substr(offset, consumed));
    if (deferred_) {
      updateReading();
      break;  // not consumed
    }
    offset += consumed;
  }
  return offset;
}

void ClientSession::dispatch(const resp::RequestFrame& frame, std::string_view raw) {
  std::span<const std::string_view> args(frame.args);
  if (args.empty()) {
    return;
  }
  net::WorkerStats& stats = worker_.stats();
  const resp::CommandTable& table = resp::CommandTable::instance();
  const resp::CommandInfo* cmd = table.resolve(args);
  last_cmd_ = cmd;  // CLIENT LIST cmd=
  // Connection state (AUTH, MULTI, SUBSCRIBE, dedicated connections) and the commands that
  // need it: session_state.h. A deferred request is offered again once the FIFO is empty.
  if (state_ != nullptr || SessionState::wanted(cmd, worker_.config())) {
    const SessionState::Verdict verdict = SessionState::dispatch(*this, frame, raw, cmd);
    if (verdict == SessionState::Verdict::kDefer) {
      deferred_ = true;
      return;
    }
    stats.commands.add();
    if (verdict == SessionState::Verdict::kHandled) {
      return;
    }
  } else {
    stats.commands.add();
  }
  if (cmd == nullptr) {
    refuse(resp::err::unknownCommand(args));
    return;
  }
  if (cmd->has(resp::kCmdContainer) && args.size() >= 2) {
    // Subcommands newer than the table that client libraries send at connect (a session with a
    // SessionState has answered them there already).
    if (std::string reply; clientSetInfo(args, &reply)) {
      if (reply[0] == '-') {
        refuse(reply);
      } else {
        stats.commands_local.add();
        observeImmediate(stats, cmd, net::RequestResult::kOk);
        replyNow(reply);
      }
      return;
    }
    refuse(resp::err::unknownSubcommand(cmd->name, args[1]));
    return;
  }
  // Split commands take groups of args_per_key arguments (MSET: key value); a partial group is
  // what redis-server calls a wrong number of arguments.
  if (!resp::arityOk(*cmd, args.size()) ||
      (cmd->has(resp::kCmdSplit) && (args.size() - 1) % cmd->args_per_key != 0)) {
    refuse(resp::err::wrongArity(cmd->name));
    return;
  }
  if (cmd->has(resp::kCmdUnsupported)) {
    refuse(unsupportedError(*cmd));
    return;
  }
  if (cmd->has(resp::kCmdLocal)) {
    stats.commands_local.add();
    std::string reply;
    bool close_after = false;
    const size_t queued = fifo_.size();
    runLocalCommand(*this, *cmd, args, &reply, &close_after);
    if (reply.empty() && !close_after) {
      if (fifo_.size() > queued) {
        return;  // answered later, through deferReply() (PROXY RELOAD)
      }
      // A handler that neither answered nor deferred: the client still gets one reply for the
      // request, so the replies after it stay with their requests.
      if (worker_.logLimiter().allow()) {
        spdlog::error("worker {}: command '{}' produced no reply", worker_.index(), cmd->name);
      }
      appendOwnError(stats, resp::err::noReply(cmd->name), &reply);
    }
    observeImmediate(stats, cmd,
                     resp::isError(reply) ? net::RequestResult::kError : net::RequestResult::kOk);
    replyNow(reply, close_after, localReplyShape(*cmd));
    return;
  }
  thread_local std::vector<uint32_t> keys;  // scratch, reused
  keys.clear();
  thread_local route::RoutePlan plan;  // scratch, reused
  if (!resp::extractKeys(*cmd, args, &keys)) {
    if (!shardJudgesMalformedKeys(*cmd)) {
      refuse(resp::err::wrongArity(cmd->name));
      return;
    }
    plan.kind = route::RouteKind::kSingle;  // for redis-server's own error (session_checks.h)
    plan.shard = 0;
  } else {
    route::planRoute(*cmd, args, keys, worker_.topology(), &plan, worker_.config().cluster_mode);
  }
  if (plan.kind == route::RouteKind::kCrossSlot) {
    refuse(crossSlotError(*cmd, args, keys, worker_.topology()));
    return;
  }
  if (plan.kind == route::RouteKind::kNoKeys) {
    resp::err::ErrorReply error;
    if (keylessScript(*cmd, args, worker_.config(), &plan.shard, &error) && !error.empty()) {
      refuse(error);
      return;
    }
  }
  PendingRequest* request = requestsOf(worker_).acquire();
  request->owner = this;
  request->start_ns = monoNanos();
  request->shard = plan.shard;
  request->cmd = cmd;
  request->protocol = protocol_;
  fifo_.push(request);
  if (plan.kind == route::RouteKind::kSplit) {
    stats.commands_split.add();
    sendSplit(worker_, id_, request, *cmd, args, keys, plan);
    if (request->done) {
      observeCompletion(worker_, *request, request->reply);  // every fragment failed at once
      drainCompleted();
    }
    return;
  }
  backend::BackendConn& conn = cmd->has(resp::kCmdReadOnly)
                                   ? backend::poolOf(worker_).forRead(plan.shard, id_, protocol_)
                                   : backend::poolOf(worker_).primary(plan.shard, id_, protocol_);
  if (!conn.accepting()) {
    backend::deliverUnavailable(worker_, request, 0, conn.ejectedError());
    return;
  }
  std::string_view bytes = raw;
  if (frame.is_inline) {
    thread_local std::string command;  // scratch, reused
    command.clear();
    resp::appendCommand(command, args);
    bytes = command;
  }
  if (worker_.config().cluster_mode) {
    request->sent.emplace_back(bytes);  // kept to follow a MOVED/ASK redirect
  }
  conn.send(bytes, request, 0);
  // Outstanding only once sent: when a copy above runs out of memory, close() finds a request
  // that nothing else refers to and releases it.
  request->outstanding = 1;
}

bool ClientSession::resendOf(backend::InFlightRequest* in_flight, uint32_t fragment,
                             backend::Resend* out) {
  auto* request = static_cast<PendingRequest*>(in_flight);
  if (request->owner == nullptr || fragment >= request->sent.size()) {
    return false;  // the client has gone, or nothing was kept to send again
  }
  if (request->tries.size() < request->sent.size()) {
    request->tries.resize(request->sent.size());
  }
  *out = backend::Resend{request->sent[fragment], &request->tries[fragment], request->owner->id(),
                         request->protocol, request->shard};
  return true;
}

void ClientSession::onBackendReply(net::Worker& worker, backend::InFlightRequest* in_flight,
                                   uint32_t fragment, std::string_view reply) {
  auto* request = static_cast<PendingRequest*>(in_flight);
  ClientSession* owner = request->owner;
  if (request->merge == resp::MergeRule::kNone) {
    request->outstanding = 0;
    observeCompletion(worker, *request, reply);
    if (owner == nullptr) {
      request->reset();
      requestsOf(worker).release(request);
      return;
    }
    if (owner->fifo_.front() == request && !request->close_after) {
      owner->fifo_.pop();
      owner->appendOutput(reply);
      owner->releaseRequest(request);
      owner->drainCompleted();
      return;
    }
    if (!holdReply(&request->reply, reply)) {
      owner->close(kOutOfMemory);  // releases the request
      return;
    }
    request->done = true;
    if (request->close_after && owner->fifo_.front() == request) {
      owner->drainCompleted();  // a deferred reply that closes its client (CLIENT KILL of itself)
    }
    return;
  }
  SP_ASSERT(fragment < request->fragment_replies.size() && request->outstanding > 0);
  if (owner != nullptr && !holdReply(&request->fragment_replies[fragment], reply)) {
    owner->close(kOutOfMemory);  // the request is orphaned: the other fragments release it
    owner = nullptr;
  }
  if (--request->outstanding > 0) {
    return;
  }
  if (owner == nullptr) {
    observeCompletion(worker, *request, reply);
    request->reset();
    requestsOf(worker).release(request);
    return;
  }
  try {
    mergeReplies(request);
  } catch (const std::bad_alloc&) {
    owner->close(kOutOfMemory);  // releases the request
    return;
  }
  observeCompletion(worker, *request, request->reply);
  request->done = true;
  if (owner->fifo_.front() == request) {
    owner->drainCompleted();
  }
}

PendingRequest* ClientSession::deferReply(const resp::CommandInfo* cmd) {
  PendingRequest* request = requestsOf(worker_).acquire();
  request->owner = this;
  request->start_ns = monoNanos();
  request->cmd = cmd;
  request->outstanding = 1;
  fifo_.push(request);
  return request;
}

void ClientSession::replyNow(std::string_view reply, bool close_after, resp::Resp3Shape shape) {
  if (!reply.empty() && reply[0] == '-') {
    worker_.stats().error_codes.count(reply);  // INFO errorstats (shard errors: observeCompletion)
  }
  std::string resp3;
  if (protocol_ == resp::Protocol::kResp3 && !reply.empty() && reply[0] != '+' && reply[0] != '-' &&
      reply[0] != ':') {
    resp3 = resp::toResp3(reply, shape);
    reply = resp3;
  }
  if (fifo_.empty() && !close_after) {
    appendOutput(reply);
    drainCompleted();
    return;
  }
  PendingRequest* request = requestsOf(worker_).acquire();
  request->owner = this;
  request->reply.assign(reply);
  request->done = true;
  request->close_after = close_after;
  fifo_.push(request);
  if (close_after) {
    input_stopped_ = true;
    updateReading();
  }
  drainCompleted();
}

void ClientSession::replyBefore(PendingRequest* before, std::string_view bytes) {
  if (before == nullptr || closing_) {
    replyNow(bytes);
    return;
  }
  if (fifo_.front() == before) {
    appendOutput(bytes);  // every reply ahead of it has been written
    return;
  }
  PendingRequest* request = requestsOf(worker_).acquire();
  request->owner = this;
  request->reply.assign(bytes);
  request->done = true;
  if (!fifo_.insertBefore(request, before)) {
    fifo_.push(request);
  }
  drainCompleted();
}

void ClientSession::refuse(const resp::err::ErrorReply& error) {
  net::WorkerStats& stats = worker_.stats();
  stats.commands_refused.add();
  stats.countProxyError(error.kind());
  observeImmediate(stats, nullptr, net::RequestResult::kRefused);
  replyNow(error.text());
}

void ClientSession::protocolError() {
  worker_.stats().protocol_errors_client.add(parser_.error());
  const char* message = resp::errorMessage(parser_.error());
  if (worker_.logLimiter().allow()) {
    spdlog::info("worker {}: client {} protocol error ({}), closing", worker_.index(), id_,
                 resp::errorName(parser_.error()));
  }
  replyNow(resp::err::protocolError(message), true);
}

void ClientSession::releaseRequest(PendingRequest* request) {
  request->reset();
  requestsOf(worker_).release(request);
}

void ClientSession::drainCompleted() {
  while (!fifo_.empty() && fifo_.front()->done) {
    PendingRequest* request = fifo_.pop();
    appendOutput(request->reply);
    const bool close_after = request->close_after;
    releaseRequest(request);
    if (close_after) {
      close_after_flush_ = true;
      break;
    }
  }
  if (closing_) {
    return;
  }
  if (pendingOutput() > worker_.config().limits.client_output_buffer) {
    worker_.stats().closed_output_limit.add();
    if (worker_.logLimiter().allow()) {
      spdlog::warn("worker {}: client {} closed: output buffer above limits.client_output_buffer",
                   worker_.index(), id_);
    }
    close(net::CloseReason::kOutputLimit);
    return;
  }
  if (!reading_ && !input_stopped_ && mayRead() && !resume_pending) {
    worker_.flushes().markResume(this);
  }
}

void ClientSession::appendOutput(std::string_view bytes) {
  if (closing_) {
    return;
  }
  if (out_ == nullptr) {
    out_ = worker_.buffers().acquire();
  }
  try {
    out_->append(bytes);
  } catch (const std::bad_alloc&) {
    close(kOutOfMemory);  // the reply cannot be held: this client goes, the shard's pipeline stays
    return;
  }
  if (!dirty) {
    worker_.flushes().markClient(this);
  }
}

size_t ClientSession::memoryBytes() const {
  return sizeof(*this) + queryBufferCapacity() + (out_ != nullptr ? out_->capacity() : 0) +
         (writing_ != nullptr ? writing_->capacity() : 0);
}

size_t ClientSession::pendingOutput() const {
  return (out_ != nullptr ? out_->size() : 0) + (writing_ != nullptr ? writing_->size() : 0);
}

bool ClientSession::mayRead() const {
  return !(deferred_ && !fifo_.empty()) &&
         fifo_.size() < worker_.config().limits.max_inflight_per_client &&
         pendingOutput() < kOutputPauseBytes;
}

void ClientSession::updateReading() {
  if (closing_) {
    return;
  }
  const bool want = !input_stopped_ && mayRead();
  if (want && !reading_) {
    reading_ = true;
    startReads();
    if (tls_ != nullptr && tls_->hasBufferedInput() && !resume_pending) {
      // Decrypted requests wait in the channel, and no new byte need arrive to fetch them.
      worker_.flushes().markResume(this);
    }
  } else if (!want && reading_) {
    reading_ = false;
    if (!input_stopped_) {
      worker_.stats().reads_paused.add();
    }
    stopReads();
  }
}

void ClientSession::resume() {
  resume_pending = false;
  if (closing_ || input_stopped_ || !mayRead()) {
    return;
  }
  if (in_ != nullptr && !in_->empty()) {
    consumeHeld();
  }
  updateReading();
  if (tls_ != nullptr && reading_ && tls_->hasBufferedInput()) {
    try {
      drainTls();
    } catch (const std::bad_alloc&) {
      close(kOutOfMemory);
    }
  }
}

void ClientSession::flush() {
  dirty = false;
  if (closing_ || writing_ != nullptr) {
    return;
  }
  Buffer* wire = nullptr;
  const bool replies = out_ != nullptr && !out_->empty();
  if (tls_ == nullptr) {
    if (replies) {
      wire = std::exchange(out_, nullptr);
    }
  } else if (replies || tls_->pendingCipher() > 0) {
    wire = sealTls();
    if (wire == nullptr) {
      return;
    }
  }
  if (wire == nullptr) {
    if (close_after_flush_ && fifo_.empty()) {
      close(net::CloseReason::kQuit);
    }
    return;
  }
  const size_t size = wire->size();
  worker_.stats().bytes_out.add(size);
  worker_.stats().client_writes.add();
  writing_ = wire;  // held until written(): nothing else is flushed meanwhile
  net::SendBatch& sends = worker_.flushes().sends();
  if (sends.collecting()) {
    uv_os_fd_t fd = -1;
    uv_fileno(reinterpret_cast<uv_handle_t*>(&tcp_), &fd);
    sends.add(fd, wire->readPtr(), size, this);  // sent() reports, after the round's last flush
    return;
  }
  uv_buf_t buf = uv_buf_init(const_cast<char*>(wire->readPtr()), static_cast<unsigned>(size));
  written(uv_try_write(reinterpret_cast<uv_stream_t*>(&tcp_), &buf, 1));
}

void ClientSession::sent(ssize_t result) {
  // -errno is libuv's error code on Unix; -EAGAIN is UV_EAGAIN.
  written(static_cast<int>(std::max<ssize_t>(result, INT32_MIN)));
}

void ClientSession::written(int n) {
  Buffer* wire = std::exchange(writing_, nullptr);
  if (n > 0) {
    last_active_ms_ = worker_.timers().nowMs();
  }
  if (n == static_cast<int>(wire->size())) {
    worker_.buffers().release(wire);
    if (out_ != nullptr && !out_->empty()) {
      // Replies that came while the write was out (a write sent with the ring's next wait is
      // told a turn later) go with the next flush.
      worker_.flushes().markClient(this);
    } else if (close_after_flush_ && out_ == nullptr) {
      close(net::CloseReason::kQuit);
    } else if (!reading_ && !resume_pending) {
      worker_.flushes().markResume(this);
    }
    return;
  }
  if (n < 0 && n != UV_EAGAIN) {
    worker_.buffers().release(wire);
    close(net::CloseReason::kError, uv_strerror(n));
    return;
  }
  if (n > 0) {
    wire->consume(static_cast<size_t>(n));
  }
  // The rest waits for the socket to take it: one uv_write, the flush's until it is done.
  writing_ = wire;
  uv_buf_t buf =
      uv_buf_init(const_cast<char*>(writing_->readPtr()), static_cast<unsigned>(writing_->size()));
  write_req_.data = this;
  int rc = uv_write(&write_req_, reinterpret_cast<uv_stream_t*>(&tcp_), &buf, 1,
                    &ClientSession::onWriteCb);
  if (rc != 0) {
    close(net::CloseReason::kError, uv_strerror(rc));
  }
}

Buffer* ClientSession::sealTls() {
  BufferPool& pool = worker_.buffers();
  if (out_ != nullptr && !out_->empty()) {
    // Taken whole once the handshake is done; a client sends no request before it, so there is
    // nothing to hold back in practice.
    const ptrdiff_t n = tls_->writePlain(out_->readPtr(), out_->size());
    if (n < 0) {
      close(net::CloseReason::kTlsError, tls_->error());
      return nullptr;
    }
    out_->consume(static_cast<size_t>(n));
    if (out_->empty()) {
      pool.release(out_);
      out_ = nullptr;
    }
  }
  const size_t pending = tls_->pendingCipher();
  if (pending == 0) {
    return nullptr;
  }
  Buffer* wire = pool.acquire();
  if (!wire->tryEnsureWritable(pending)) {
    pool.release(wire);
    close(kOutOfMemory);
    return nullptr;
  }
  wire->commit(tls_->takeCipher(wire->writePtr(), pending));
  return wire;
}

void ClientSession::onWriteCb(uv_write_t* req, int status) {
  auto* self = static_cast<ClientSession*>(req->data);
  self->worker_.buffers().release(self->writing_);
  self->writing_ = nullptr;
  if (self->closing_) {
    return;
  }
  if (status < 0) {
    self->close(net::CloseReason::kError, uv_strerror(status));
    return;
  }
  self->last_active_ms_ = self->worker_.timers().nowMs();
  if (self->out_ != nullptr && !self->out_->empty()) {
    self->worker_.flushes().markClient(self);
  } else if (self->close_after_flush_ && self->fifo_.empty()) {
    self->close(net::CloseReason::kQuit);
  } else if (!self->reading_ && !self->resume_pending) {
    self->worker_.flushes().markResume(self);
  }
}

uint64_t ClientSession::idleMs(uint64_t now_ms) const {
  const Subscriptions* subs = state_ != nullptr ? state_->subscriptions() : nullptr;
  if (closing_ || !idle() || (subs != nullptr && subs->total() > 0)) {
    return 0;
  }
  return now_ms > last_active_ms_ ? now_ms - last_active_ms_ : 0;
}

void ClientSession::close(net::CloseReason why, std::string_view detail) {
  if (closing_) {
    return;
  }
  closing_ = true;
  worker_.flushes().sends().forget(this);  // a write waiting in the batch is dropped
  worker_.stats().countClose(why);
  spdlog::trace("worker {}: client {} closed: {}{}{}", worker_.index(), id_,
                net::kCloseReasonTexts[static_cast<size_t>(why)], detail.empty() ? "" : ": ",
                detail);
  if (ring_slot_ != net::RingLoop::kNoSlot) {
    worker_.ringReads().remove(ring_slot_);  // before uv_close closes the socket
    ring_slot_ = net::RingLoop::kNoSlot;
  } else if (reading_) {
    uv_read_stop(reinterpret_cast<uv_stream_t*>(&tcp_));
  }
  reading_ = false;
  while (!fifo_.empty()) {
    PendingRequest* request = fifo_.pop();
    if (!request->done && request->outstanding > 0) {
      request->owner = nullptr;  // the backend still refers to it; released on its reply
    } else {
      releaseRequest(request);
    }
  }
  if (state_ != nullptr) {
    state_->onClose();  // dedicated connections: after the FIFO, whose requests they may hold
  }
  uv_close(reinterpret_cast<uv_handle_t*>(&tcp_), &ClientSession::onCloseCb);
}

void ClientSession::onCloseCb(uv_handle_t* handle) {
  auto* self = static_cast<ClientSession*>(handle->data);
  BufferPool& pool = self->worker_.buffers();
  pool.release(self->in_);
  pool.release(self->out_);
  pool.release(self->writing_);
  clientsOf(self->worker_).sessionClosed(self);
  delete self;
}

}  // namespace sp::session
