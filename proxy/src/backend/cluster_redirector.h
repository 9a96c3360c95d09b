// ClusterRedirector (cluster mode): what a worker does with a shard's -MOVED, -ASK and -TRYAGAIN
// instead of handing them to the client.
//
//   -MOVED <slot> <host>:<port>  the fragment goes again to that node (a listed shard's
//                                connection, or one the pool opens on demand), and the topology
//                                watcher is asked for a CLUSTER SLOTS refresh;
//   -ASK <slot> <host>:<port>    the same, with ASKING ahead of it, and no refresh;
//   -TRYAGAIN ...                the fragment goes again to the same node after 2 ms, doubling up
//                                to 100 ms, up to 10 times (about half a second in all).
//
// Each fragment follows at most backend.max_redirects redirects. A reply that is not followed (the
// budget is spent, the address does not parse, the client has gone) is delivered as it is. The
// bytes to send again come through the resend lookup (backend_op.h). Worker thread only.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "backend/backend_op.h"
#include "net/deferred_queue.h"
#include "route/topology.h"

namespace sp::net {
class Worker;
}

namespace sp::backend {

class BackendPool;

class ClusterRedirector {
 public:
  static constexpr uint64_t kTryAgainFirstDelayMs = 2;
  static constexpr uint64_t kTryAgainMaxDelayMs = 100;
  static constexpr uint32_t kTryAgainRetries = 10;

  ClusterRedirector(net::Worker& worker, BackendPool& pool);
  ClusterRedirector(const ClusterRedirector&) = delete;
  ClusterRedirector& operator=(const ClusterRedirector&) = delete;

  void start();  // on the worker's thread, before the first retry

  // A -MOVED or -ASK reply to fragment `fragment` of `request`: true when it was followed (the
  // fragment was sent again), false when the caller delivers the reply as it is.
  bool redirect(InFlightRequest* request, uint32_t fragment, std::string_view reply);
  // A -TRYAGAIN from `node`: true when the fragment will go there again after a pause, false when
  // its retries are spent (or the worker is closing) and the caller delivers the reply.
  bool retryLater(InFlightRequest* request, uint32_t fragment, const route::ShardAddress& node,
                  std::string_view reply);
  size_t waitingRetries() const { return retries_.size(); }

  // Answers every waiting retry with its TRYAGAIN and takes no more (worker shutdown).
  void shutdown();

 private:
  struct Retry {
    InFlightRequest* request;
    uint32_t fragment;
    std::string host;
    uint16_t port;
    std::string reply;  // the TRYAGAIN, answered if the client goes or the worker closes
  };

  void onRetryDue(Retry& retry);
  // Sends `resend`'s bytes for the fragment to host:port, with ASKING first when `asking`; a node
  // that takes no request answers with its error.
  void sendToNode(InFlightRequest* request, uint32_t fragment, const Resend& resend,
                  const std::string& host, uint16_t port, bool asking);

  net::Worker& worker_;
  BackendPool& pool_;
  net::DeferredQueue<Retry> retries_;
  bool started_ = false;
  bool shut_down_ = false;
};

}  // namespace sp::backend
