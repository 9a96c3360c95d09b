// A worker's client side: accept, idle sweep, drain, shutdown, delayed replies.
#include "session/worker_clients.h"

#include <unistd.h>

#include <algorithm>
#include <vector>

#include <spdlog/spdlog.h>

#include "backend/backend_op.h"
#include "backend/worker_backends.h"
#include "resp/errors.h"
#include "session/client_session.h"

namespace sp::session {

void WorkerClients::start() {
  replies_later_.init(worker_.timers(), "client.deferred_reply", [this](DeferredReply& r) {
    ClientSession::onBackendReply(worker_, r.request, 0, r.reply);
  });
}

void WorkerClients::accept(int fd, bool unix_socket, bool tls_listener) {
  net::ProxyContext& context = worker_.context();
  net::WorkerStats& stats = worker_.stats();
  const uint64_t id = context.next_client_id.fetch_add(1, std::memory_order_relaxed);
  auto* session = new ClientSession(worker_, id);
  uv_tcp_init(worker_.loop(), session->handle());
  sessions_.insert(session);
  stats.connections_open.add();
  const uint64_t open = context.clients_open.fetch_add(1, std::memory_order_relaxed) + 1;
  if (uv_tcp_open(session->handle(), fd) != 0) {
    ::close(fd);
    session->close(net::CloseReason::kError, "accept failed");
    return;
  }
  const uint64_t limit = std::min<uint64_t>(worker_.config().limits.max_clients,
                                            context.max_clients.load(std::memory_order_relaxed));
  if (open > limit) {
    stats.connections_rejected.add();
    if (worker_.logLimiter().allow()) {
      spdlog::warn("worker {}: client connection refused: {} clients open, the limit is {}",
                   worker_.index(), open - 1, limit);
    }
    session->refuseConnection(resp::err::kMaxClients);
    return;
  }
  stats.connections_accepted.add();
  // The context in force now: a reload that renewed the certificate applies from here on.
  std::shared_ptr<const tls::TlsContext> tls = tls_listener ? context.serverTls() : nullptr;
  if (tls_listener && tls == nullptr) {
    session->close(net::CloseReason::kTlsError, "no TLS context");  // never plaintext
    return;
  }
  session->start(unix_socket, std::move(tls));
}

void WorkerClients::closeIdle(uint64_t now_ms, uint64_t timeout_ms) {
  std::vector<ClientSession*> idle;
  for (ClientSession* s : sessions_) {
    if (s->idleMs(now_ms) > timeout_ms) {
      idle.push_back(s);
    }
  }
  for (ClientSession* s : idle) {
    s->close(net::CloseReason::kIdleTimeout);
  }
}

bool WorkerClients::idle() const {
  return std::all_of(sessions_.begin(), sessions_.end(),
                     [](const ClientSession* s) { return s->idle(); });
}

void WorkerClients::closeAll() {
  closed_ = true;
  std::vector<ClientSession*> sessions(sessions_.begin(), sessions_.end());
  for (ClientSession* s : sessions) {
    s->close(net::CloseReason::kShutdown);
  }
  // Their clients have gone: answering the replies held back releases the requests.
  for (DeferredReply& r : replies_later_.close()) {
    ClientSession::onBackendReply(worker_, r.request, 0, r.reply);
  }
}

void WorkerClients::sessionClosed(ClientSession* s) {
  sessions_.erase(s);
  worker_.stats().connections_open.sub();
  worker_.context().clients_open.fetch_sub(1, std::memory_order_relaxed);
}

void WorkerClients::replyLater(PendingRequest* request, uint64_t delay_ms, std::string reply) {
  if (closed_) {
    ClientSession::onBackendReply(worker_, request, 0, reply);
    return;
  }
  replies_later_.push(delay_ms, DeferredReply{request, std::move(reply)});
}

net::WorkerParts buildWorkerParts(net::Worker& worker) {
  // The shard connections hand their replies to the sessions (the same handler for every worker;
  // a test's fake, installed first, stays).
  backend::reply_handler.installOnce(&ClientSession::onBackendReply);
  backend::resend_lookup.installOnce(&ClientSession::resendOf);
  net::WorkerParts parts;
  parts.shards = std::make_unique<backend::WorkerBackends>(worker);
  parts.clients = std::make_unique<WorkerClients>(worker);
  return parts;
}

}  // namespace sp::session
