// Pub/sub through the proxy.
//
// A channel lives on one shard, the one that owns its slot (keySlot of the channel name, as Redis
// Cluster places sharded channels): PUBLISH and SPUBLISH are routed there like keyed commands,
// and SUBSCRIBE / SSUBSCRIBE subscribe there, on the session's subscriber connection to that
// shard (a DedicatedConn in subscriber mode, one per shard the session needs). A pattern can
// match a channel of any shard, so PSUBSCRIBE subscribes on every shard; a message still
// arrives once, from the one shard it was published on. The pushes of all the session's
// subscriber connections are merged into its output whole, message by message, in RESP2 form.
//
// The proxy answers (un)subscribe requests itself, from Subscriptions below, with Redis' counts
// (channels + patterns, or shard channels) — the shards' own confirmations, whose counts are per
// connection, only tell it when each shard has done its part: the reply leaves once every shard
// involved has confirmed, so a message published after the client saw its confirmation is
// delivered.
#pragma once

#include <cstdint>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace sp::session {

enum class PubSubKind : uint8_t { kChannel, kPattern, kShardChannel };

class Subscriptions {
 public:
  // SUBSCRIBE / PSUBSCRIBE / SSUBSCRIBE names...: records them and appends one confirmation per
  // name to *reply, as Redis sends them.
  void subscribe(PubSubKind kind, std::span<const std::string_view> names, std::string* reply);

  // UNSUBSCRIBE / PUNSUBSCRIBE / SUNSUBSCRIBE [names...] (none = all of that kind): appends one
  // confirmation per name (or a single one with a nil name when there was nothing to drop) and
  // puts in *dropped the names that were subscribed, which the shards must be told about.
  void unsubscribe(PubSubKind kind, std::span<const std::string_view> names, std::string* reply,
                   std::vector<std::string>* dropped);

  // Redis' count in confirmations: channels + patterns, or shard channels.
  size_t count(PubSubKind kind) const;
  size_t total() const { return channels_.size() + patterns_.size() + shard_channels_.size(); }
  const std::set<std::string>& names(PubSubKind kind) const;
  void clear();

 private:
  std::set<std::string>& set(PubSubKind kind);
  std::set<std::string> channels_;
  std::set<std::string> patterns_;
  std::set<std::string> shard_channels_;
};

// The confirmation type names: "subscribe", "psubscribe", "ssubscribe" (and "unsubscribe" ...).
std::string_view subscribeVerb(PubSubKind kind);
std::string_view unsubscribeVerb(PubSubKind kind);

// PING in subscribed mode (RESP2): ["pong", message or ""].
std::string subscribedPong(std::span<const std::string_view> args);

}  // namespace sp::session
