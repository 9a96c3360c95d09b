// SubscriberLane: the session's pub/sub lane (pubsub.h has the model). It keeps the client's
// Subscriptions and its subscriber connections, one DedicatedConn per shard it subscribed on,
// answers (un)subscribe requests once every shard involved has confirmed, and serves what a RESP2
// client may send in subscribed mode. A RESP3 subscriber's PUBLISH goes on its subscriber
// connection to the channel's shard, so a message to itself comes before the reply, as on
// redis-server. Losing a subscriber connection while subscribed closes the client, so that its
// library reconnects and subscribes again.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "backend/dedicated_conn.h"
#include "resp/command_table.h"
#include "resp/request_parser.h"
#include "session/pubsub.h"
#include "session/verdict.h"

namespace sp::session {

class SessionState;

class SubscriberLane {
 public:
  explicit SubscriberLane(SessionState& state) : state_(state) {}
  SubscriberLane(const SubscriberLane&) = delete;
  SubscriberLane& operator=(const SubscriberLane&) = delete;

  bool subscribed() const;
  const Subscriptions* subscriptions() const { return subs_.get(); }

  // A RESP2 client's request in subscribed mode (RESET is SessionState's): the (un)subscribe
  // requests, PING's subscribed form, QUIT; anything else is refused in Redis' words.
  Verdict onSubscribedRequest(const resp::RequestFrame& frame, const resp::CommandInfo* cmd);
  // SUBSCRIBE, PSUBSCRIBE, SSUBSCRIBE and their UNSUBSCRIBEs.
  Verdict onPubSub(const resp::RequestFrame& frame, const resp::CommandInfo& cmd);
  // PUBLISH / SPUBLISH while subscribed: on the channel shard's subscriber connection when it
  // speaks RESP3, else on the shared lane (kContinue).
  Verdict onPublish(const resp::RequestFrame& frame, std::string_view raw,
                    const resp::CommandInfo& cmd);

  // RESET: every subscription is dropped, and RESET sent on each live subscriber connection,
  // which the lane gives up: returned, for the caller to send and retire. The shards end the
  // subscriptions before +RESET leaves, so a message published after it never counts this client.
  std::vector<backend::DedicatedConn*> endAll();

  // The DedicatedOwner events of one of this lane's connections: true when `conn` is one.
  bool onIdle(backend::DedicatedConn& conn);
  bool onFailed(backend::DedicatedConn& conn);
  void discardAll(backend::DedicatedPool& pool);  // the client is gone

 private:
  backend::DedicatedConn* conn(uint16_t shard, resp::err::ErrorReply* error);
  void dropIdleConns();

  SessionState& state_;
  std::unique_ptr<Subscriptions> subs_;
  std::vector<backend::DedicatedConn*> conns_;  // [shard]
};

}  // namespace sp::session
