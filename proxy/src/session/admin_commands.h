// PROXY: the proxy's own admin command, over RESP (redis-cli -p 6380 PROXY SHARDS).
//
//   PROXY INFO [section ...]   the INFO text (every section of redis-server's, and shards)
//   PROXY SHARDS               every shard: address, state, connections, slots, counters
//   PROXY SLOTS                [first, last, [host, port, name]] per slot range, like CLUSTER SLOTS
//   PROXY CONFIG GET pattern.. the effective configuration as key/value pairs (glob patterns,
//                              dotted keys: limits.max_clients, shards[0].address, ...)
//   PROXY SLOWLOG GET [n] | LEN | RESET
//   PROXY RELOAD               re-read the config file and apply it (answered once applied)
//   PROXY HELP
//
// With client AUTH on (auth.password or auth.users), PROXY is for admin users: the session
// checks rights before a command gets here.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "config/config.h"
#include "resp/command_table.h"

namespace sp::session {

class ClientSession;

// `cmd` is one of the proxy|... subcommands (kCmdProxy), arity already checked. Writes the RESP
// reply to *reply, or leaves it empty after ClientSession::deferReply (RELOAD).
void runAdminCommand(ClientSession& session, const resp::CommandInfo& cmd,
                     std::span<const std::string_view> args, std::string* reply);

// SLOWLOG GET [count] | LEN | RESET | HELP, answered as redis-server does from the proxy's slow
// log (the requests slower than slowlog-log-slower-than from parse to reply). `args` starts with
// SLOWLOG; arity already checked.
void runSlowlog(ClientSession& session, const resp::CommandInfo& cmd,
                std::span<const std::string_view> args, std::string* reply);

// The effective configuration as (dotted key, value) pairs, in conf/proxy.yaml order; passwords
// are shown as "(set)" or "".
std::vector<std::pair<std::string, std::string>> configEntries(const config::Config& config);

// Redis-style glob (* ? [abc] [a-z] [^x] \x), case-insensitive, as CONFIG GET matches.
bool globMatch(std::string_view pattern, std::string_view text);

}  // namespace sp::session
