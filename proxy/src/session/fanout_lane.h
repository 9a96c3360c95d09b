// FanoutLane: the session's whole-keyspace requests (kCmdFanout: DBSIZE, KEYS, SCAN, FLUSHALL,
// SCRIPT LOAD, PUBSUB NUMSUB, LATENCY LATEST, ...), sent to every shard (or the one a SCAN cursor
// names, or the first) on the client's shared connections and merged by the command's MergeRule
// (keyspace_fanout.h has the rules and the SCAN cursor). CONFIG SET applies the proxy's own
// parameters and sends the rest to every shard; CONFIG RESETSTAT resets the proxy's counters too.
// SCRIPT KILL and FUNCTION KILL go on dedicated connections of their own, since the shared
// pipelines of the shard running the script wait behind it.
#pragma once

#include <span>
#include <string_view>

#include "resp/command_table.h"
#include "resp/request_parser.h"
#include "session/verdict.h"

namespace sp::session {

class SessionState;

class FanoutLane {
 public:
  explicit FanoutLane(SessionState& state) : state_(state) {}
  FanoutLane(const FanoutLane&) = delete;
  FanoutLane& operator=(const FanoutLane&) = delete;

  // A kCmdFanout request outside a transaction (a transaction refuses them).
  Verdict onRequest(const resp::RequestFrame& frame, std::string_view raw,
                    const resp::CommandInfo& cmd);

 private:
  Verdict onConfigSet(std::span<const std::string_view> args, const resp::CommandInfo& cmd);
  Verdict onKill(std::string_view bytes, const resp::CommandInfo& cmd);

  SessionState& state_;
};

}  // namespace sp::session
