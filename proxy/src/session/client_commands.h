// Connection commands the proxy answers from its own state: AUTH and HELLO (SessionState
// routes them), and the local CLIENT INFO / LIST / KILL / NO-EVICT and CONFIG GET / RESETSTAT.
//
// HELLO 2 and HELLO 3 switch the connection's protocol (resp/protocol.h) and answer the server
// map as Redis does, in the new protocol; HELLO without a version keeps it. CLIENT LIST and CLIENT
// KILL see the clients of the worker thread serving the connection (all clients with
// workers: 1). CONFIG GET answers a small documented set (kConfigParams in the .cc) from the
// proxy's configuration; CONFIG SET is a fan-out command (allow_config_set).
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "resp/command_table.h"
#include "resp/protocol.h"

namespace sp::session {

class ClientSession;

class ClientCommands {
 public:
  // client|info, client|list, client|kill, client|no-evict, config|get, config|resetstat.
  // False when `cmd` is none of them.
  // *close_after: the client killed itself (CLIENT KILL).
  static bool run(ClientSession& session, const resp::CommandInfo& cmd,
                  std::span<const std::string_view> args, std::string* reply, bool* close_after);

  // One CLIENT LIST line (without the newline).
  static std::string describe(ClientSession& session);

  // HELLO's reply map: a map in RESP3, a flat array of 14 elements in RESP2.
  static std::string helloReply(uint64_t client_id, resp::Protocol protocol);

  // The proxy's own key for a CONFIG parameter that describes the proxy's clients rather than
  // the shards (timeout -> limits.timeout, tcp-keepalive, maxclients), "" for any other. CONFIG
  // GET answers these from the proxy's configuration, so CONFIG SET refuses them instead of
  // sending them to the shards.
  static std::string_view proxyConfigKey(std::string_view parameter);
};

}  // namespace sp::session
