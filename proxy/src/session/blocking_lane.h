// BlockingLane: the session's blocking commands (kCmdBlocking: BLPOP, BLMOVE, BZPOPMIN, BLMPOP,
// XREAD / XREADGROUP with BLOCK, ...). A blocking command would hold up every client behind it on
// a shared pipeline, so it goes on a DedicatedConn of its key's shard, which goes back to the
// pool once it has answered; while WATCH holds a connection to that shard, on that one (in order
// with WATCH). XREAD without BLOCK is an ordinary command.
#pragma once

#include <span>
#include <string_view>

#include "backend/dedicated_conn.h"
#include "resp/command_table.h"
#include "resp/request_parser.h"
#include "session/verdict.h"

namespace sp::session {

class SessionState;

class BlockingLane {
 public:
  explicit BlockingLane(SessionState& state) : state_(state) {}
  BlockingLane(const BlockingLane&) = delete;
  BlockingLane& operator=(const BlockingLane&) = delete;

  // True when `cmd` with `args` blocks (XREAD / XREADGROUP only with BLOCK before STREAMS).
  static bool blocks(const resp::CommandInfo& cmd, std::span<const std::string_view> args);

  // A blocking request outside a transaction (inside one, Redis does not block).
  Verdict onRequest(const resp::RequestFrame& frame, std::string_view raw,
                    const resp::CommandInfo& cmd);

  // The DedicatedOwner events of the lane's connection: true when `conn` is it.
  bool onIdle(backend::DedicatedConn& conn);
  bool onFailed(backend::DedicatedConn& conn);
  void discard(backend::DedicatedPool& pool);  // the client is gone, or RESET
  bool holdsConnection() const { return conn_ != nullptr; }

 private:
  SessionState& state_;
  backend::DedicatedConn* conn_ = nullptr;  // the blocking command's, while it waits
};

}  // namespace sp::session
