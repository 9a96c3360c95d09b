// The request/reply cycle of one connection: connect, handshakes (TLS, AUTH/SELECT), fill the
// pipeline, frame replies.
#include "bench_connection.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "bench_thread.h"
#include "core/clock.h"
#include "fd_lifecycle.h"
#include "resp/encoder.h"
#include "resp/reply_reader.h"

namespace sp::bench {
namespace {

constexpr size_t kReadChunk = 64 * 1024;

uint64_t mix(uint64_t a, uint64_t b) {
  uint64_t z = a ^ (b + 0x9e3779b97f4a7c15ull + (a << 6) + (a >> 2));
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

}  // namespace

BenchConnection::BenchConnection(BenchThread* thread, uint32_t local_index, uint32_t slot,
                                 uint64_t budget)
    : thread_(thread),
      index_(local_index),
      slot_(slot),
      budget_(budget),
      pipeline_(thread->ctx().options->pipeline),
      data_rng_(mix(thread->ctx().seed, 0xda7a0000ull + slot)) {
  const PhaseContext& ctx = thread_->ctx();
  const Workload& w = *ctx.workload;
  ring_.resize(pipeline_ + 4);
  in_.resize(kReadChunk);
  out_.reserve(4096);
  if (ctx.verify != nullptr) {
    verify_ = &(*ctx.verify)[slot_];
  }
  for (size_t c = 0; c < ctx.phase->commands.size(); ++c) {
    const WorkloadCommand& cmd = ctx.phase->commands[c];
    const uint64_t seed = mix(mix(ctx.seed, slot_), c);
    if (verify_ != nullptr) {
      // Walk only the keys this connection owns: indices 0..partition-1.
      KeyRange part = w.keys;
      part.min = 0;
      part.max = KeyOwnership::partitionSize(w.keys, slot_, ctx.total_slots) - 1;
      part.median = -1;
      part.stddev = w.keys.stddev > 0 ? w.keys.stddev / ctx.total_slots : -1;
      keys_.emplace_back(cmd.pattern, part, 0, 1, seed);
    } else {
      keys_.emplace_back(cmd.pattern, w.keys, slot_, ctx.total_slots, seed);
    }
  }
}

void BenchConnection::connect() {
  state_ = State::kConnecting;
  connect_start_ns_ = monoNanos();
  uv_tcp_init(thread_->loop(), &tcp_);
  tcp_.data = this;
  connect_req_.data = this;
  const PhaseContext& ctx = thread_->ctx();
  if (!ctx.sources.empty() && !bindSource(slot_ % ctx.sources.size())) {
    return;
  }
  int rc = 0;
  {
    FdLifecycleGuard fds;  // uv_tcp_connect creates the socket
    rc = uv_tcp_connect(&connect_req_, &tcp_, reinterpret_cast<const sockaddr*>(&ctx.address),
                        &BenchConnection::onConnect);
  }
  if (rc != 0) {
    thread_->fail("cannot connect to " + ctx.address_text + ": " + uv_strerror(rc));
  }
}

bool BenchConnection::bindSource(size_t index) {
  const PhaseContext& ctx = thread_->ctx();
  const sockaddr_storage& source = ctx.sources[index];
  auto fail = [&](const char* step, int err) {
    thread_->fail(std::string("cannot ") + step + " source address " +
                  ctx.options->source_addresses[index] + ": " + uv_strerror(err));
    return false;
  };
  int fd = -1;
  {
    FdLifecycleGuard fds;
    fd = ::socket(source.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  }
  if (fd < 0) {
    return fail("open a socket for", uv_translate_sys_error(errno));
  }
  // The port is chosen at connect time, per destination, so every source address offers the
  // whole ephemeral range to each server.
  const int one = 1;
  ::setsockopt(fd, IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, &one, sizeof(one));
  const socklen_t len = source.ss_family == AF_INET ? sizeof(sockaddr_in) : sizeof(sockaddr_in6);
  if (::bind(fd, reinterpret_cast<const sockaddr*>(&source), len) != 0) {
    const int err = uv_translate_sys_error(errno);
    ::close(fd);
    return fail("bind to", err);
  }
  const int rc = uv_tcp_open(&tcp_, fd);
  if (rc != 0) {
    ::close(fd);
    return fail("use the socket bound to", rc);
  }
  return true;
}

void BenchConnection::onConnect(uv_connect_t* req, int status) {
  auto* self = static_cast<BenchConnection*>(req->data);
  if (status == UV_ECANCELED || self->state_ != State::kConnecting) {
    return;
  }
  BenchThread* t = self->thread_;
  if (status < 0) {
    t->fail("cannot connect to " + t->ctx().address_text + ": " + uv_strerror(status));
    return;
  }
  uv_tcp_nodelay(&self->tcp_, 1);
  uv_read_start(reinterpret_cast<uv_stream_t*>(&self->tcp_), &BenchConnection::onAlloc,
                &BenchConnection::onRead);
  t->counters().connections++;
  self->issued_at_connect_ = self->issued_;
  if (t->ctx().tls != nullptr) {
    self->startTls();
    return;
  }
  self->sendHandshake();
}

void BenchConnection::startTls() {
  const PhaseContext& ctx = thread_->ctx();
  tls_ = std::make_unique<tls::TlsChannel>(ctx.tls, ctx.options->host);
  if (tls_in_.empty()) {
    tls_in_.resize(kReadChunk);
  }
  state_ = State::kTlsHandshake;
  if (!tls_->startHandshake()) {
    thread_->fail("cannot connect to " + ctx.address_text + ": " + tls_->error());
    return;
  }
  flush();  // the ClientHello
}

void BenchConnection::onTlsReady() {
  ThreadCounters& c = thread_->counters();
  if (c.tls_protocol.empty()) {
    c.tls_protocol = tls_->protocol();
    c.tls_cipher = tls_->cipher();
  }
  sendHandshake();
}

std::string BenchConnection::clientCertHint(bool answered) const {
  // A server that verifies clients refuses one without a certificate after the client accepted
  // the server's certificate: in TLS 1.2 with an alert in the handshake, in TLS 1.3 after it
  // (the client's side is done first), often seen only as a reset.
  if (tls_ == nullptr || !thread_->ctx().options->tls_cert_file.empty() || answered ||
      !(tls_->handshakeDone() || tls_->peerVerified())) {
    return "";
  }
  return "; the server ended the TLS session before answering: if it verifies clients "
         "(tls-auth-clients), give --cert and --key";
}

void BenchConnection::onTlsError() {
  if (state_ == State::kTlsHandshake) {
    thread_->fail("cannot connect to " + thread_->ctx().address_text + ": " + tls_->error() +
                  clientCertHint(false));
    return;
  }
  const std::string what = tls_->error();  // onLost may close and reset the channel
  onLost(what.c_str());
}

bool BenchConnection::encrypt() {
  if (!out_.empty() && tls_->handshakeDone()) {
    const ptrdiff_t n = tls_->writePlain(out_.data(), out_.size());
    if (n < 0) {
      onTlsError();
      return false;
    }
    out_.erase(0, static_cast<size_t>(n));
  }
  const size_t pending = tls_->pendingCipher();
  if (pending > 0) {
    const size_t old = tls_out_.size();
    tls_out_.resize(old + pending);
    tls_out_.resize(old + tls_->takeCipher(tls_out_.data() + old, pending));
  }
  return true;
}

bool BenchConnection::decrypt(size_t n) {
  if (!tls_->feed(tls_in_.data(), n)) {
    onTlsError();
    return false;
  }
  while (tls_->handshakeDone()) {
    if (in_.size() - in_len_ < kReadChunk / 4) {
      in_.resize(std::max(in_.size() * 2, in_len_ + kReadChunk));
    }
    const ptrdiff_t got = tls_->readPlain(in_.data() + in_len_, in_.size() - in_len_);
    if (got < 0) {
      onTlsError();
      return false;
    }
    if (got == 0) {
      break;
    }
    in_len_ += static_cast<size_t>(got);
  }
  // Handshake messages, alerts and key updates the channel produced go out at once.
  if (tls_->pendingCipher() > 0) {
    flush();
  }
  return !thread_->stopping() && state_ != State::kClosing && state_ != State::kDone;
}

void BenchConnection::sendHandshake() {
  const Options& o = *thread_->ctx().options;
  const uint64_t now = monoNanos();
  auto push = [&](const std::vector<std::string_view>& argv) {
    resp::appendCommand(out_, argv);
    InFlight& f = ring_[(head_ + count_++) % ring_.size()];
    f = InFlight{now, now, 0, 0, 0, kHandshake};
    handshake_pending_++;
  };
  if (!o.password.empty()) {
    if (!o.user.empty()) {
      push({"AUTH", o.user, o.password});
    } else {
      push({"AUTH", o.password});
    }
  }
  if (o.dbnum >= 0) {
    const std::string db = std::to_string(o.dbnum);
    push({"SELECT", db});
  }
  if (handshake_pending_ == 0) {
    becomeReady();
    return;
  }
  state_ = State::kHandshake;
  flush();
}

void BenchConnection::becomeReady() {
  state_ = State::kReady;
  if (!thread_->started()) {
    thread_->onConnectionReady();  // the thread starts every connection at once
    return;
  }
  fill(monoNanos());
  afterReplies();
}

void BenchConnection::fill(uint64_t now) {
  if (state_ != State::kReady || thread_->stopping() || thread_->draining()) {
    return;
  }
  uint64_t allowed = budget_;
  const uint64_t interval = thread_->ctx().options->reconnect_interval;
  if (interval > 0 && issued_at_connect_ + interval < allowed) {
    allowed = issued_at_connect_ + interval;
  }
  const RatePacer& pacer = thread_->pacer();
  if (pacer.enabled()) {
    const uint64_t due = pacer.dueCount(index_, now);
    if (due < allowed) {
      allowed = due;
    }
  }
  while (count_ < pipeline_ && issued_ < allowed) {
    buildRequest(now);
  }
  flush();
}

void BenchConnection::buildRequest(uint64_t now) {
  const PhaseContext& ctx = thread_->ctx();
  const Phase& phase = *ctx.phase;
  const Workload& w = *ctx.workload;
  const uint32_t c = phase.commandAt(cycle_pos_);
  if (++cycle_pos_ == phase.cycleLength()) {
    cycle_pos_ = 0;
  }
  const WorkloadCommand& cmd = phase.commands[c];
  InFlight& f = ring_[(head_ + count_++) % ring_.size()];
  const RatePacer& pacer = thread_->pacer();
  f.start_ns = pacer.enabled() ? pacer.intendedTime(index_, issued_) : now;
  f.sent_ns = now;
  f.command = static_cast<uint16_t>(c);
  f.seq = 0;
  f.key_index = 0;

  ExpandArgs args;
  args.key_prefix = w.key_prefix;
  if (cmd.tmpl.usesKey()) {
    KeyGenerator& gen = keys_[c];
    if (verify_ != nullptr) {
      f.key_index = gen.next();
      args.key = KeyOwnership::keyOf(w.keys, slot_, ctx.total_slots, f.key_index);
    } else {
      args.key = gen.next();
      args.more_keys = &gen;
    }
  }
  if (cmd.tmpl.usesData() && !w.data_baked) {
    uint32_t len = w.data_min;
    if (w.data_max > w.data_min) {
      len += static_cast<uint32_t>(data_rng_.below(w.data_max - w.data_min + 1ull));
    }
    size_t offset = 0;
    if (w.random_data) {
      offset = data_rng_.below(w.filler.size() - w.data_max + 1);
    }
    if (verify_ != nullptr && cmd.kind == OpKind::kSet) {
      f.seq = verify_->takeSeq();  // the key's state changes when the reply comes
      const size_t head = Verifier::writeHeader(header_, args.key, ctx.run_id, f.seq);
      args.data_head = std::string_view(header_, head);
      len = len > head ? static_cast<uint32_t>(len - head) : 0;
    }
    args.data_fill = std::string_view(w.filler.data() + offset, len);
  }
  f.bytes_tx = static_cast<uint32_t>(cmd.tmpl.expand(out_, args));
  issued_++;
}

void BenchConnection::flush() {
  if (tls_ != nullptr) [[unlikely]] {
    if (encrypt()) {
      writeWire(tls_out_);
    }
    return;
  }
  writeWire(out_);
}

// `buf` is out_ (plain) or tls_out_ (--tls): the bytes for the socket, in order.
void BenchConnection::writeWire(std::string& buf) {
  if (buf.empty() || write_busy_) {
    return;
  }
  auto* stream = reinterpret_cast<uv_stream_t*>(&tcp_);
  uv_buf_t ub = uv_buf_init(buf.data(), static_cast<unsigned int>(buf.size()));
  const int n = uv_try_write(stream, &ub, 1);
  if (n >= 0 && static_cast<size_t>(n) == buf.size()) {
    buf.clear();
    return;
  }
  if (n < 0 && n != UV_EAGAIN) {
    onLost(uv_strerror(n));
    return;
  }
  // The socket is full: hand the rest to uv_write and keep building into buf meanwhile.
  writing_.swap(buf);
  buf.clear();
  if (n > 0) {
    writing_.erase(0, static_cast<size_t>(n));
  }
  ub = uv_buf_init(writing_.data(), static_cast<unsigned int>(writing_.size()));
  write_req_.data = this;
  write_busy_ = true;
  const int rc = uv_write(&write_req_, stream, &ub, 1, &BenchConnection::onWrite);
  if (rc != 0) {
    write_busy_ = false;
    onLost(uv_strerror(rc));
  }
}

void BenchConnection::onWrite(uv_write_t* req, int status) {
  auto* self = static_cast<BenchConnection*>(req->data);
  self->write_busy_ = false;
  self->writing_.clear();
  if (status == UV_ECANCELED || self->state_ == State::kClosing || self->state_ == State::kDone) {
    return;
  }
  if (status < 0) {
    self->onLost(uv_strerror(status));
    return;
  }
  self->flush();
}

void BenchConnection::onAlloc(uv_handle_t* handle, size_t, uv_buf_t* buf) {
  auto* self = static_cast<BenchConnection*>(handle->data);
  if (self->tls_ != nullptr) [[unlikely]] {
    *buf = uv_buf_init(self->tls_in_.data(), static_cast<unsigned int>(self->tls_in_.size()));
    return;
  }
  if (self->in_.size() - self->in_len_ < kReadChunk / 4) {
    self->in_.resize(std::max(self->in_.size() * 2, self->in_len_ + kReadChunk));
  }
  *buf = uv_buf_init(self->in_.data() + self->in_len_,
                     static_cast<unsigned int>(self->in_.size() - self->in_len_));
}

void BenchConnection::onRead(uv_stream_t* stream, ssize_t nread, const uv_buf_t*) {
  auto* self = static_cast<BenchConnection*>(stream->data);
  if (nread == 0 || self->state_ == State::kClosing || self->state_ == State::kDone) {
    return;
  }
  if (nread < 0) {
    const char* what =
        nread == UV_EOF ? "the server closed the connection" : uv_strerror(static_cast<int>(nread));
    if (self->state_ == State::kTlsHandshake) {
      self->thread_->fail("cannot connect to " + self->thread_->ctx().address_text +
                          ": TLS handshake failed: " + what + self->clientCertHint(false));
      return;
    }
    self->onLost(what);
    return;
  }
  if (self->tls_ != nullptr) [[unlikely]] {
    if (!self->decrypt(static_cast<size_t>(nread))) {
      return;
    }
    if (self->state_ == State::kTlsHandshake) {
      if (self->tls_->handshakeDone()) {
        self->onTlsReady();
      }
      return;
    }
  } else {
    self->in_len_ += static_cast<size_t>(nread);
  }
  const uint64_t now = monoNanos();
  if (!self->processReplies(now)) {
    return;
  }
  self->thread_->onReplies(now);
  self->fill(now);
  self->afterReplies();
}

bool BenchConnection::processReplies(uint64_t now) {
  size_t pos = 0;
  while (pos < in_len_) {
    if (count_ == 0) {
      thread_->fail("protocol error: " + thread_->ctx().address_text +
                    " sent a reply with no request outstanding");
      return false;
    }
    size_t consumed = 0;
    resp::ReplyInfo info;
    const auto st =
        scanner_.scan(std::string_view(in_.data() + pos, in_len_ - pos), &consumed, &info);
    if (st == resp::ParseStatus::kIncomplete) {
      break;
    }
    if (st == resp::ParseStatus::kError) {
      thread_->fail("protocol error from " + thread_->ctx().address_text + ": " +
                    resp::errorMessage(scanner_.error()));
      return false;
    }
    onReply(std::string_view(in_.data() + pos, consumed), info, now);
    pos += consumed;
    if (thread_->stopping() || state_ == State::kClosing || state_ == State::kDone) {
      return false;
    }
  }
  if (pos > 0) {
    std::memmove(in_.data(), in_.data() + pos, in_len_ - pos);
    in_len_ -= pos;
  }
  return true;
}

void BenchConnection::onReply(std::string_view reply, const resp::ReplyInfo& info, uint64_t now) {
  const InFlight f = ring_[head_];
  head_ = (head_ + 1) % ring_.size();
  count_--;
  const bool is_error = info.type == '-' || info.type == '!';
  if (f.command == kHandshake) {
    if (is_error) {
      std::string_view msg = reply.substr(1);
      while (!msg.empty() && (msg.back() == '\n' || msg.back() == '\r')) {
        msg.remove_suffix(1);
      }
      thread_->fail("AUTH/SELECT failed on " + thread_->ctx().address_text + ": " +
                    std::string(msg));
      return;
    }
    if (--handshake_pending_ == 0) {
      becomeReady();
    }
    return;
  }
  const WorkloadCommand& cmd = thread_->ctx().phase->commands[f.command];
  CommandStats& s = thread_->statsFor(f.command);
  s.ops++;
  s.bytes_tx += f.bytes_tx;
  s.bytes_rx += reply.size();
  s.latency.record(now > f.start_ns ? now - f.start_ns : 0);
  if (is_error) [[unlikely]] {
    std::string_view msg = reply.substr(1);
    while (!msg.empty() && (msg.back() == '\n' || msg.back() == '\r')) {
      msg.remove_suffix(1);
    }
    s.errors.add(errorKind(reply), 1, msg);
    if (verify_ != nullptr && cmd.kind == OpKind::kSet) {
      verify_->onSetUnknown(f.key_index, f.seq);  // "unavailable" may still have been applied
    }
    return;
  }
  if (cmd.kind == OpKind::kSet && verify_ != nullptr) {
    if (info.type == '+') {  // SET <key> <data> answers +OK or an error
      verify_->onSetAcked(f.key_index, f.seq);
    } else {
      verify_->onSetUnknown(f.key_index, f.seq);
    }
  }
  if (cmd.kind != OpKind::kGet) {
    return;
  }
  const bool is_null = (info.type == '$' && info.value < 0) || info.type == '_';
  if (is_null) {
    s.misses++;
  } else {
    s.hits++;
  }
  if (verify_ == nullptr) {
    return;
  }
  std::string_view payload;
  if (!is_null && !resp::readString(reply, &payload)) {
    payload = reply;  // not a string: the check reports it as a foreign value
  }
  const PhaseContext& ctx = thread_->ctx();
  const uint64_t key = KeyOwnership::keyOf(ctx.workload->keys, slot_, ctx.total_slots, f.key_index);
  std::string why;
  switch (verify_->onGet(f.key_index, is_null, payload, key, ctx.run_id,
                         ctx.options->verify_allow_loss, &why)) {
    case VerifyResult::kOk:
      break;
    case VerifyResult::kUnverified:
      thread_->counters().verify_unverified++;
      break;
    case VerifyResult::kLost:
      thread_->counters().verify_lost++;
      break;
    case VerifyResult::kMismatch:
      thread_->recordMismatch("GET of key number " + std::to_string(key) + " (connection " +
                              std::to_string(slot_) + "): " + why);
      break;
  }
}

void BenchConnection::afterReplies() {
  if (state_ != State::kReady || count_ > 0 || thread_->stopping()) {
    return;
  }
  if (issued_ >= budget_ || thread_->draining()) {
    closeHandle(State::kDone);
    return;
  }
  const uint64_t interval = thread_->ctx().options->reconnect_interval;
  if (interval > 0 && issued_ - issued_at_connect_ >= interval) {
    thread_->counters().reconnects++;
    reconnect_after_close_ = true;
    closeHandle(State::kClosing);
  }
}

void BenchConnection::drain() { afterReplies(); }

void BenchConnection::onLost(const char* what) {
  if (thread_->stopping() || state_ == State::kClosing || state_ == State::kDone) {
    return;
  }
  thread_->counters().closed_by_server++;
  // Requests in flight never got a reply: count them as errors; lost SETs may or may not have
  // been applied.
  uint64_t lost = 0;
  for (size_t i = 0; i < count_; ++i) {
    const InFlight& f = ring_[(head_ + i) % ring_.size()];
    if (f.command == kHandshake) {
      continue;
    }
    lost++;
    thread_->statsFor(f.command).errors.add("CONNECTION_LOST", 1, what);
    if (verify_ != nullptr && thread_->ctx().phase->commands[f.command].kind == OpKind::kSet) {
      verify_->onSetUnknown(f.key_index, f.seq);
    }
  }
  count_ = 0;
  if (thread_->allowReconnect()) {
    reconnect_after_close_ = true;
    closeHandle(State::kClosing);
    return;
  }
  thread_->fail("connection to " + thread_->ctx().address_text + " lost: " + what + " (" +
                std::to_string(lost) + " requests in flight)" +
                clientCertHint(issued_ - issued_at_connect_ > lost));
}

void BenchConnection::abort() {
  reconnect_after_close_ = false;
  if (state_ != State::kIdle && state_ != State::kDone &&
      !uv_is_closing(reinterpret_cast<uv_handle_t*>(&tcp_))) {
    closeHandle(State::kDone);
  }
}

void BenchConnection::closeHandle(State next) {
  state_ = next == State::kDone ? State::kClosing : next;
  final_after_close_ = next == State::kDone;
  FdLifecycleGuard fds;  // uv_close closes the socket at once
  uv_close(reinterpret_cast<uv_handle_t*>(&tcp_), &BenchConnection::onClosed);
}

void BenchConnection::resetBuffers() {
  out_.clear();
  in_len_ = 0;
  head_ = 0;
  count_ = 0;
  handshake_pending_ = 0;
  scanner_.reset();
  tls_.reset();
  tls_out_.clear();
}

void BenchConnection::onClosed(uv_handle_t* handle) {
  auto* self = static_cast<BenchConnection*>(handle->data);
  self->resetBuffers();
  if (self->reconnect_after_close_ && !self->final_after_close_ && !self->thread_->stopping()) {
    self->reconnect_after_close_ = false;
    self->connect();
    return;
  }
  self->state_ = State::kDone;
  self->thread_->onConnectionDone();
}

}  // namespace sp::bench
