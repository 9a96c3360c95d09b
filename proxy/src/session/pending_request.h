// PendingRequest: one client request waiting for its reply, and BackendOp, one request (or one
// fragment of a split request) sent on a backend connection. Both are pooled per worker.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "resp/command_table.h"
#include "resp/protocol.h"

namespace sp::session {

class ClientSession;

struct PendingRequest {
  ClientSession* owner = nullptr;  // nullptr once the client has gone: the reply is dropped
  PendingRequest* next = nullptr;  // link in the owner's FIFO
  uint32_t outstanding = 0;        // backend replies still expected (fragments of a split)
  bool done = false;               // reply (merged, for a split) is complete
  bool close_after = false;        // QUIT or protocol error: close once this reply is written
  // Its client's protocol when it was parsed: the shard connections it goes on speak it.
  resp::Protocol protocol = resp::Protocol::kResp2;
  resp::MergeRule merge = resp::MergeRule::kNone;
  uint16_t shard = 0;  // shard of a routed request (first fragment's for a split)
  uint64_t start_ns = 0;
  // Metrics builds: the duration (parse -> last backend reply) measured by the backend hook, and
  // its histogram bucket (kNoBucket: not measured), reused when the request completes.
  static constexpr uint8_t kNoBucket = 0xff;
  uint64_t reply_us = 0;
  uint8_t reply_bucket = kNoBucket;
  const resp::CommandInfo* cmd = nullptr;  // its command: metrics class and slow log entry
  uint32_t merge_arg = 0;                  // kScanCursor: the shard count (keyspace_fanout.h)
  std::string reply;  // the reply, when it completes behind an unfinished request
  // Split requests: one reply per fragment; for MGET, where each key's value sits.
  std::vector<std::string> fragment_replies;
  std::vector<uint32_t> key_fragment;  // key i -> fragment
  std::vector<uint32_t> key_position;  // key i -> element index within that fragment's reply
  // Cluster mode: the bytes sent for each fragment (index 0 for an unsplit request), kept so a
  // MOVED or ASK reply can be followed by sending them again elsewhere.
  std::vector<std::string> sent;
  // Cluster mode, per fragment (sized on the first redirect): MOVED/ASK followed and TRYAGAIN
  // retried so far. Each fragment has its own budget: a split over many moved slots gets one
  // MOVED per fragment.
  struct ClusterTries {
    uint32_t redirects = 0;
    uint32_t retries = 0;
  };
  std::vector<ClusterTries> tries;

  void reset() {
    owner = nullptr;
    next = nullptr;
    outstanding = 0;
    done = false;
    close_after = false;
    protocol = resp::Protocol::kResp2;
    merge = resp::MergeRule::kNone;
    shard = 0;
    start_ns = 0;
    reply_us = 0;
    reply_bucket = kNoBucket;

    cmd = nullptr;
    merge_arg = 0;
    reply.clear();
    if (reply.capacity() > (64u << 10)) {
      std::string().swap(reply);
    }
    for (auto& f : fragment_replies) {
      f.clear();
    }
    fragment_replies.clear();
    key_fragment.clear();
    key_position.clear();
    for (auto& bytes : sent) {
      bytes.clear();
    }
    sent.clear();
    tries.clear();
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
  PendingRequest* request = nullptr;  // nullptr for the proxy's own commands
  BackendOp* next = nullptr;
  uint32_t fragment = 0;  // index into request->fragment_replies for split requests
  OpKind kind = OpKind::kRequest;
  bool slow = false;  // one of backend.slow_commands: the longer stall limit applies
};

}  // namespace sp::session
