// PendingRequest: one client request waiting for its reply, pooled per worker. The shard
// connections see it as the backend::InFlightRequest it extends, and give it back through the
// reply handler (ClientSession::onBackendReply).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "backend/backend_op.h"
#include "resp/command_table.h"
#include "resp/protocol.h"

namespace sp::session {

class ClientSession;

struct PendingRequest : backend::InFlightRequest {
  ClientSession* owner = nullptr;  // nullptr once the client has gone: the reply is dropped
  PendingRequest* next = nullptr;  // link in the owner's FIFO
  uint32_t outstanding = 0;        // backend replies still expected (fragments of a split)
  bool done = false;               // reply (merged, for a split) is complete
  bool close_after = false;        // QUIT or protocol error: close once this reply is written
  // Its client's protocol when it was parsed: the shard connections it goes on speak it.
  resp::Protocol protocol = resp::Protocol::kResp2;
  resp::MergeRule merge = resp::MergeRule::kNone;
  uint16_t shard = 0;      // shard of a routed request (first fragment's for a split)
  uint32_t merge_arg = 0;  // kScanCursor: the shard count (keyspace_fanout.h)
  std::string reply;       // the reply, when it completes behind an unfinished request
  // Split requests: one reply per fragment; for MGET, where each key's value sits.
  std::vector<std::string> fragment_replies;
  std::vector<uint32_t> key_fragment;  // key i -> fragment
  std::vector<uint32_t> key_position;  // key i -> element index within that fragment's reply
  // Cluster mode: the bytes sent for each fragment (index 0 for an unsplit request), kept so a
  // MOVED or ASK reply can be followed by sending them again elsewhere.
  std::vector<std::string> sent;
  // Cluster mode, per fragment (sized on the first redirect): MOVED/ASK followed and TRYAGAIN
  // retried so far.
  std::vector<backend::ClusterTries> tries;

  // Completes with one of the proxy's own errors (a reply of shards it cannot merge).
  void answerOwn(resp::err::Own error) {
    reply = error.text;
    proxy_error = error.kind;
  }

  void reset() {
    owner = nullptr;
    next = nullptr;
    outstanding = 0;
    done = false;
    close_after = false;
    protocol = resp::Protocol::kResp2;
    merge = resp::MergeRule::kNone;
    shard = 0;
    resetInFlight();
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

}  // namespace sp::session
