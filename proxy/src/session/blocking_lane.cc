// BlockingLane: blocking commands on a dedicated connection (blocking_lane.h).
#include "session/blocking_lane.h"

#include <vector>

#include "core/ascii.h"
#include "net/worker.h"
#include "resp/errors.h"
#include "route/router.h"
#include "session/session_checks.h"
#include "session/session_state.h"

namespace sp::session {

bool BlockingLane::blocks(const resp::CommandInfo& cmd, std::span<const std::string_view> args) {
  if (cmd.handler != resp::Handler::kXread) {
    return true;
  }
  for (size_t i = 1; i < args.size(); ++i) {
    if (equalsIgnoreCase(args[i], "block")) {
      return true;
    }
    if (equalsIgnoreCase(args[i], "streams")) {
      return false;
    }
  }
  return false;
}

Verdict BlockingLane::onRequest(const resp::RequestFrame& frame, std::string_view raw,
                                const resp::CommandInfo& cmd) {
  std::span<const std::string_view> args(frame.args);
  if (const resp::err::ErrorReply error = requestError(&cmd, args); !error.empty()) {
    state_.refuse(error);
    return Verdict::kHandled;
  }
  thread_local std::vector<uint32_t> keys;  // scratch, reused
  keys.clear();
  if (!resp::extractKeys(cmd, args, &keys)) {
    if (shardJudgesMalformedKeys(cmd)) {
      // Answered at once with redis-server's error; it never blocks (session_checks.h).
      return state_.mayTake(SessionState::Lane::kShared, nullptr) ? Verdict::kContinue
                                                                  : Verdict::kDefer;
    }
    state_.refuse(resp::err::wrongArity(cmd.name));
    return Verdict::kHandled;
  }
  thread_local route::RoutePlan plan;  // scratch, reused
  route::planRoute(cmd, args, keys, state_.worker().topology(), &plan);
  if (plan.kind == route::RouteKind::kCrossSlot) {
    state_.refuse(crossSlotError(cmd, args, keys, state_.worker().topology()));
    return Verdict::kHandled;
  }
  const std::string_view bytes = state_.commandBytes(frame, raw);
  if (backend::DedicatedConn** watched = state_.watchedConnTo(plan.shard)) {
    return state_.sendOnConn(watched, plan.shard, cmd, bytes, true);
  }
  return state_.sendOnConn(&conn_, plan.shard, cmd, bytes, true);
}

bool BlockingLane::onIdle(backend::DedicatedConn& conn) {
  if (&conn != conn_) {
    return false;
  }
  conn_ = nullptr;
  state_.releaseNow(&conn);
  return true;
}

bool BlockingLane::onFailed(backend::DedicatedConn& conn) {
  if (&conn != conn_) {
    return false;
  }
  conn_ = nullptr;
  return true;
}

void BlockingLane::discard(backend::DedicatedPool& pool) {
  if (conn_ != nullptr) {
    pool.discard(conn_);
    conn_ = nullptr;
  }
}

}  // namespace sp::session
