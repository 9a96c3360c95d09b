// SubscriberLane: subscribed mode, (un)subscribe requests and the subscriber connections
// (subscriber_lane.h).
#include "session/subscriber_lane.h"

#include <map>
#include <memory>
#include <utility>

#include <spdlog/spdlog.h>

#include "backend/worker_backends.h"
#include "core/ascii.h"
#include "net/worker.h"
#include "resp/encoder.h"
#include "resp/errors.h"
#include "resp/resp3.h"
#include "session/client_session.h"
#include "session/session_state.h"

namespace sp::session {

bool SubscriberLane::subscribed() const { return subs_ != nullptr && subs_->total() > 0; }

std::vector<backend::DedicatedConn*> SubscriberLane::endAll() {
  std::vector<backend::DedicatedConn*> live;
  for (backend::DedicatedConn*& conn : conns_) {
    if (conn != nullptr && !conn->failed()) {
      live.push_back(conn);
      conn = nullptr;
    }
  }
  if (subs_ != nullptr) {
    subs_->clear();
  }
  return live;
}

bool SubscriberLane::onIdle(backend::DedicatedConn& conn) {
  bool mine = false;
  for (backend::DedicatedConn*& sub : conns_) {
    if (sub == &conn) {
      mine = true;
      if (!subscribed()) {
        backend::dedicatedOf(state_.worker()).discard(sub);
        sub = nullptr;
      }
    }
  }
  return mine;
}

bool SubscriberLane::onFailed(backend::DedicatedConn& conn) {
  bool lost = false;
  for (backend::DedicatedConn*& sub : conns_) {
    if (sub == &conn) {
      sub = nullptr;
      lost = true;
    }
  }
  if (lost && subscribed()) {
    // The shard dropped this client's subscriptions; like a real server going away, close
    // the client so that its library reconnects and subscribes again.
    net::Worker& worker = state_.worker();
    if (worker.logLimiter().allow()) {
      spdlog::warn("worker {}: client {} closed: subscriber connection to {} lost ({})",
                   worker.index(), state_.clientId(), conn.address().label(), conn.failure());
    }
    state_.session().close(net::CloseReason::kError, "subscriber connection lost");
  }
  return lost;
}

void SubscriberLane::discardAll(backend::DedicatedPool& pool) {
  for (backend::DedicatedConn*& conn : conns_) {
    if (conn != nullptr) {
      pool.discard(conn);
      conn = nullptr;
    }
  }
}

Verdict SubscriberLane::onSubscribedRequest(const resp::RequestFrame& frame,
                                            const resp::CommandInfo* cmd) {
  std::span<const std::string_view> args(frame.args);
  if (cmd == nullptr) {
    return Verdict::kContinue;  // unknown command, refused in order
  }
  const std::string_view name = cmd->name;
  if (cmd->handler == resp::Handler::kQuit) {
    return Verdict::kContinue;
  }
  // As redis-server: an unknown subcommand and a wrong arity are reported before the context.
  if (cmd->has(resp::kCmdContainer) && args.size() >= 2) {
    state_.refuse(resp::err::unknownSubcommand(name, args[1]));
    return Verdict::kHandled;
  }
  if (!resp::arityOk(*cmd, args.size())) {
    state_.refuse(resp::err::wrongArity(name));
    return Verdict::kHandled;
  }
  if (cmd->handler == resp::Handler::kPing) {
    if (args.size() > 2) {
      state_.refuse(resp::err::wrongArity(cmd->name));
    } else {
      state_.reply(subscribedPong(args));
    }
    return Verdict::kHandled;
  }
  switch (cmd->handler) {
    case resp::Handler::kSubscribe:
    case resp::Handler::kPSubscribe:
    case resp::Handler::kSSubscribe:
    case resp::Handler::kUnsubscribe:
    case resp::Handler::kPUnsubscribe:
    case resp::Handler::kSUnsubscribe:
      return onPubSub(frame, *cmd);
    default:
      break;
  }
  state_.refuse(resp::err::notInSubscriberContext(name));
  return Verdict::kHandled;
}

backend::DedicatedConn* SubscriberLane::conn(uint16_t shard, resp::err::ErrorReply* error) {
  if (conns_.size() <= shard) {
    conns_.resize(state_.worker().topology().shardCount());
  }
  if (conns_[shard] == nullptr) {
    conns_[shard] = backend::dedicatedOf(state_.worker())
                        .acquire(shard, backend::DedicatedConn::Mode::kSubscriber, &state_, error,
                                 state_.session().protocol());
  }
  return conns_[shard];
}

Verdict SubscriberLane::onPublish(const resp::RequestFrame& frame, std::string_view raw,
                                  const resp::CommandInfo& cmd) {
  std::span<const std::string_view> args(frame.args);
  if (!resp::arityOk(cmd, args.size())) {
    return state_.mayTake(SessionState::Lane::kShared, nullptr) ? Verdict::kContinue
                                                                : Verdict::kDefer;
  }
  const uint16_t shard = state_.worker().topology().shardOfKey(args[1]);
  backend::DedicatedConn* conn = shard < conns_.size() ? conns_[shard] : nullptr;
  if (conn == nullptr || conn->failed() || conn->protocol() != resp::Protocol::kResp3) {
    return state_.mayTake(SessionState::Lane::kShared, nullptr) ? Verdict::kContinue
                                                                : Verdict::kDefer;
  }
  if (!state_.mayTake(SessionState::Lane::kSubscriber, nullptr)) {
    return Verdict::kDefer;
  }
  PendingRequest* request = state_.queueRequest(&cmd);
  request->shard = shard;
  request->outstanding = 1;
  conn->send(state_.commandBytes(frame, raw), request, 0, 1, false);
  return Verdict::kHandled;
}

void SubscriberLane::dropIdleConns() {
  for (backend::DedicatedConn*& conn : conns_) {
    if (conn != nullptr && conn->idle()) {
      backend::dedicatedOf(state_.worker()).discard(conn);
      conn = nullptr;
    }
  }
}

Verdict SubscriberLane::onPubSub(const resp::RequestFrame& frame, const resp::CommandInfo& cmd) {
  std::span<const std::string_view> args(frame.args);
  bool subscribing = true;
  PubSubKind kind = PubSubKind::kChannel;
  switch (cmd.handler) {
    case resp::Handler::kUnsubscribe:
      subscribing = false;
      break;
    case resp::Handler::kPSubscribe:
      kind = PubSubKind::kPattern;
      break;
    case resp::Handler::kPUnsubscribe:
      subscribing = false;
      kind = PubSubKind::kPattern;
      break;
    case resp::Handler::kSSubscribe:
      kind = PubSubKind::kShardChannel;
      break;
    case resp::Handler::kSUnsubscribe:
      subscribing = false;
      kind = PubSubKind::kShardChannel;
      break;
    default:
      break;
  }
  std::span<const std::string_view> names = args.subspan(1);
  const route::Topology& topology = state_.worker().topology();
  if (kind == PubSubKind::kShardChannel && subscribing) {
    for (const std::string_view& n : names) {
      if (topology.unitOfKey(n) != topology.unitOfKey(names[0])) {
        state_.refuse(topology.crossUnitError());
        return Verdict::kHandled;
      }
    }
  }
  if (!state_.mayTake(SessionState::Lane::kSubscriber, nullptr)) {
    return Verdict::kDefer;
  }
  if (subs_ == nullptr) {
    subs_ = std::make_unique<Subscriptions>();
  }
  // What each shard must be told: shard -> names, in request order.
  std::map<uint16_t, std::vector<std::string>> targets;
  std::string text;
  if (subscribing) {
    for (const std::string_view& n : names) {
      if (kind == PubSubKind::kPattern) {
        for (size_t s = 0; s < topology.shardCount(); ++s) {
          targets[static_cast<uint16_t>(s)].emplace_back(n);
        }
      } else {
        targets[topology.shardOfKey(n)].emplace_back(n);
      }
    }
    // Every connection first: a shard that cannot be reached leaves the subscriptions as they
    // were.
    for (const auto& [shard, list] : targets) {
      resp::err::ErrorReply error;
      if (conn(shard, &error) == nullptr) {
        if (!subscribed()) {
          dropIdleConns();
        }
        state_.refuse(error);
        return Verdict::kHandled;
      }
    }
    subs_->subscribe(kind, names, &text);
  } else {
    std::vector<std::string> dropped;
    subs_->unsubscribe(kind, names, &text, &dropped);
    for (std::string& n : dropped) {
      if (kind == PubSubKind::kPattern) {
        for (size_t s = 0; s < conns_.size(); ++s) {
          if (conns_[s] != nullptr) {
            targets[static_cast<uint16_t>(s)].push_back(n);
          }
        }
      } else {
        const uint16_t shard = topology.shardOfKey(n);
        if (shard < conns_.size() && conns_[shard] != nullptr) {
          targets[shard].push_back(std::move(n));
        }
      }
    }
  }
  uint32_t confirmations = 0;
  for (const auto& [shard, list] : targets) {
    confirmations += static_cast<uint32_t>(list.size());
  }
  PendingRequest* request = state_.queueRequest(&cmd);
  request->merge = resp::MergeRule::kPubSubAck;
  request->reply = state_.session().protocol() == resp::Protocol::kResp3
                       ? resp::toResp3(text, resp::Resp3Shape::kPush)
                       : std::move(text);
  request->fragment_replies.resize(confirmations);
  request->outstanding = confirmations;
  uint32_t fragment = 0;
  const std::string verb = upperAscii(subscribing ? subscribeVerb(kind) : unsubscribeVerb(kind));
  std::string command;
  for (const auto& [shard, list] : targets) {
    command.clear();
    resp::appendArrayHeader(command, static_cast<int64_t>(list.size() + 1));
    resp::appendBulk(command, verb);
    for (const std::string& n : list) {
      resp::appendBulk(command, n);
    }
    const auto count = static_cast<uint32_t>(list.size());
    conns_[shard]->send(command, request, fragment, count, false);
    fragment += count;
  }
  if (confirmations == 0) {
    request->done = true;
    state_.drainCompleted();
  }
  if (!subscribed()) {
    dropIdleConns();  // the others go once they have confirmed
  }
  return Verdict::kHandled;
}

}  // namespace sp::session
