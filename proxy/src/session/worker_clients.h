// WorkerClients: a worker's client side (net::ClientSide). It owns the worker's client sessions,
// the pool of their pending requests, and the replies held back to be sent later (a failed AUTH
// past the free ones). Every ClientSession registers here when accepted and leaves on close.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_set>

#include "core/intrusive_queue.h"
#include "net/deferred_queue.h"
#include "net/worker.h"
#include "net/worker_parts.h"
#include "session/pending_request.h"

namespace sp::session {

class ClientSession;

class WorkerClients final : public net::ClientSide {
 public:
  explicit WorkerClients(net::Worker& worker) : worker_(worker) {}
  ~WorkerClients() override = default;
  WorkerClients(const WorkerClients&) = delete;
  WorkerClients& operator=(const WorkerClients&) = delete;

  void start() override;
  void accept(int fd, bool unix_socket, bool tls) override;
  void closeIdle(uint64_t now_ms, uint64_t timeout_ms) override;
  bool idle() const override;
  void closeAll() override;

  ObjectPool<PendingRequest>& requests() { return requests_; }
  const std::unordered_set<ClientSession*>& sessions() const { return sessions_; }
  // A session's close is complete: it leaves the set and the open-connection counts.
  void sessionClosed(ClientSession* s);
  // Completes `request` with `reply` after delay_ms, in its place in its client's FIFO; an
  // orphaned request is released then. After closeAll, at once.
  void replyLater(PendingRequest* request, uint64_t delay_ms, std::string reply);

 private:
  struct DeferredReply {
    PendingRequest* request;
    std::string reply;
  };

  net::Worker& worker_;
  ObjectPool<PendingRequest> requests_;
  std::unordered_set<ClientSession*> sessions_;
  net::DeferredQueue<DeferredReply> replies_later_;
  bool closed_ = false;
};

// The worker's client side (its worker thread only).
inline WorkerClients& clientsOf(net::Worker& worker) {
  return static_cast<WorkerClients&>(worker.clientSide());
}
inline ObjectPool<PendingRequest>& requestsOf(net::Worker& worker) {
  return clientsOf(worker).requests();
}

// The parts of a worker above net/ (net/worker_parts.h): its shard side and its client side. Also
// installs the session's reply handler and resend lookup (backend/backend_op.h) unless a test
// installed fakes first.
net::WorkerParts buildWorkerParts(net::Worker& worker);

}  // namespace sp::session
