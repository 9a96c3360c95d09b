// The checks ClientSession::dispatch makes before routing a request, for the requests that
// SessionState routes itself (queued in MULTI, blocking, subscribing, fanned out): the same
// refusals, word for word.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "config/config.h"
#include "resp/command_table.h"
#include "resp/errors.h"
#include "route/topology.h"

namespace sp::session {

// A command whose keys could not be found (resp::extractKeys false) may still be one that
// redis-server answers with an error of its own: a malformed numkeys (EVAL, FCALL, SINTERCARD,
// ZUNION, LMPOP ...) or an unbalanced STREAMS list (XREAD). Those commands validate what
// extractKeys reads before doing anything, so such a request runs nowhere and is sent to the
// first shard for redis-server's exact error (inside MULTI, it is queued and fails at EXEC, as
// there). True for these movable-key commands; the others get arityError.
inline bool shardJudgesMalformedKeys(const resp::CommandInfo& cmd) {
  return cmd.has(resp::kCmdMovableKeys);
}

// The refusal of keys in several units (Topology::crossUnitError: CROSSSLOT), except where
// redis-server rejects the request's syntax first. LMPOP/BLMPOP (ZMPOP/BZMPOP) must have LEFT or
// RIGHT (MIN or MAX) after their keys: `LMPOP 2 list LEFT` names the keys "list" and "LEFT" and no
// direction, a syntax error on redis-server, not a cross-slot request.
resp::err::ErrorReply crossSlotError(const resp::CommandInfo& cmd,
                                     std::span<const std::string_view> args,
                                     std::span<const uint32_t> keys,
                                     const route::Topology& topology);

// The refusal for an unknown command or subcommand (of any container: a subcommand the table
// does not have is unknown to redis-server too), a wrong arity, a partial key group of a split
// command or an unsupported command; empty when the request passes. The texts: resp/errors.h.
resp::err::ErrorReply requestError(const resp::CommandInfo* cmd,
                                   std::span<const std::string_view> args);

// A script or function called with no keys (EVAL body 0, EVALSHA sha 0, FCALL name 0 and their
// _RO forms) runs on a single shard and would read nil for, or write beside, a key that lives on
// another. Unless the configuration names a shard for them (keyless_scripts), those that may reach
// the keyspace are refused: an EVAL whose body mentions call (redis.call, redis.pcall) and every
// EVALSHA and FCALL, whose bodies the proxy does not see. Returns false for a command that is not
// such a call. Otherwise true, with *error set (a refusal) or *shard (where it runs).
bool keylessScript(const resp::CommandInfo& cmd, std::span<const std::string_view> args,
                   const config::Config& config, uint16_t* shard, resp::err::ErrorReply* error);

// The refusal of a command the proxy does not serve (kCmdUnsupported), with the reason where one
// helps the client: client-side caching (CLIENT TRACKING, CACHING) would wait for invalidation
// pushes that no shard connection of the client's could carry.
resp::err::ErrorReply unsupportedError(const resp::CommandInfo& cmd);

}  // namespace sp::session
