// What a shard connection knows of the requests it carries: InFlightRequest (the part of a client
// request it reads and times), BackendOp (one entry of its FIFO of sent commands), and the reply
// handler through which it hands every reply back. The session layer above implements the
// handler and extends InFlightRequest into its PendingRequest; nothing here names it.
#pragma once

#include <atomic>
#include <cstdint>
#include <string_view>

#include "resp/command_table.h"

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

  void resetInFlight() {
    cmd = nullptr;
    start_ns = 0;
    reply_us = 0;
    reply_bucket = kNoBucket;
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

namespace detail {
inline std::atomic<ReplyHandler> reply_handler{nullptr};
}

// Installs `handler`; returns the one it replaces.
inline ReplyHandler setReplyHandler(ReplyHandler handler) {
  return detail::reply_handler.exchange(handler, std::memory_order_relaxed);
}

// Installs `handler` unless one is installed already.
inline void installReplyHandlerOnce(ReplyHandler handler) {
  ReplyHandler none = nullptr;
  detail::reply_handler.compare_exchange_strong(none, handler, std::memory_order_relaxed);
}

inline void deliverReply(net::Worker& worker, InFlightRequest* request, uint32_t fragment,
                         std::string_view reply) {
  detail::reply_handler.load(std::memory_order_relaxed)(worker, request, fragment, reply);
}

}  // namespace sp::backend
