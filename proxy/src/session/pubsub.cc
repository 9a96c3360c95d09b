// Pub/sub: the session's subscriptions, its subscriber connections (one per shard) and the
// confirmations the proxy sends itself.
#include "session/pubsub.h"

#include <map>

#include "backend/worker_backends.h"
#include "core/ascii.h"
#include "net/worker.h"
#include "resp/encoder.h"
#include "resp/errors.h"
#include "resp/resp3.h"
#include "route/key_slot.h"
#include "session/client_session.h"
#include "session/session_checks.h"
#include "session/session_state.h"

namespace sp::session {
namespace {

void appendConfirmation(std::string* reply, std::string_view verb, const std::string_view* name,
                        size_t count) {
  resp::appendArrayHeader(*reply, 3);
  resp::appendBulk(*reply, verb);
  if (name != nullptr) {
    resp::appendBulk(*reply, *name);
  } else {
    resp::appendNullBulk(*reply);
  }
  resp::appendInteger(*reply, static_cast<int64_t>(count));
}

}  // namespace

std::string_view subscribeVerb(PubSubKind kind) {
  switch (kind) {
    case PubSubKind::kChannel:
      return "subscribe";
    case PubSubKind::kPattern:
      return "psubscribe";
    case PubSubKind::kShardChannel:
      return "ssubscribe";
  }
  return "subscribe";
}

std::string_view unsubscribeVerb(PubSubKind kind) {
  switch (kind) {
    case PubSubKind::kChannel:
      return "unsubscribe";
    case PubSubKind::kPattern:
      return "punsubscribe";
    case PubSubKind::kShardChannel:
      return "sunsubscribe";
  }
  return "unsubscribe";
}

std::set<std::string>& Subscriptions::set(PubSubKind kind) {
  switch (kind) {
    case PubSubKind::kChannel:
      return channels_;
    case PubSubKind::kPattern:
      return patterns_;
    case PubSubKind::kShardChannel:
      break;
  }
  return shard_channels_;
}

const std::set<std::string>& Subscriptions::names(PubSubKind kind) const {
  return const_cast<Subscriptions*>(this)->set(kind);
}

size_t Subscriptions::count(PubSubKind kind) const {
  return kind == PubSubKind::kShardChannel ? shard_channels_.size()
                                           : channels_.size() + patterns_.size();
}

void Subscriptions::clear() {
  channels_.clear();
  patterns_.clear();
  shard_channels_.clear();
}

void Subscriptions::subscribe(PubSubKind kind, std::span<const std::string_view> names,
                              std::string* reply) {
  std::set<std::string>& s = set(kind);
  for (const std::string_view& name : names) {
    s.emplace(name);
    appendConfirmation(reply, subscribeVerb(kind), &name, count(kind));
  }
}

void Subscriptions::unsubscribe(PubSubKind kind, std::span<const std::string_view> names,
                                std::string* reply, std::vector<std::string>* dropped) {
  std::set<std::string>& s = set(kind);
  if (names.empty()) {
    if (s.empty()) {
      appendConfirmation(reply, unsubscribeVerb(kind), nullptr, count(kind));
      return;
    }
    std::vector<std::string> all(s.begin(), s.end());
    s.clear();
    size_t left = all.size();
    for (const std::string& name : all) {
      const std::string_view view = name;
      appendConfirmation(reply, unsubscribeVerb(kind), &view, count(kind) + --left);
    }
    for (std::string& name : all) {
      dropped->push_back(std::move(name));
    }
    return;
  }
  for (const std::string_view& name : names) {
    auto it = s.find(std::string(name));
    if (it != s.end()) {
      s.erase(it);
      dropped->emplace_back(name);
    }
    appendConfirmation(reply, unsubscribeVerb(kind), &name, count(kind));
  }
}

std::string subscribedPong(std::span<const std::string_view> args) {
  std::string out;
  resp::appendArrayHeader(out, 2);
  resp::appendBulk(out, "pong");
  resp::appendBulk(out, args.size() > 1 ? args[1] : std::string_view());
  return out;
}

// ---- SessionState: subscribed mode and (un)subscribe requests ----

SessionState::Verdict SessionState::onSubscribed(const resp::RequestFrame& frame,
                                                 const resp::CommandInfo* cmd) {
  std::span<const std::string_view> args(frame.args);
  if (cmd == nullptr) {
    return Verdict::kContinue;  // unknown command, refused in order
  }
  const std::string_view name = cmd->name;
  if (cmd->handler == resp::Handler::kQuit) {
    return Verdict::kContinue;
  }
  if (cmd->handler == resp::Handler::kReset) {
    return onReset(*cmd);
  }
  // As redis-server: an unknown subcommand and a wrong arity are reported before the context.
  if (cmd->has(resp::kCmdContainer) && args.size() >= 2) {
    refuse(resp::err::unknownSubcommand(name, args[1]));
    return Verdict::kHandled;
  }
  if (!resp::arityOk(*cmd, args.size())) {
    refuse(resp::err::wrongArity(name));
    return Verdict::kHandled;
  }
  if (cmd->handler == resp::Handler::kPing) {
    if (args.size() > 2) {
      refuse(resp::err::wrongArity(cmd->name));
    } else {
      reply(subscribedPong(args));
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
  refuse(resp::err::notInSubscriberContext(name));
  return Verdict::kHandled;
}

backend::DedicatedConn* SessionState::subscriberConn(uint16_t shard, std::string* error) {
  if (subscriber_.size() <= shard) {
    subscriber_.resize(worker().topology().shardCount());
  }
  if (subscriber_[shard] == nullptr) {
    subscriber_[shard] = backend::dedicatedOf(worker()).acquire(
        shard, backend::DedicatedConn::Mode::kSubscriber, this, error, session_.protocol());
  }
  return subscriber_[shard];
}

SessionState::Verdict SessionState::onPublishWhileSubscribed(const resp::RequestFrame& frame,
                                                             std::string_view raw,
                                                             const resp::CommandInfo& cmd) {
  std::span<const std::string_view> args(frame.args);
  if (!resp::arityOk(cmd, args.size())) {
    return mayTake(Lane::kShared, nullptr) ? Verdict::kContinue : Verdict::kDefer;
  }
  const uint16_t shard = worker().topology().shardOfKey(args[1]);
  backend::DedicatedConn* conn = shard < subscriber_.size() ? subscriber_[shard] : nullptr;
  if (conn == nullptr || conn->failed() || conn->protocol() != resp::Protocol::kResp3) {
    return mayTake(Lane::kShared, nullptr) ? Verdict::kContinue : Verdict::kDefer;
  }
  if (!mayTake(Lane::kSubscriber, nullptr)) {
    return Verdict::kDefer;
  }
  PendingRequest* request = queueRequest(&cmd);
  request->shard = shard;
  request->outstanding = 1;
  conn->send(commandBytes(frame, raw), request, 0, 1, false);
  return Verdict::kHandled;
}

void SessionState::dropIdleSubscriberConns() {
  for (backend::DedicatedConn*& conn : subscriber_) {
    if (conn != nullptr && conn->idle()) {
      backend::dedicatedOf(worker()).discard(conn);
      conn = nullptr;
    }
  }
}

SessionState::Verdict SessionState::onPubSub(const resp::RequestFrame& frame,
                                             const resp::CommandInfo& cmd) {
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
  const route::Topology& topology = worker().topology();
  if (kind == PubSubKind::kShardChannel && subscribing) {
    for (const std::string_view& n : names) {
      if (topology.unitOfKey(n) != topology.unitOfKey(names[0])) {
        refuse(topology.crossUnitError());
        return Verdict::kHandled;
      }
    }
  }
  if (!mayTake(Lane::kSubscriber, nullptr)) {
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
      std::string error;
      if (subscriberConn(shard, &error) == nullptr) {
        if (!subscribed()) {
          dropIdleSubscriberConns();
        }
        refuse(error);
        return Verdict::kHandled;
      }
    }
    subs_->subscribe(kind, names, &text);
  } else {
    std::vector<std::string> dropped;
    subs_->unsubscribe(kind, names, &text, &dropped);
    for (std::string& n : dropped) {
      if (kind == PubSubKind::kPattern) {
        for (size_t s = 0; s < subscriber_.size(); ++s) {
          if (subscriber_[s] != nullptr) {
            targets[static_cast<uint16_t>(s)].push_back(n);
          }
        }
      } else {
        const uint16_t shard = topology.shardOfKey(n);
        if (shard < subscriber_.size() && subscriber_[shard] != nullptr) {
          targets[shard].push_back(std::move(n));
        }
      }
    }
  }
  uint32_t confirmations = 0;
  for (const auto& [shard, list] : targets) {
    confirmations += static_cast<uint32_t>(list.size());
  }
  PendingRequest* request = queueRequest(&cmd);
  request->merge = resp::MergeRule::kPubSubAck;
  request->reply = session_.protocol() == resp::Protocol::kResp3
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
    subscriber_[shard]->send(command, request, fragment, count, false);
    fragment += count;
  }
  if (confirmations == 0) {
    request->done = true;
    session_.drainCompleted();
  }
  if (!subscribed()) {
    dropIdleSubscriberConns();  // the others go once they have confirmed
  }
  return Verdict::kHandled;
}

}  // namespace sp::session
