// Transactions: MULTI / EXEC / DISCARD / WATCH / UNWATCH on a connection pinned to one shard.
//
// MULTI is answered +OK by the proxy, which then holds the transaction's commands (answering
// +QUEUED itself) until the first keyed command fixes the slot — or WATCH has fixed it already.
// Then the pinned DedicatedConn of that slot's shard gets MULTI, the held commands (their +QUEUED
// dropped), and from then on each command as it comes (its reply forwarded). Every key of the
// transaction, WATCH's included, must hash to that slot, as in Redis Cluster: a key of another
// slot gets -CROSSSLOT and the transaction is marked aborted, so EXEC answers -EXECABORT (and
// DISCARDs on the shard). Any other refusal while queuing aborts it the same way, as Redis does.
// EXEC, DISCARD and UNWATCH end the need for the connection; it goes back to the pool once it
// has answered them.
#include "backend/worker_backends.h"
#include "core/assert.h"
#include "net/worker.h"
#include "resp/errors.h"
#include "route/key_slot.h"
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

void SessionState::abortTransaction(std::string_view error) {
  tx_.aborted = true;
  refuse(error);
}

void SessionState::forgetWatch() {
  watching_ = false;
  watch_slot_ = -1;
  watch_lost_.clear();
}

SessionState::Verdict SessionState::onMulti() {
  tx_.reset();
  tx_.active = true;
  if (watching_) {
    tx_.slot = watch_slot_;
  }

  reply("+OK\r\n");
  return Verdict::kHandled;
}

SessionState::Verdict SessionState::onTransactionCommand(const resp::RequestFrame& frame,
                                                         std::string_view raw,
                                                         const resp::CommandInfo* cmd) {
  std::span<const std::string_view> args(frame.args);
  if (cmd == nullptr) {
    abortTransaction(resp::err::unknownCommand(args));
    return Verdict::kHandled;
  }
  if (!resp::arityOk(*cmd, args.size())) {
    // redis-server checks the arity before anything else, and a malformed EXEC discards the
    // transaction with the reason.
    if (cmd->handler == resp::Handler::kExec) {
      tx_.aborted = true;
      return onExec(raw, *cmd, resp::err::wrongArity(cmd->name));
    }
    abortTransaction(resp::err::wrongArity(cmd->name));
    return Verdict::kHandled;
  }
  switch (cmd->handler) {
    case resp::Handler::kExec:
      return onExec(raw, *cmd);
    case resp::Handler::kDiscard:
      return onDiscard(raw, *cmd);
    case resp::Handler::kMulti:
      refuse(resp::err::kMultiNested);
      return Verdict::kHandled;
    case resp::Handler::kWatch:
      refuse(resp::err::kWatchInMulti);
      return Verdict::kHandled;
    case resp::Handler::kQuit:
      return Verdict::kContinue;
    case resp::Handler::kReset:
      return onReset(*cmd);
    default:
      break;
  }
  if (const std::string error = requestError(cmd, args); !error.empty()) {
    abortTransaction(error);
    return Verdict::kHandled;
  }
  if (cmd->has(resp::kCmdFanout)) {
    abortTransaction(resp::err::spansEveryShard(cmd->name));
    return Verdict::kHandled;
  }
  if ((cmd->has(resp::kCmdSession) && cmd->handler != resp::Handler::kUnwatch) ||
      (cmd->has(resp::kCmdLocal) && cmd->handler != resp::Handler::kPing &&
       cmd->handler != resp::Handler::kEcho)) {
    abortTransaction(resp::err::kNotInTransaction);
    return Verdict::kHandled;
  }
  thread_local std::vector<uint32_t> keys;  // scratch, reused
  keys.clear();
  const bool keys_found = resp::extractKeys(*cmd, args, &keys);
  if (!keys_found && !shardJudgesMalformedKeys(*cmd)) {
    abortTransaction(resp::err::wrongArity(cmd->name));
    return Verdict::kHandled;
  }
  if (!keys_found) {
    keys.clear();  // queued keyless: it fails at EXEC with redis-server's error
  } else if (keys.empty()) {
    // A keyless script inside MULTI runs on the transaction's shard: refused the same way.
    uint16_t shard = 0;
    std::string error;
    if (keylessScript(*cmd, args, worker().config(), &shard, &error) && !error.empty()) {
      abortTransaction(error);
      return Verdict::kHandled;
    }
  }
  const route::Topology& topology = worker().topology();
  int32_t slot = slotOfKeys(args, keys, topology);
  if (slot == -2 && crossSlotError(*cmd, args, keys, topology) != topology.crossUnitError()) {
    slot = -1;  // a syntax error redis-server reports at EXEC: queued keyless, as a malformed one
  }
  if (slot == -2 || (slot >= 0 && tx_.slot >= 0 && slot != tx_.slot)) {
    abortTransaction(topology.crossUnitError());
    return Verdict::kHandled;
  }
  if (!tx_.broken.empty()) {
    abortTransaction(tx_.broken);
    return Verdict::kHandled;
  }
  const std::string_view bytes = commandBytes(frame, raw);
  if (!tx_.multi_sent) {
    if (slot < 0 && tx_.slot < 0 && pinned_ == nullptr) {
      // No shard yet: hold it until one is known (or EXEC).
      tx_.held.append(bytes);
      ++tx_.held_count;
      ++tx_.queued;
      reply("+QUEUED\r\n");
      return Verdict::kHandled;
    }
    const int32_t saved = tx_.slot;
    if (tx_.slot < 0) {
      tx_.slot = slot;
    }
    std::string error;
    const Verdict v = startMulti(&error);
    if (v == Verdict::kDefer) {
      tx_.slot = saved;
      return v;
    }
    if (!error.empty()) {
      abortTransaction(error);
      return Verdict::kHandled;
    }
  }
  if (!mayTake(Lane::kDedicated, pinned_)) {
    return Verdict::kDefer;
  }
  PendingRequest* request = queueRequest(cmd);
  request->shard = pinned_->shard();
  request->outstanding = 1;
  pinned_->send(bytes, request, 0, 1, false);
  ++tx_.queued;
  return Verdict::kHandled;
}

SessionState::Verdict SessionState::startMulti(std::string* error) {
  // A pinned connection outlives the transaction that needed it only while WATCH holds it (and
  // then its shard is the transaction's): retire() drops it otherwise.
  SP_ASSERT(pinned_ == nullptr || watching_);
  const uint16_t shard = pinned_ != nullptr ? pinned_->shard()
                         : tx_.slot >= 0
                             ? worker().topology().shardOfUnit(static_cast<uint32_t>(tx_.slot))
                             : 0;
  if (!mayTake(Lane::kDedicated, pinned_)) {
    return Verdict::kDefer;
  }
  if (pinned_ == nullptr) {
    pinned_ = backend::dedicatedOf(worker()).acquire(shard, backend::DedicatedConn::Mode::kCommands,
                                                     this, error, session_.protocol());
    if (pinned_ == nullptr) {
      return Verdict::kHandled;
    }
    lane_conn_ = pinned_;
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

SessionState::Verdict SessionState::onExec(std::string_view raw, const resp::CommandInfo& cmd,
                                           std::string_view abort_error) {
  auto finish = [this] {
    tx_.reset();
    forgetWatch();
  };
  if (!tx_.broken.empty()) {
    const std::string error = tx_.broken;
    finish();
    refuse(error);
    releaseIfUnneeded();
    return Verdict::kHandled;
  }
  if (tx_.aborted || !watch_lost_.empty()) {
    if (pinned_ != nullptr && (tx_.multi_sent || watching_)) {
      if (!mayTake(Lane::kDedicated, pinned_)) {
        return Verdict::kDefer;
      }
      pinned_->send(tx_.multi_sent ? kDiscard : kUnwatch, nullptr, 0, 1, false);
    }
    const std::string error =
        !abort_error.empty()
            ? std::string(abort_error)
            : (tx_.aborted ? std::string(resp::err::kExecAbortPrevious) : watch_lost_);
    finish();
    refuse(error);
    releaseIfUnneeded();
    return Verdict::kHandled;
  }
  if (!tx_.multi_sent) {
    if (tx_.held_count == 0 && !watching_) {
      finish();
      reply("*0\r\n");
      return Verdict::kHandled;
    }
    std::string error;
    const Verdict v = startMulti(&error);
    if (v == Verdict::kDefer) {
      return v;
    }
    if (!error.empty()) {
      finish();
      refuse(error);
      return Verdict::kHandled;
    }
  }
  if (!mayTake(Lane::kDedicated, pinned_)) {
    return Verdict::kDefer;
  }
  PendingRequest* request = queueRequest(&cmd);
  request->shard = pinned_->shard();
  request->outstanding = 1;
  pinned_->send(raw.starts_with("*") ? raw : std::string_view("*1\r\n$4\r\nEXEC\r\n"), request, 0,
                1, false);
  finish();
  releaseIfUnneeded();  // back to the pool once EXEC is answered
  return Verdict::kHandled;
}

SessionState::Verdict SessionState::onDiscard(std::string_view raw, const resp::CommandInfo& cmd) {
  if (pinned_ != nullptr && (tx_.multi_sent || watching_) && tx_.broken.empty()) {
    if (!mayTake(Lane::kDedicated, pinned_)) {
      return Verdict::kDefer;
    }
    if (tx_.multi_sent) {
      PendingRequest* request = queueRequest(&cmd);
      request->shard = pinned_->shard();
      request->outstanding = 1;
      pinned_->send(raw.starts_with("*") ? raw : kDiscard, request, 0, 1, false);
    } else {
      pinned_->send(kUnwatch, nullptr, 0, 1, false);  // DISCARD unwatches too
      reply("+OK\r\n");
    }
  } else {
    reply("+OK\r\n");
  }
  tx_.reset();
  forgetWatch();
  releaseIfUnneeded();
  return Verdict::kHandled;
}

SessionState::Verdict SessionState::onWatch(const resp::RequestFrame& frame, std::string_view raw,
                                            const resp::CommandInfo& cmd) {
  std::span<const std::string_view> args(frame.args);
  thread_local std::vector<uint32_t> keys;  // scratch, reused
  keys.clear();
  if (!resp::extractKeys(cmd, args, &keys) || keys.empty()) {
    refuse(resp::err::wrongArity(cmd.name));
    return Verdict::kHandled;
  }
  const route::Topology& topology = worker().topology();
  const int32_t slot = slotOfKeys(args, keys, topology);
  if (slot < 0 || (watching_ && slot != watch_slot_)) {
    refuse(topology.crossUnitError());
    return Verdict::kHandled;
  }
  const uint16_t shard = topology.shardOfUnit(static_cast<uint32_t>(slot));
  const Verdict v = sendOnConn(&pinned_, shard, cmd, commandBytes(frame, raw), false);
  if (v == Verdict::kHandled && pinned_ != nullptr) {
    watching_ = true;
    watch_slot_ = slot;
  }
  return v;
}

SessionState::Verdict SessionState::onUnwatch(std::string_view raw, const resp::CommandInfo& cmd) {
  if (pinned_ == nullptr || !watching_) {
    watch_lost_.clear();
    reply("+OK\r\n");
    return Verdict::kHandled;
  }
  if (!mayTake(Lane::kDedicated, pinned_)) {
    return Verdict::kDefer;
  }
  PendingRequest* request = queueRequest(&cmd);
  request->shard = pinned_->shard();
  request->outstanding = 1;
  pinned_->send(raw.starts_with("*") ? raw : kUnwatch, request, 0, 1, false);
  forgetWatch();
  releaseIfUnneeded();
  return Verdict::kHandled;
}

}  // namespace sp::session
