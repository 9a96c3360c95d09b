// TransactionLane: MULTI / EXEC / DISCARD / WATCH / UNWATCH on a connection pinned to one shard.
//
// MULTI is answered +OK by the proxy, which then holds the transaction's commands (answering
// +QUEUED itself) until the first keyed command fixes the slot — or WATCH has fixed it already.
// Then the pinned DedicatedConn of that slot's shard gets MULTI, the held commands (their +QUEUED
// dropped), and from then on each command as it comes (its reply forwarded). Every key of the
// transaction, WATCH's included, must hash to that slot, as in Redis Cluster: a key of another
// slot gets -CROSSSLOT and the transaction is marked aborted, so EXEC answers -EXECABORT (and
// DISCARDs on the shard). Any other refusal while queuing aborts it the same way, as Redis does.
// EXEC, DISCARD and UNWATCH end the need for the connection; it goes back to the pool once it
// has answered them. While WATCH holds the connection, the client's other commands for its shard
// travel on it too, in order with WATCH.
//
// If the pinned connection fails, a transaction in progress answers EXEC with the failure, and a
// WATCH in force makes the next EXEC fail the same way: never an EXEC that runs as if the watched
// keys were unchanged.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "backend/dedicated_conn.h"
#include "resp/command_table.h"
#include "resp/request_parser.h"
#include "session/verdict.h"

namespace sp::session {

class SessionState;

// A transaction in progress (between MULTI and EXEC / DISCARD).
struct Transaction {
  bool active = false;           // MULTI was answered +OK: commands are being queued
  bool aborted = false;          // a command was refused while queuing: EXEC gets -EXECABORT
  bool multi_sent = false;       // MULTI went out on the pinned connection
  int32_t slot = -1;             // the slot every key must hash to (WATCH's, or the first key's)
  std::string held;              // commands queued before the shard was known (answered +QUEUED)
  uint32_t held_count = 0;       // commands in `held`
  uint32_t queued = 0;           // commands queued so far (CLIENT LIST multi=)
  resp::err::ErrorReply broken;  // the pinned connection failed: EXEC gets this error
  void reset() { *this = Transaction{}; }
};

class TransactionLane {
 public:
  explicit TransactionLane(SessionState& state) : state_(state) {}
  TransactionLane(const TransactionLane&) = delete;
  TransactionLane& operator=(const TransactionLane&) = delete;

  bool active() const { return tx_.active; }
  const Transaction& transaction() const { return tx_; }  // CLIENT LIST multi=
  bool watching() const { return watching_; }
  // The connection WATCH holds, when it is to `shard` (nullptr otherwise): a blocking command
  // for that shard waits on it, in order with WATCH.
  backend::DedicatedConn** watchedConnTo(uint16_t shard);

  // MULTI, EXEC, DISCARD, WATCH and UNWATCH outside a transaction.
  Verdict onRequest(const resp::RequestFrame& frame, std::string_view raw,
                    const resp::CommandInfo& cmd);
  // Every request while a transaction is active (`cmd` nullptr: unknown), RESET excepted.
  Verdict onQueued(const resp::RequestFrame& frame, std::string_view raw,
                   const resp::CommandInfo* cmd);
  // A plain request while WATCH holds a connection: on it when its key is of that shard, else
  // on the shared lane (kContinue).
  Verdict onWhileWatching(const resp::RequestFrame& frame, std::string_view raw,
                          const resp::CommandInfo& cmd);
  // A refusal inside a transaction: answered, and the transaction is aborted (EXECABORT).
  void abort(const resp::err::ErrorReply& error);

  void switchProtocol(resp::Protocol protocol);  // HELLO while WATCH holds a connection
  void reset();                                  // RESET (the connection is discarded first)

  // The DedicatedOwner events of the pinned connection: true when `conn` is it.
  bool onIdle(backend::DedicatedConn& conn);
  bool onFailed(backend::DedicatedConn& conn);
  void discard(backend::DedicatedPool& pool);  // the client is gone, or RESET
  bool holdsConnection() const { return pinned_ != nullptr; }

 private:
  Verdict onMulti();
  // abort_error: the transaction is aborted (tx_.aborted) and EXEC answers this instead.
  Verdict onExec(std::string_view raw, const resp::CommandInfo& cmd,
                 const resp::err::ErrorReply& abort_error = {});
  Verdict onDiscard(std::string_view raw, const resp::CommandInfo& cmd);
  Verdict onWatch(const resp::RequestFrame& frame, std::string_view raw,
                  const resp::CommandInfo& cmd);
  Verdict onUnwatch(std::string_view raw, const resp::CommandInfo& cmd);
  // Pins the transaction's connection (shard of tx_.slot, or shard 0) and sends MULTI and the
  // held commands on it. kDefer when the lane is busy; *error set when no connection was had.
  Verdict startMulti(resp::err::ErrorReply* error);
  // Sends `bytes` on the pinned connection as the reply of a new request for `cmd`.
  void sendPinned(std::string_view bytes, const resp::CommandInfo& cmd);
  void forgetWatch();  // after EXEC, DISCARD, UNWATCH, RESET
  bool needsPinned() const { return watching_ || tx_.multi_sent; }
  void releaseIfUnneeded();

  SessionState& state_;
  Transaction tx_;
  bool watching_ = false;
  int32_t watch_slot_ = -1;
  // The pinned connection failed while WATCH held keys: the shard may have lost or changed them
  // unseen, so the next EXEC answers this error instead of running (until UNWATCH, DISCARD,
  // EXEC or RESET drops the WATCH).
  resp::err::ErrorReply watch_lost_;
  backend::DedicatedConn* pinned_ = nullptr;  // WATCH / MULTI
};

}  // namespace sp::session
