// TransactionLane: MULTI / EXEC / DISCARD / WATCH / UNWATCH on a pinned connection
// (transaction_lane.h).
#include "session/transaction_lane.h"

#include <span>
#include <vector>

#include "backend/worker_backends.h"
#include "core/assert.h"
#include "net/worker.h"
#include "resp/errors.h"
#include "route/router.h"
#include "session/client_session.h"
#include "session/session_checks.h"
#include "session/session_state.h"

namespace sp::session {
namespace {

constexpr std::string_view kMulti = "*1\r\n$5\r\nMULTI\r\n";
constexpr std::string_view kDiscard = "*1\r\n$7\r\nDISCARD\r\n";
constexpr std::string_view kUnwatch = "*1\r\n$7\r\nUNWATCH\r\n";

// The one placement unit (the slot, or the shard where there are no slots) of the request's keys:
// -1 without keys, -2 when they span units.
int32_t slotOfKeys(std::span<const std::string_view> args, std::span<const uint32_t> keys,
                   const route::Topology& topology) {
  int32_t slot = -1;
  for (uint32_t k : keys) {
    const auto s = static_cast<int32_t>(topology.unitOfKey(args[k]));
    if (slot == -1) {
      slot = s;
    } else if (s != slot) {
      return -2;
    }
  }
  return slot;
}

}  // namespace

void TransactionLane::abort(const resp::err::ErrorReply& error) {
  tx_.aborted = true;
  state_.refuse(error);
}

void TransactionLane::forgetWatch() {
  watching_ = false;
  watch_slot_ = -1;
  watch_lost_ = {};
}

Verdict TransactionLane::onMulti() {
  tx_.reset();
  tx_.active = true;
  if (watching_) {
    tx_.slot = watch_slot_;
  }

  state_.reply("+OK\r\n");
  return Verdict::kHandled;
}

Verdict TransactionLane::onQueued(const resp::RequestFrame& frame, std::string_view raw,
                                  const resp::CommandInfo* cmd) {
  std::span<const std::string_view> args(frame.args);
  if (cmd == nullptr) {
    abort(resp::err::unknownCommand(args));
    return Verdict::kHandled;
  }
  if (!resp::arityOk(*cmd, args.size())) {
    // redis-server checks the arity before anything else, and a malformed EXEC discards the
    // transaction with the reason.
    if (cmd->handler == resp::Handler::kExec) {
      tx_.aborted = true;
      return onExec(raw, *cmd, resp::err::wrongArity(cmd->name));
    }
    abort(resp::err::wrongArity(cmd->name));
    return Verdict::kHandled;
  }
  switch (cmd->handler) {
    case resp::Handler::kExec:
      return onExec(raw, *cmd);
    case resp::Handler::kDiscard:
      return onDiscard(raw, *cmd);
    case resp::Handler::kMulti:
      state_.refuse(resp::err::kMultiNested);
      return Verdict::kHandled;
    case resp::Handler::kWatch:
      state_.refuse(resp::err::kWatchInMulti);
      return Verdict::kHandled;
    case resp::Handler::kQuit:
      return Verdict::kContinue;
    default:
      break;
  }
  if (const resp::err::ErrorReply error = requestError(cmd, args); !error.empty()) {
    abort(error);
    return Verdict::kHandled;
  }
  if (cmd->has(resp::kCmdFanout)) {
    abort(resp::err::spansEveryShard(cmd->name));
    return Verdict::kHandled;
  }
  if ((cmd->has(resp::kCmdSession) && cmd->handler != resp::Handler::kUnwatch) ||
      (cmd->has(resp::kCmdLocal) && cmd->handler != resp::Handler::kPing &&
       cmd->handler != resp::Handler::kEcho)) {
    abort(resp::err::kNotInTransaction);
    return Verdict::kHandled;
  }
  thread_local std::vector<uint32_t> keys;  // scratch, reused
  keys.clear();
  const bool keys_found = resp::extractKeys(*cmd, args, &keys);
  if (!keys_found && !shardJudgesMalformedKeys(*cmd)) {
    abort(resp::err::wrongArity(cmd->name));
    return Verdict::kHandled;
  }
  if (!keys_found) {
    keys.clear();  // queued keyless: it fails at EXEC with redis-server's error
  } else if (keys.empty()) {
    // A keyless script inside MULTI runs on the transaction's shard: refused the same way.
    uint16_t shard = 0;
    resp::err::ErrorReply error;
    if (keylessScript(*cmd, args, state_.worker().config(), &shard, &error) && !error.empty()) {
      abort(error);
      return Verdict::kHandled;
    }
  }
  const route::Topology& topology = state_.worker().topology();
  int32_t slot = slotOfKeys(args, keys, topology);
  if (slot == -2 &&
      crossSlotError(*cmd, args, keys, topology).kind() != resp::err::ProxyError::kCrossSlot) {
    slot = -1;  // a syntax error redis-server reports at EXEC: queued keyless, as a malformed one
  }
  if (slot == -2 || (slot >= 0 && tx_.slot >= 0 && slot != tx_.slot)) {
    abort(topology.crossUnitError());
    return Verdict::kHandled;
  }
  if (!tx_.broken.empty()) {
    abort(tx_.broken);
    return Verdict::kHandled;
  }
  const std::string_view bytes = state_.commandBytes(frame, raw);
  if (!tx_.multi_sent) {
    if (slot < 0 && tx_.slot < 0 && pinned_ == nullptr) {
      // No shard yet: hold it until one is known (or EXEC).
      tx_.held.append(bytes);
      ++tx_.held_count;
      ++tx_.queued;
      state_.reply("+QUEUED\r\n");
      return Verdict::kHandled;
    }
    const int32_t saved = tx_.slot;
    if (tx_.slot < 0) {
      tx_.slot = slot;
    }
    resp::err::ErrorReply error;
    const Verdict v = startMulti(&error);
    if (v == Verdict::kDefer) {
      tx_.slot = saved;
      return v;
    }
    if (!error.empty()) {
      abort(error);
      return Verdict::kHandled;
    }
  }
  if (!state_.mayTake(SessionState::Lane::kDedicated, pinned_)) {
    return Verdict::kDefer;
  }
  sendPinned(bytes, *cmd);
  ++tx_.queued;
  return Verdict::kHandled;
}

Verdict TransactionLane::startMulti(resp::err::ErrorReply* error) {
  // A pinned connection outlives the transaction that needed it only while WATCH holds it (and
  // then its shard is the transaction's): retire() drops it otherwise.
  SP_ASSERT(pinned_ == nullptr || watching_);
  const uint16_t shard =
      pinned_ != nullptr ? pinned_->shard()
      : tx_.slot >= 0    ? state_.worker().topology().shardOfUnit(static_cast<uint32_t>(tx_.slot))
                         : 0;
  if (!state_.mayTake(SessionState::Lane::kDedicated, pinned_)) {
    return Verdict::kDefer;
  }
  if (pinned_ == nullptr) {
    pinned_ = state_.acquireDedicated(shard, error);
    if (pinned_ == nullptr) {
      return Verdict::kHandled;
    }
  }
  pinned_->send(kMulti, nullptr, 0, 1, false);
  if (tx_.held_count > 0) {
    pinned_->send(tx_.held, nullptr, 0, tx_.held_count, false);
  }
  tx_.held.clear();
  tx_.held_count = 0;
  tx_.multi_sent = true;
  return Verdict::kHandled;
}

Verdict TransactionLane::onExec(std::string_view raw, const resp::CommandInfo& cmd,
                                const resp::err::ErrorReply& abort_error) {
  auto finish = [this] {
    tx_.reset();
    forgetWatch();
  };
  if (!tx_.broken.empty()) {
    const resp::err::ErrorReply error = tx_.broken;
    finish();
    state_.refuse(error);
    releaseIfUnneeded();
    return Verdict::kHandled;
  }
  if (tx_.aborted || !watch_lost_.empty()) {
    if (pinned_ != nullptr && (tx_.multi_sent || watching_)) {
      if (!state_.mayTake(SessionState::Lane::kDedicated, pinned_)) {
        return Verdict::kDefer;
      }
      pinned_->send(tx_.multi_sent ? kDiscard : kUnwatch, nullptr, 0, 1, false);
    }
    const resp::err::ErrorReply error = !abort_error.empty() ? abort_error
                                        : tx_.aborted
                                            ? resp::err::ErrorReply(resp::err::kExecAbortPrevious)
                                            : watch_lost_;
    finish();
    state_.refuse(error);
    releaseIfUnneeded();
    return Verdict::kHandled;
  }
  if (!tx_.multi_sent) {
    if (tx_.held_count == 0 && !watching_) {
      finish();
      state_.reply("*0\r\n");
      return Verdict::kHandled;
    }
    resp::err::ErrorReply error;
    const Verdict v = startMulti(&error);
    if (v == Verdict::kDefer) {
      return v;
    }
    if (!error.empty()) {
      finish();
      state_.refuse(error);
      return Verdict::kHandled;
    }
  }
  if (!state_.mayTake(SessionState::Lane::kDedicated, pinned_)) {
    return Verdict::kDefer;
  }
  sendPinned(raw.starts_with("*") ? raw : std::string_view("*1\r\n$4\r\nEXEC\r\n"), cmd);
  finish();
  releaseIfUnneeded();  // back to the pool once EXEC is answered
  return Verdict::kHandled;
}

Verdict TransactionLane::onDiscard(std::string_view raw, const resp::CommandInfo& cmd) {
  if (pinned_ != nullptr && (tx_.multi_sent || watching_) && tx_.broken.empty()) {
    if (!state_.mayTake(SessionState::Lane::kDedicated, pinned_)) {
      return Verdict::kDefer;
    }
    if (tx_.multi_sent) {
      sendPinned(raw.starts_with("*") ? raw : kDiscard, cmd);
    } else {
      pinned_->send(kUnwatch, nullptr, 0, 1, false);  // DISCARD unwatches too
      state_.reply("+OK\r\n");
    }
  } else {
    state_.reply("+OK\r\n");
  }
  tx_.reset();
  forgetWatch();
  releaseIfUnneeded();
  return Verdict::kHandled;
}

Verdict TransactionLane::onWatch(const resp::RequestFrame& frame, std::string_view raw,
                                 const resp::CommandInfo& cmd) {
  std::span<const std::string_view> args(frame.args);
  thread_local std::vector<uint32_t> keys;  // scratch, reused
  keys.clear();
  if (!resp::extractKeys(cmd, args, &keys) || keys.empty()) {
    state_.refuse(resp::err::wrongArity(cmd.name));
    return Verdict::kHandled;
  }
  const route::Topology& topology = state_.worker().topology();
  const int32_t slot = slotOfKeys(args, keys, topology);
  if (slot < 0 || (watching_ && slot != watch_slot_)) {
    state_.refuse(topology.crossUnitError());
    return Verdict::kHandled;
  }
  const uint16_t shard = topology.shardOfUnit(static_cast<uint32_t>(slot));
  const Verdict v = state_.sendOnConn(&pinned_, shard, cmd, state_.commandBytes(frame, raw), false);
  if (v == Verdict::kHandled && pinned_ != nullptr) {
    watching_ = true;
    watch_slot_ = slot;
  }
  return v;
}

Verdict TransactionLane::onUnwatch(std::string_view raw, const resp::CommandInfo& cmd) {
  if (pinned_ == nullptr || !watching_) {
    watch_lost_ = {};
    state_.reply("+OK\r\n");
    return Verdict::kHandled;
  }
  if (!state_.mayTake(SessionState::Lane::kDedicated, pinned_)) {
    return Verdict::kDefer;
  }
  sendPinned(raw.starts_with("*") ? raw : kUnwatch, cmd);
  forgetWatch();
  releaseIfUnneeded();
  return Verdict::kHandled;
}

void TransactionLane::sendPinned(std::string_view bytes, const resp::CommandInfo& cmd) {
  PendingRequest* request = state_.queueRequest(&cmd);
  request->shard = pinned_->shard();
  request->outstanding = 1;
  pinned_->send(bytes, request, 0, 1, false);
}

backend::DedicatedConn** TransactionLane::watchedConnTo(uint16_t shard) {
  return pinned_ != nullptr && watching_ && pinned_->shard() == shard ? &pinned_ : nullptr;
}

Verdict TransactionLane::onRequest(const resp::RequestFrame& frame, std::string_view raw,
                                   const resp::CommandInfo& cmd) {
  std::span<const std::string_view> args(frame.args);
  if (cmd.handler == resp::Handler::kExec && !resp::arityOk(cmd, args.size())) {
    // As redis-server: a malformed EXEC discards the transaction state, WATCH included.
    tx_.aborted = true;
    return onExec(raw, cmd, resp::err::wrongArity(cmd.name));
  }
  if (const resp::err::ErrorReply error = requestError(&cmd, args); !error.empty()) {
    state_.refuse(error);
    return Verdict::kHandled;
  }
  switch (cmd.handler) {
    case resp::Handler::kMulti:
      return onMulti();
    case resp::Handler::kExec:
      state_.refuse(resp::err::kExecWithoutMulti);
      return Verdict::kHandled;
    case resp::Handler::kDiscard:
      state_.refuse(resp::err::kDiscardWithoutMulti);
      return Verdict::kHandled;
    case resp::Handler::kWatch:
      return onWatch(frame, raw, cmd);
    default:
      return onUnwatch(raw, cmd);
  }
}

Verdict TransactionLane::onWhileWatching(const resp::RequestFrame& frame, std::string_view raw,
                                         const resp::CommandInfo& cmd) {
  std::span<const std::string_view> args(frame.args);
  thread_local std::vector<uint32_t> keys;  // scratch, reused
  keys.clear();
  if (requestError(&cmd, args).empty() && resp::extractKeys(cmd, args, &keys)) {
    thread_local route::RoutePlan plan;  // scratch, reused
    route::planRoute(cmd, args, keys, state_.worker().topology(), &plan);
    if (plan.kind == route::RouteKind::kSingle && plan.shard == pinned_->shard()) {
      return state_.sendOnConn(&pinned_, plan.shard, cmd, state_.commandBytes(frame, raw), false);
    }
  }
  return state_.mayTake(SessionState::Lane::kShared, nullptr) ? Verdict::kContinue
                                                              : Verdict::kDefer;
}

void TransactionLane::switchProtocol(resp::Protocol protocol) {
  if (pinned_ != nullptr) {
    pinned_->switchProtocol(protocol);
  }
}

void TransactionLane::reset() {
  tx_.reset();
  forgetWatch();
}

void TransactionLane::releaseIfUnneeded() {
  if (pinned_ != nullptr && !needsPinned()) {
    state_.retire(&pinned_);
  }
}

bool TransactionLane::onIdle(backend::DedicatedConn& conn) {
  if (&conn != pinned_) {
    return false;
  }
  releaseIfUnneeded();
  return true;
}

bool TransactionLane::onFailed(backend::DedicatedConn& conn) {
  if (&conn != pinned_) {
    return false;
  }
  pinned_ = nullptr;
  const resp::err::ErrorReply error =
      resp::err::execAbortShardUnavailable(conn.address().label(), conn.failure());
  if (watching_) {
    watch_lost_ = error;  // never an EXEC that runs as if the watched keys were unchanged
  }
  watching_ = false;
  watch_slot_ = -1;
  if (tx_.active) {
    tx_.broken = error;
    tx_.multi_sent = false;
  }
  return true;
}

void TransactionLane::discard(backend::DedicatedPool& pool) {
  if (pinned_ != nullptr) {
    pool.discard(pinned_);
    pinned_ = nullptr;
  }
}

}  // namespace sp::session
