// SessionState: what a client connection carries beyond plain request/reply. A plain session has
// none (a null pointer in ClientSession); one is made when a client first needs it:
//   - authentication (auth.password / auth.users): who the client is and what it may run,
//     from accept while AUTH is required (AuthGate, auth_gate.h; the rules: client_auth.h);
//   - a transaction, MULTI ... EXEC / DISCARD, and WATCH: pinned to one DedicatedConn of the
//     transaction's shard (TransactionLane, transaction_lane.h);
//   - a blocking command (BLPOP, BLMOVE, BZPOPMIN, XREAD BLOCK ...): a DedicatedConn of its
//     key's shard, back to the pool after the reply (BlockingLane, blocking_lane.h);
//   - subscriptions: subscriber DedicatedConns, one per shard (SubscriberLane,
//     subscriber_lane.h);
//   - whole-keyspace commands and CONFIG SET: every shard, merged (FanoutLane, fanout_lane.h);
//   - RESET.
// SessionState routes each request to its lane, keeps the order between lanes (below), and owns
// what the lanes share: the lane in use, dedicated connections being retired, and their events.
//
// Ordering. Every request still gets its PendingRequest in the session's FIFO and replies still
// leave in FIFO order (client_session.h). What is new is that a session's requests travel on
// "lanes" — the shared pipelines, one dedicated connection, or the subscriber connections — and
// two lanes keep no order between them. So a request whose lane differs from the lane of the
// requests before it is deferred (left unconsumed, reading paused) until the FIFO is empty, that
// is until everything sent before it has been answered. Lanes change rarely (MULTI's first
// keyed command, the command after EXEC, a BLPOP), and a plain session never changes lane.
//
// Dedicated connections are never leaked: released to the pool when no longer needed (after
// EXEC / DISCARD / UNWATCH, after a blocking reply, after the last UNSUBSCRIBE), discarded
// (closed) when the client goes.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "backend/dedicated_conn.h"
#include "config/config.h"
#include "resp/command_table.h"
#include "resp/errors.h"
#include "resp/request_parser.h"
#include "session/auth_gate.h"
#include "session/blocking_lane.h"
#include "session/client_auth.h"
#include "session/fanout_lane.h"
#include "session/pending_request.h"
#include "session/pubsub.h"
#include "session/subscriber_lane.h"
#include "session/transaction_lane.h"
#include "session/verdict.h"

namespace sp::session {

class ClientSession;

class SessionState final : public backend::DedicatedOwner {
 public:
  using Verdict = session::Verdict;

  explicit SessionState(ClientSession& session);
  ~SessionState();
  SessionState(const SessionState&) = delete;
  SessionState& operator=(const SessionState&) = delete;

  // True when a session without state must still come here for `cmd` (nullptr: unknown).
  static bool wanted(const resp::CommandInfo* cmd, const config::Config& config) {
    return (cmd != nullptr &&
            (cmd->flags & (resp::kCmdSession | resp::kCmdFanout | resp::kCmdBlocking)) != 0) ||
           !config.deny_commands.empty();
  }

  // ClientSession::start: a state for clients that must authenticate (parser limits lowered).
  static void onAccept(ClientSession& session);

  // Every request of a session with a state, and those wanted() by a session without one (which
  // then gets a state). `cmd` is table.resolve(args), nullptr when unknown.
  static Verdict dispatch(ClientSession& session, const resp::RequestFrame& frame,
                          std::string_view raw, const resp::CommandInfo* cmd);

  // The client is gone (ClientSession::close, after its FIFO was orphaned): every dedicated
  // connection is discarded.
  void onClose();

  // For CLIENT INFO / LIST.
  bool authenticated() const { return auth_.authenticated(); }
  const UserRights& rights() const { return auth_.rights(); }
  const Subscriptions* subscriptions() const { return subscriber_.subscriptions(); }
  const Transaction& transaction() const { return transaction_.transaction(); }
  bool watching() const { return transaction_.watching(); }

  // backend::DedicatedOwner
  void onDedicatedPush(backend::DedicatedConn& conn, std::string_view push) override;
  void onDedicatedIdle(backend::DedicatedConn& conn) override;
  void onDedicatedFailed(backend::DedicatedConn& conn) override;

  // ---- For the lanes (auth_gate.h, transaction_lane.h, blocking_lane.h, fanout_lane.h,
  // subscriber_lane.h) ----
  // Which connections a request travels on. Two lanes keep no order between them (see above).
  enum class Lane : uint8_t { kShared, kDedicated, kSubscriber };
  // True (and the lane taken) when a request may go on `lane` / `conn` now; false while what
  // went before on another lane is unanswered: the request is then deferred (kDefer).
  bool mayTake(Lane lane, const backend::DedicatedConn* conn);

  ClientSession& session() { return session_; }
  net::Worker& worker();
  uint64_t clientId() const;
  bool fifoEmpty() const;
  // A request answered here, queued in the FIFO (its reply completes it).
  PendingRequest* queueRequest(const resp::CommandInfo* cmd);
  void reply(std::string_view bytes);               // in FIFO order
  void refuse(const resp::err::ErrorReply& error);  // in FIFO order, counted as refused
  // The request's bytes as a RESP array (an inline request re-encoded in scratch space).
  std::string_view commandBytes(const resp::RequestFrame& frame, std::string_view raw);
  // Writes the replies that are complete at the front of the FIFO.
  void drainCompleted();
  // A dedicated connection to `shard` in the client's protocol, owned by this session, for the
  // dedicated lane just taken without one (mayTake(kDedicated, nullptr)), which it becomes;
  // nullptr with *error set when none can be had.
  backend::DedicatedConn* acquireDedicated(uint16_t shard, resp::err::ErrorReply* error);
  // Sends `bytes` for `cmd` on *slot's connection to `shard` (one is acquired when *slot is null,
  // and one of another shard retired first), as a new request in the FIFO.
  Verdict sendOnConn(backend::DedicatedConn** slot, uint16_t shard, const resp::CommandInfo& cmd,
                     std::string_view bytes, bool blocking);
  // The session is done with *slot's connection: released to the pool now when idle, else kept
  // in retiring_ until its last reply (commands the proxy added itself, such as the UNWATCH of a
  // DISCARD, may still be in flight). *slot becomes null either way, so the next transaction or
  // blocking command never inherits a connection of another shard.
  void retire(backend::DedicatedConn** slot);
  // Gives `conn` back to the pool now (its lane, if it was the lane's, becomes the shared one).
  void releaseNow(backend::DedicatedConn* conn);
  // The connection WATCH holds, when it is to `shard` (TransactionLane::watchedConnTo).
  backend::DedicatedConn** watchedConnTo(uint16_t shard) {
    return transaction_.watchedConnTo(shard);
  }
  // HELLO 2 / 3: the client's protocol, and that of the connection WATCH holds (inside MULTI,
  // HELLO is refused).
  void switchProtocol(resp::Protocol protocol);

 private:
  Verdict route(const resp::RequestFrame& frame, std::string_view raw,
                const resp::CommandInfo* cmd);

  // RESET: every lane back to its start and every dedicated connection gone, as if the client
  // had reconnected (its subscriptions ended on the shards before +RESET leaves).
  Verdict onReset(const resp::CommandInfo& cmd);

  ClientSession& session_;
  AuthGate auth_{*this};
  Lane lane_ = Lane::kShared;
  const backend::DedicatedConn* lane_conn_ = nullptr;  // kDedicated: which one
  // The protocol the lane's requests were sent in: RESP2 and RESP3 requests travel on different
  // shard connections, so a switch (HELLO) is a change of lane too.
  resp::Protocol lane_protocol_ = resp::Protocol::kResp2;
  TransactionLane transaction_{*this};
  BlockingLane blocking_{*this};
  FanoutLane fanout_{*this};
  SubscriberLane subscriber_{*this};
  std::vector<backend::DedicatedConn*> retiring_;  // no longer needed, replies still due
};

}  // namespace sp::session
