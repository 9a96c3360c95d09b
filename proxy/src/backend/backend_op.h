// What a shard connection knows of the requests it carries: InFlightRequest (the part of a client
// request it reads and times), BackendOp (one entry of its FIFO of sent commands), the reply
// handler through which it hands every reply back, and the lookup through which a cluster
// redirect finds what to send again. The session layer above implements the handler and the lookup
// and extends InFlightRequest into its PendingRequest; nothing here names it.
#pragma once

#include <atomic>
#include <cstdint>
#include <string_view>

#include "resp/command_table.h"
#include "resp/errors.h"
#include "resp/protocol.h"

namespace sp::net {
class Worker;
}

namespace sp::backend {

// A client request (or a fragment's request) as the shard connections see it.
struct InFlightRequest {
  static constexpr uint8_t kNoBucket = 0xff;
  const resp::CommandInfo* cmd = nullptr;  // its command: slow-command limit, metrics, slow log
  uint64_t start_ns = 0;                   // when it was parsed
  // Metrics builds: the duration (parse -> last backend reply) measured by the backend hook, and
  // its histogram bucket (kNoBucket: not measured), reused when the request completes.
  uint64_t reply_us = 0;
  uint8_t reply_bucket = kNoBucket;
  // Which of the proxy's own errors answered this request or one of its fragments (the
  // catalogue of resp/errors.h; kNone: none did). An error reply of a request marked
  // kShardUnavailable (deliverUnavailable) counts as result="unavailable", not as the shard's
  // error; any mark counts in shardproxy_proxy_errors_total when the request's reply is an error.
  resp::err::ProxyError proxy_error = resp::err::ProxyError::kNone;

  void resetInFlight() {
    cmd = nullptr;
    start_ns = 0;
    reply_us = 0;
    reply_bucket = kNoBucket;
    proxy_error = resp::err::ProxyError::kNone;
  }
};

// What a backend FIFO entry stands for: a client's request or one of the proxy's own commands.
enum class OpKind : uint8_t {
  kRequest,   // request != nullptr
  kPing,      // health check (or the probe of an ejected shard)
  kAuth,      // AUTH sent first on every (re)connect
  kHello,     // HELLO 3 after it, on a connection for RESP3 clients
  kAsking,    // ASKING ahead of a request redirected by -ASK (cluster mode)
  kReadOnly,  // READONLY on a cluster replica connection, so it serves reads
};

// An entry in a backend connection's FIFO of requests sent.
struct BackendOp {
  InFlightRequest* request = nullptr;  // nullptr for the proxy's own commands
  BackendOp* next = nullptr;
  uint32_t fragment = 0;  // which fragment of a split request this op carries
  OpKind kind = OpKind::kRequest;
  bool slow = false;  // one of backend.slow_commands: the longer stall limit applies
};

// Where the reply to fragment `fragment` of `request` goes: a shard's reply, or the proxy's own
// error when the request failed. The layer that owns the requests installs it before a worker
// runs (the worker installs the session's); it is the same for every worker. Tests install a fake
// first, and it stays.
using ReplyHandler = void (*)(net::Worker& worker, InFlightRequest* request, uint32_t fragment,
                              std::string_view reply);

// Cluster mode, per fragment: MOVED/ASK followed and TRYAGAIN retried so far. Each fragment has
// its own budget: a split over many moved slots gets one MOVED per fragment.
struct ClusterTries {
  uint32_t redirects = 0;
  uint32_t retries = 0;
};

// Cluster mode: what sending a fragment again (after MOVED, ASK or TRYAGAIN) needs of its request.
struct Resend {
  std::string_view bytes;  // the fragment's command as it was sent
  ClusterTries* tries;     // the fragment's counts, updated by the redirector
  uint64_t client_id;      // picks the client's connection to a listed shard
  resp::Protocol protocol;
  uint16_t shard;  // the request's shard: statistics of a connection opened on demand
};

// Fills `out` and returns true when fragment `fragment` of `request` can be sent again: its
// client is still there and its bytes were kept. Installed, like the reply handler, by the layer
// that owns the requests.
using ResendLookup = bool (*)(InFlightRequest* request, uint32_t fragment, Resend* out);

// A process-wide function installed by the layer above (or a test's fake).
template <typename Fn>
class Hook {
 public:
  // Installs `fn`; returns the one it replaces.
  Fn set(Fn fn) { return fn_.exchange(fn, std::memory_order_relaxed); }
  // Installs `fn` unless one is installed already.
  void installOnce(Fn fn) {
    Fn none = nullptr;
    fn_.compare_exchange_strong(none, fn, std::memory_order_relaxed);
  }
  Fn get() const { return fn_.load(std::memory_order_relaxed); }

 private:
  std::atomic<Fn> fn_{nullptr};
};

inline Hook<ReplyHandler> reply_handler;
inline Hook<ResendLookup> resend_lookup;

inline void deliverReply(net::Worker& worker, InFlightRequest* request, uint32_t fragment,
                         std::string_view reply) {
  reply_handler.get()(worker, request, fragment, reply);
}

// The proxy's own error for a fragment whose shard could not serve it (down, ejected, failed
// mid-request; resp::err::shardUnavailable's words), delivered in the reply's place and marked on
// the request, so that metrics count it by this mark and never by the text.
inline void deliverUnavailable(net::Worker& worker, InFlightRequest* request, uint32_t fragment,
                               std::string_view error) {
  request->proxy_error = resp::err::ProxyError::kShardUnavailable;
  deliverReply(worker, request, fragment, error);
}

}  // namespace sp::backend
