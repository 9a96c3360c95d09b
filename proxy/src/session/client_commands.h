// Connection commands the proxy answers from its own state: AUTH and HELLO (SessionState
// routes them), CLIENT INFO / LIST / KILL / NO-EVICT, and CONFIG GET / HELP.
//
// HELLO 2 and HELLO 3 switch the connection's protocol (resp/protocol.h) and answer the server
// map as Redis does, in the new protocol; HELLO without a version keeps it. CLIENT LIST and CLIENT
// KILL see every client of the proxy: each worker is asked on its own thread (Worker::post) and
// the reply, deferred, completes on the caller's worker once all have answered.
//
// CONFIG GET and CONFIG SET: config_commands.h.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "resp/command_table.h"
#include "resp/protocol.h"

namespace sp::session {

class ClientSession;

// The client's address as CLIENT LIST shows it (addr=): ip:port, or for a Unix socket client the
// listening socket's path (its own address has none), as redis-server shows it.
std::string peerAddress(ClientSession& session);

class ClientCommands {
 public:
  // client|info, client|list, client|kill, client|no-evict, config|get, config|help.
  // False when `cmd` is none of them. *reply stays empty when the answer comes later through
  // ClientSession::deferReply (CONFIG GET through the shards, CLIENT LIST / KILL with several
  // workers). *close_after: the client killed itself (CLIENT KILL).
  static bool run(ClientSession& session, const resp::CommandInfo& cmd,
                  std::span<const std::string_view> args, std::string* reply, bool* close_after);

  // One CLIENT LIST line (without the newline).
  static std::string describe(ClientSession& session);

  // HELLO's reply map: a map in RESP3, a flat array of 14 elements in RESP2. `version`: the
  // shards' (KeyspaceCache::serverVersion), or "" for the command table's.
  static std::string helloReply(uint64_t client_id, resp::Protocol protocol,
                                std::string_view version);
};

}  // namespace sp::session
