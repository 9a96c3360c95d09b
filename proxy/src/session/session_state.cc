// SessionState: each request to its lane (after the auth gate, ACL-lite and deny_commands), the
// order between lanes, RESET, and the dedicated connections' callbacks. The lanes themselves are
// classes of their own: auth_gate.h, transaction_lane.h, blocking_lane.h, fanout_lane.h and
// subscriber_lane.h.
#include "session/session_state.h"

#include <algorithm>

#include "backend/worker_backends.h"
#include "core/assert.h"
#include "core/clock.h"
#include "net/worker.h"
#include "resp/encoder.h"
#include "resp/errors.h"
#include "session/client_session.h"
#include "session/local_commands.h"
#include "session/session_checks.h"
#include "session/worker_clients.h"

namespace sp::session {

SessionState::SessionState(ClientSession& session) : session_(session) {}

SessionState::~SessionState() {
  SP_ASSERT(!transaction_.holdsConnection() && !blocking_.holdsConnection() && retiring_.empty());
}

net::Worker& SessionState::worker() { return session_.worker_; }
uint64_t SessionState::clientId() const { return session_.id_; }
bool SessionState::fifoEmpty() const { return session_.fifo_.empty(); }

void SessionState::onAccept(ClientSession& session) {
  const config::Config& config = session.worker_.config();
  if (!config.auth.required()) {
    return;
  }
  session.state_ = std::make_unique<SessionState>(session);
  session.state_->auth_.close();
}

void SessionState::switchProtocol(resp::Protocol protocol) {
  session_.setProtocol(protocol);
  transaction_.switchProtocol(protocol);
}

SessionState::Verdict SessionState::dispatch(ClientSession& session,
                                             const resp::RequestFrame& frame, std::string_view raw,
                                             const resp::CommandInfo* cmd) {
  if (session.state_ == nullptr) {
    session.state_ = std::make_unique<SessionState>(session);
  }
  return session.state_->route(frame, raw, cmd);
}

void SessionState::drainCompleted() { session_.drainCompleted(); }

SessionState::Verdict SessionState::route(const resp::RequestFrame& frame, std::string_view raw,
                                          const resp::CommandInfo* cmd) {
  std::span<const std::string_view> args(frame.args);
  const config::Config& config = worker().config();
  if (const Verdict gate = auth_.admit(cmd); gate != Verdict::kContinue) {
    return gate;
  }
  if (cmd != nullptr) {
    resp::err::ErrorReply error;
    if (!config.deny_commands.empty() && denied(config.deny_commands, *cmd)) {
      error = deniedError(*cmd);
    } else if (!permitted(auth_.rights(), *cmd, args)) {
      error = noPermError(*cmd);
    }
    if (!error.empty()) {
      if (transaction_.active()) {
        transaction_.abort(error);
      } else {
        refuse(error);
      }
      return Verdict::kHandled;
    }
  }
  if (subscriber_.subscribed() && session_.protocol() == resp::Protocol::kResp2) {
    // RESP3 clients may send any command while subscribed.
    if (cmd != nullptr && cmd->handler == resp::Handler::kReset) {
      return onReset(*cmd);
    }
    return subscriber_.onSubscribedRequest(frame, cmd);
  }
  if (transaction_.active()) {
    if (cmd != nullptr && cmd->handler == resp::Handler::kReset &&
        resp::arityOk(*cmd, args.size())) {
      return onReset(*cmd);
    }
    return transaction_.onQueued(frame, raw, cmd);
  }
  if (cmd == nullptr) {
    return Verdict::kContinue;  // refused as unknown, in order
  }
  if (cmd->has(resp::kCmdSession)) {
    switch (cmd->handler) {
      case resp::Handler::kMulti:
      case resp::Handler::kExec:
      case resp::Handler::kDiscard:
      case resp::Handler::kWatch:
      case resp::Handler::kUnwatch:
        return transaction_.onRequest(frame, raw, *cmd);
      default:
        break;
    }
    if (const resp::err::ErrorReply error = requestError(cmd, args); !error.empty()) {
      refuse(error);
      return Verdict::kHandled;
    }
    switch (cmd->handler) {
      case resp::Handler::kAuth:
        return auth_.onAuth(frame, *cmd);
      case resp::Handler::kHello:
        return auth_.onHello(frame, *cmd);
      case resp::Handler::kReset:
        return onReset(*cmd);
      default:
        return subscriber_.onPubSub(frame, *cmd);
    }
  }
  if (cmd->has(resp::kCmdFanout)) {
    return fanout_.onRequest(frame, raw, *cmd);
  }
  if (cmd->has(resp::kCmdBlocking) && BlockingLane::blocks(*cmd, args)) {
    return blocking_.onRequest(frame, raw, *cmd);
  }
  if (std::string answer; clientSetInfo(args, &answer)) {
    // Redis 7.2's CLIENT SETINFO LIB-NAME|LIB-VER value, sent by newer client libraries.
    if (answer[0] == '-') {
      refuse(answer);
    } else {
      reply(answer);
    }
    return Verdict::kHandled;
  }
  if (cmd->has(resp::kCmdLocal) || cmd->has(resp::kCmdUnsupported)) {
    return Verdict::kContinue;  // answered at once, whatever the lane
  }
  if (transaction_.holdsConnection() && transaction_.watching()) {
    return transaction_.onWhileWatching(frame, raw, *cmd);
  }
  if (subscriber_.subscribed() && cmd->handler == resp::Handler::kPublish) {
    return subscriber_.onPublish(frame, raw, *cmd);
  }
  return mayTake(Lane::kShared, nullptr) ? Verdict::kContinue : Verdict::kDefer;
}

bool SessionState::mayTake(Lane lane, const backend::DedicatedConn* conn) {
  if (lane_ == lane && (lane != Lane::kDedicated || lane_conn_ == conn) &&
      lane_protocol_ == session_.protocol()) {
    return true;
  }
  if (!fifoEmpty()) {
    return false;  // what went before on another lane must be answered first
  }
  lane_ = lane;
  lane_conn_ = conn;
  lane_protocol_ = session_.protocol();
  return true;
}

PendingRequest* SessionState::queueRequest(const resp::CommandInfo* cmd) {
  PendingRequest* request = requestsOf(worker()).acquire();
  request->owner = &session_;
  request->start_ns = monoNanos();
  request->cmd = cmd;
  request->protocol = session_.protocol();
  session_.fifo_.push(request);
  return request;
}

void SessionState::reply(std::string_view bytes) { session_.replyNow(bytes); }

void SessionState::refuse(const resp::err::ErrorReply& error) { session_.refuse(error); }

std::string_view SessionState::commandBytes(const resp::RequestFrame& frame, std::string_view raw) {
  if (!frame.is_inline) {
    return raw;
  }
  thread_local std::string command;  // scratch, reused
  command.clear();
  resp::appendCommand(command, frame.args);
  return command;
}

backend::DedicatedConn* SessionState::acquireDedicated(uint16_t shard,
                                                       resp::err::ErrorReply* error) {
  backend::DedicatedConn* conn = backend::dedicatedOf(worker()).acquire(
      shard, backend::DedicatedConn::Mode::kCommands, this, error, session_.protocol());
  if (conn != nullptr) {
    lane_conn_ = conn;
  }
  return conn;
}

SessionState::Verdict SessionState::sendOnConn(backend::DedicatedConn** slot, uint16_t shard,
                                               const resp::CommandInfo& cmd, std::string_view bytes,
                                               bool blocking) {
  backend::DedicatedConn* conn = *slot;
  if (conn != nullptr && conn->shard() != shard) {
    // Another shard: the connection in use must first have answered everything.
    if (!fifoEmpty()) {
      return Verdict::kDefer;
    }
    retire(slot);
    conn = nullptr;
  }
  if (!mayTake(Lane::kDedicated, conn)) {
    return Verdict::kDefer;
  }
  if (conn == nullptr) {
    resp::err::ErrorReply error;
    conn = acquireDedicated(shard, &error);
    if (conn == nullptr) {
      refuse(error);
      return Verdict::kHandled;
    }
    *slot = conn;
  }
  PendingRequest* request = queueRequest(&cmd);
  request->shard = shard;
  request->outstanding = 1;
  conn->send(bytes, request, 0, 1, blocking);
  return Verdict::kHandled;
}

SessionState::Verdict SessionState::onReset(const resp::CommandInfo& cmd) {
  if (!fifoEmpty()) {
    return Verdict::kDefer;  // everything before RESET is answered first
  }
  // Every dedicated connection goes, as if the client had reconnected; the subscriber ones first
  // end their subscriptions on the shards, and +RESET waits for them.
  const std::vector<backend::DedicatedConn*> ending = subscriber_.endAll();
  onClose();
  PendingRequest* request = nullptr;
  if (!ending.empty()) {
    mayTake(Lane::kSubscriber, nullptr);  // what follows waits for +RESET (the FIFO is empty)
    request = queueRequest(&cmd);         // in the protocol the client had
    request->merge = resp::MergeRule::kPubSubAck;
    request->reply = "+RESET\r\n";
    request->fragment_replies.resize(ending.size());
    request->outstanding = static_cast<uint32_t>(ending.size());
    for (size_t i = 0; i < ending.size(); ++i) {
      ending[i]->send("*1\r\n$5\r\nRESET\r\n", request, static_cast<uint32_t>(i), 1, false);
      retiring_.push_back(ending[i]);  // closed once it has answered
    }
  }
  transaction_.reset();
  session_.name_.clear();
  session_.setProtocol(resp::Protocol::kResp2);
  if (worker().config().auth.required()) {
    auth_.close();
  }
  if (request == nullptr) {
    reply("+RESET\r\n");
  }
  return Verdict::kHandled;
}

void SessionState::retire(backend::DedicatedConn** slot) {
  backend::DedicatedConn* conn = *slot;
  *slot = nullptr;
  if (conn->idle()) {
    releaseNow(conn);
  } else {
    retiring_.push_back(conn);
  }
}

void SessionState::releaseNow(backend::DedicatedConn* conn) {
  if (lane_conn_ == conn) {
    lane_ = Lane::kShared;
    lane_conn_ = nullptr;
  }
  backend::dedicatedOf(worker()).release(conn);
}

void SessionState::onDedicatedPush(backend::DedicatedConn& conn, std::string_view push) {
  // Whole, in the client's protocol (a push `>` in RESP3, an array in RESP2: its elements are
  // the same), and ahead of the reply the same connection sends after it.
  // A push ahead of a request's reply is framed in the protocol of that request (RESET switches
  // the client to RESP2 before its subscriber connections have confirmed).
  auto* before = static_cast<PendingRequest*>(conn.oldestRequest());
  const resp::Protocol protocol = before != nullptr ? before->protocol : session_.protocol();
  std::string bytes(push);
  if (protocol == resp::Protocol::kResp3) {
    bytes[0] = '>';
  } else {
    bytes[0] = '*';
  }
  session_.replyBefore(before, bytes);
}

void SessionState::onDedicatedIdle(backend::DedicatedConn& conn) {
  if (blocking_.onIdle(conn)) {
    return;
  }
  if (transaction_.onIdle(conn)) {
    return;
  }
  if (auto it = std::find(retiring_.begin(), retiring_.end(), &conn); it != retiring_.end()) {
    retiring_.erase(it);
    releaseNow(&conn);
    return;
  }
  subscriber_.onIdle(conn);
}

void SessionState::onDedicatedFailed(backend::DedicatedConn& conn) {
  if (lane_conn_ == &conn) {
    lane_ = Lane::kShared;
    lane_conn_ = nullptr;
  }
  if (blocking_.onFailed(conn)) {
    return;
  }
  if (std::erase(retiring_, &conn) > 0) {
    return;
  }
  if (transaction_.onFailed(conn)) {
    return;
  }
  subscriber_.onFailed(conn);
}

void SessionState::onClose() {
  backend::DedicatedPool& pool = backend::dedicatedOf(worker());
  transaction_.discard(pool);
  blocking_.discard(pool);
  subscriber_.discardAll(pool);
  std::vector<backend::DedicatedConn*> retiring;
  retiring.swap(retiring_);
  for (backend::DedicatedConn* conn : retiring) {
    pool.discard(conn);
  }
  lane_ = Lane::kShared;
  lane_conn_ = nullptr;
}

}  // namespace sp::session
