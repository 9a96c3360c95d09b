// DedicatedConn: a backend connection that works for one client session at a time — its
// transaction (WATCH, MULTI ... EXEC), its blocking command (BLPOP, XREAD BLOCK) or its
// subscriptions — so that none of these ever sits in the shared pipeline of a BackendConn, where
// a blocked reply would hold up every other client of the worker (and SUBSCRIBE would turn the
// connection into a push stream).
//
// Commands are written in order and answered in order (a FIFO of ops). An op is one command whose
// replies — one, or one per channel for (UN)SUBSCRIBE — complete consecutive fragments of an
// InFlightRequest through the reply handler (backend_op.h), or are dropped (the commands the proxy
// adds itself: AUTH, a MULTI sent late). In subscriber mode, message / pmessage / smessage pushes
// go to the owner instead. There is no health PING; while the front op is not a blocking one the
// connection fails when it stalls (stall_watch.h: no byte moved for backend.timeout_ms, or
// backend.slow_timeout_ms while a slow command is outstanding). On failure every op is answered
// "-ERR shard ... unavailable: why", in order, and then the owner is told; the connection is dead
// from then on and must be discarded.
//
// DedicatedPool (one per worker) hands them out and keeps a few idle ones per shard for reuse
// (after EXEC, after a blocking reply); subscriber connections are never reused.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "backend/backend_op.h"
#include "backend/shard_link.h"
#include "backend/stall_watch.h"
#include "net/timers.h"
#include "resp/errors.h"
#include "resp/protocol.h"
#include "route/topology.h"

namespace sp::net {
class Worker;
}

namespace sp::backend {

class DedicatedConn;
class DedicatedPool;

// The session side of a dedicated connection.
class DedicatedOwner {
 public:
  // A pub/sub message (subscriber mode), one complete RESP2 array or RESP3 push.
  virtual void onDedicatedPush(DedicatedConn& conn, std::string_view push) = 0;
  // The FIFO of ops has just become empty (after a reply was delivered).
  virtual void onDedicatedIdle(DedicatedConn& conn) = 0;
  // The connection failed; its ops have been answered with errors. Discard it.
  virtual void onDedicatedFailed(DedicatedConn& conn) = 0;

 protected:
  ~DedicatedOwner() = default;
};

class DedicatedConn final : private ShardLink::Role {
 public:
  enum class Mode : uint8_t { kCommands, kSubscriber };

  // Its life, one state, changed only by enter(), which checks the move against canMove:
  //
  //   kServing ──fail()──► kFailed ──close()──► kClosing    ops answered with the failure, the
  //      │                                         ▲        owner told, then the handles closed
  //      └──────────────── close() ────────────────┘        released, discarded, shut down
  //
  // kServing: commands are queued, written and answered (while it connects, they wait).
  // kFailed: for the moment between the failure and the close, during which the owner is told
  // (and may discard it, which closes it). kClosing: libuv closes the handles; the object frees
  // itself once they are closed. Only kServing takes commands. Whether it failed (and why) stays
  // in failure() through kClosing.
  enum class Life : uint8_t { kServing, kFailed, kClosing };
  static bool canMove(Life from, Life to);

  DedicatedConn(const DedicatedConn&) = delete;
  DedicatedConn& operator=(const DedicatedConn&) = delete;

  uint16_t shard() const { return shard_; }
  Mode mode() const { return mode_; }
  bool idle() const { return ops_.empty(); }
  bool failed() const { return !failure_.empty(); }
  Life life() const { return life_; }
  const route::ShardAddress& address() const { return address_; }
  const std::string& failure() const { return failure_; }  // why it failed
  resp::Protocol protocol() const { return protocol_; }
  // The request of the oldest op still waiting for a reply here (nullptr: none). A push read now
  // came before that reply, and goes before it to the client.
  InFlightRequest* oldestRequest() const;

  // Queues one complete command. Its `replies` replies complete fragments `fragment`,
  // `fragment + 1`, ... of `request` (for a request with MergeRule::kNone: one reply, fragment
  // 0); with request == nullptr they are dropped. `blocking`: no reply timeout while it waits.
  // Must not be called on a failed connection.
  void send(std::string_view bytes, InFlightRequest* request, uint32_t fragment, uint32_t replies,
            bool blocking);
  // The owner's client switched protocol (HELLO) while it holds this connection (WATCH): HELLO
  // goes out behind what is queued, its reply dropped, and the pool files it under the new one.
  void switchProtocol(resp::Protocol protocol);

 private:
  friend class DedicatedPool;

  struct Op {
    InFlightRequest* request = nullptr;
    uint32_t fragment = 0;
    uint32_t remaining = 1;  // replies still expected
    bool blocking = false;
    bool slow = false;   // one of backend.slow_commands
    bool auth = false;   // the AUTH the proxy sends first: an error reply fails the connection
    bool hello = false;  // HELLO 3 after it (RESP3 clients' connections): likewise
  };

  DedicatedConn(net::Worker& worker, DedicatedPool& pool, uint16_t shard,
                route::ShardAddress address, Mode mode, resp::Protocol protocol);
  ~DedicatedConn() = default;

  // The link's steps (shard_link.h).
  void onLinkHandshaking() override;
  void onLinkUp() override;
  void onLinkRead(size_t nread) override;
  void onLinkReply(std::string_view reply) override;
  void onLinkWritten() override;
  void onLinkBackedUp() override;
  void onLinkFlushWanted() override { flush(); }
  void onLinkFailed(std::string_view reason, ShardLink::Failure kind) override;
  void onLinkClosed() override;  // frees the object

  void start();
  void flush();
  void armTimer();
  void onTimer();  // timer_: the connect timed out, or a stall check
  uint64_t stallLimitMs() const;
  // Answers every op with the error, tells the owner (or the pool, when idle), stops the socket.
  void fail(std::string_view reason);
  void failOps(std::string_view reason);
  // Stops everything and frees the object once libuv has closed its handles. Ops still queued
  // are answered with `reason` first.
  void close(std::string_view reason);
  void enter(Life next);  // the one place life_ changes

  net::Worker& worker_;
  DedicatedPool& pool_;
  uint16_t shard_;
  route::ShardAddress address_;
  Mode mode_;
  resp::Protocol protocol_;
  DedicatedOwner* owner_ = nullptr;
  Life life_ = Life::kServing;
  std::string failure_;  // why it failed (never empty once it has)
  ShardLink link_;       // the socket, its buffers and TLS session, the read and write loops
  std::unique_ptr<net::Timer> timer_;  // connect timeout, then stall checks (net/timers.h)
  StallWatch stall_;
  std::deque<Op> ops_;
};

class DedicatedPool {
 public:
  static constexpr size_t kMaxIdlePerShard = 4;

  explicit DedicatedPool(net::Worker& worker);
  ~DedicatedPool();
  DedicatedPool(const DedicatedPool&) = delete;
  DedicatedPool& operator=(const DedicatedPool&) = delete;

  // A connection to `shard` for `owner`, speaking `protocol`: an idle one of the same address and
  // protocol when there is one, else a new one (commands queue while it connects). nullptr when
  // the shard is ejected (the shared connection fails fast) or the worker is shutting down:
  // answer with *error then.
  DedicatedConn* acquire(uint16_t shard, DedicatedConn::Mode mode, DedicatedOwner* owner,
                         resp::err::ErrorReply* error,
                         resp::Protocol protocol = resp::Protocol::kResp2);
  // Back from its owner: kept for reuse when idle, healthy and in command mode (up to
  // kMaxIdlePerShard per shard), closed otherwise.
  void release(DedicatedConn* conn);
  // Closed now, whatever its state (a client gone while blocked, subscriber connections).
  void discard(DedicatedConn* conn);
  // Worker exit: closes every idle connection; later acquires fail.
  void shutdown();

  size_t openCount() const { return open_; }
  size_t idleCount() const;

 private:
  friend class DedicatedConn;
  void forget(DedicatedConn* conn);  // drop it from the idle lists
  void closed() { --open_; }

  net::Worker& worker_;
  std::vector<std::vector<DedicatedConn*>> idle_;  // [shard]
  size_t open_ = 0;
  bool shut_down_ = false;
};

}  // namespace sp::backend
