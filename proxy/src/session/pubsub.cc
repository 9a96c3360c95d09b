// Pub/sub: the session's subscriptions and the confirmations the proxy sends itself (the
// subscriber connections: subscriber_lane.h).
#include "session/pubsub.h"

#include <utility>

#include "resp/encoder.h"

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

}  // namespace sp::session
