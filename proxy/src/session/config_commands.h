// CONFIG GET and CONFIG SET: what the proxy answers itself, what it asks the shards, and what it
// refuses.
//
// CONFIG GET goes to every shard and is merged (MergeRule::kConfigGet, keyspace_fanout.h): each
// parameter once, the first shard's value when they differ (logged, rate-limited). The proxy's
// own parameters (bind, port, databases, maxclients, timeout, tcp-keepalive, proto-max-bulk-len,
// cluster-enabled, slowlog-*, and requirepass / masterauth / masteruser, answered "") come from
// the proxy and replace the shards' entries; a CONFIG GET that names only these never leaves the
// proxy.
//
// CONFIG SET (allow_config_set) applies timeout, tcp-keepalive, maxclients and slowlog-* to the
// proxy until the next reload, refuses what would cut the proxy off its shards (credentials,
// addresses, replication, the shards' files and client limits, cluster-*, maxmemory below what a
// shard uses), and sends the rest to every shard (SessionState::onFanout, keyspace_fanout.cc).
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <utility>

#include "resp/command_table.h"
#include "resp/errors.h"

namespace sp::net {
class Worker;
}

namespace sp::session {

class ClientSession;

class ConfigCommands {
 public:
  // CONFIG GET pattern [pattern ...]: the reply in *reply when the proxy answers alone, else
  // *reply stays empty and the answer comes through ClientSession::deferReply once the shards
  // have answered.
  static void get(ClientSession& session, const resp::CommandInfo& cmd,
                  std::span<const std::string_view> args, std::string* reply);

  // Where CONFIG SET `parameter` `value` goes: applied to the proxy (a valid value of one of its
  // own settable parameters), sent to the shards, or refused (*refusal: the reply, in
  // redis-server's "CONFIG SET failed (possibly related to argument ...)" form).
  enum class Target : uint8_t { kShards, kProxy, kRefused };
  static Target setTarget(const net::Worker& worker, std::string_view parameter,
                          std::string_view value, resp::err::ErrorReply* refusal);

  // Applies (parameter, value) pairs that setTarget sent to the proxy: a new configuration
  // published to every worker as a reload does, in force until the next reload. False with
  // *refusal, and nothing applied, when maxclients exceeds what the open-files limit allows.
  static bool applyToProxy(net::Worker& worker,
                           std::span<const std::pair<std::string_view, std::string_view>> settings,
                           resp::err::ErrorReply* refusal);
};

}  // namespace sp::session
