// BackendConn: one long-lived, pipelined connection from a worker to a Redis server (a shard's
// primary or one of its replicas).
//
// Requests of many clients are appended to its link's output buffer (ShardLink, shard_link.h:
// the socket, TLS and read and write loops it shares with DedicatedConn) and recorded, in send
// order, in a FIFO of BackendOps. Each reply (framed by ReplyScanner, never parsed into values)
// completes the front op, and goes to its request through the reply handler (backend_op.h). When
// the connection fails, every op in the FIFO is answered with
// "-ERR shard <name> (<addr>) unavailable: <reason>" in order.
//
// Health: a PING every backend.ping_interval_ms shares the pipeline. A connection whose requests
// see no byte move for backend.timeout_ms (backend.slow_timeout_ms while a slow command is out)
// is stalled (stall_watch.h): the requests already sent fail and the connection is recycled, so a
// late reply can never reach the wrong request; requests not yet written wait for the new
// connection. A PING answered -BUSY or -LOADING means alive but busy. Connect failures, losses,
// stalls and PING errors count as failures; any good reply resets the count. After
// backend.failure_limit consecutive failures the connection is ejected: requests fail fast for
// backend.retry_timeout_ms (doubling while probes fail, up to retry_timeout_max_ms), then a probe
// reconnects and PINGs, and the first good reply re-admits it.
//
// Its standing (Standing below), one state, changed only by enter(), which checks the move and
// keeps the ejected gauge; the socket's own state (closed, connecting, up) runs beside it:
//
//            failures reach backend.failure_limit            retry timer fires
//   kServing ------------------------------------> kEjected ------------------> kProbing
//      ^  |                                          ^                            |   |
//      |  |                                          +---- the probe failed ------+   |
//      |  +-- retire() --> kRetiring --(FIFO empty, or a failure)--> kShutDown         |
//      +------------------------ the probe's PING answered --------------------------+
//
// Every standing but kShutDown may also be retired (replaced on reload) or shut down (worker
// exit); kShutDown is final. Only kServing takes requests; kEjected and kProbing fail them fast.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "backend/backend_op.h"
#include "backend/shard_link.h"
#include "backend/stall_watch.h"
#include "core/intrusive_queue.h"
#include "net/flush_batch.h"
#include "net/timers.h"
#include "net/worker_stats.h"
#include "resp/protocol.h"
#include "resp/reply_reader.h"
#include "route/topology.h"

namespace sp::net {
class Worker;
}

namespace sp::backend {

// AUTH credentials sent first on every (re)connect; empty password = no AUTH.
struct Credentials {
  std::string username;
  std::string password;
};

// A shard connection's standing; see the diagram above.
enum class Standing : uint8_t {
  kServing,   // takes requests; the socket reconnects after a failure (with backoff)
  kEjected,   // failing fast until the retry timer
  kProbing,   // still failing fast; a probe connection is up or coming up, its PING in flight
  kRetiring,  // replaced: takes nothing new, finishes what was sent, then shuts down
  kShutDown,  // closed for good
};
const char* standingName(Standing standing);
// Whether a connection may go from `from` to `to` (never to itself).
bool canMove(Standing from, Standing to);
inline bool failsFast(Standing s) { return s == Standing::kEjected || s == Standing::kProbing; }

class BackendConn final : public net::Flushable, private ShardLink::Role {
 public:
  // `protocol` kResp3: HELLO 3 follows AUTH on every (re)connect, for RESP3 clients' requests.
  BackendConn(net::Worker& worker, uint16_t shard, route::ShardAddress address,
              Credentials credentials, bool replica,
              resp::Protocol protocol = resp::Protocol::kResp2);
  ~BackendConn();
  BackendConn(const BackendConn&) = delete;
  BackendConn& operator=(const BackendConn&) = delete;

  void start();     // first connect
  void shutdown();  // close for good (worker exit); in-flight requests get an error
  // Replaced by a connection to another address: takes no new request, lets the requests already
  // sent finish, then shuts down.
  void retire();
  // Shut down and every libuv handle closed: the object may be destroyed.
  bool fullyClosed() const { return standing_ == Standing::kShutDown && !link_.closing(); }

  // True when a request sent now is queued (connected, connecting or reconnecting); false while
  // the connection is ejected, retired or shut down, when requests must fail fast.
  bool accepting() const { return standing_ == Standing::kServing; }
  Standing standing() const { return standing_; }

  // backend.read_from: a replica worth sending a read to now. Connected and accepting, and not
  // sitting on outstanding requests (a health PING counts) with no byte moved for
  // kSlowForReadsMs: a stalled, wedged or busy replica is passed over at once, long before the
  // stall limit recycles it, and reads go to the primary (or the next replica) meanwhile.
  static constexpr uint64_t kSlowForReadsMs = 100;
  bool servingReads(uint64_t now_ms) const {
    return accepting() && link_.up() && (fifo_.empty() || stall_.idleMs(now_ms) < kSlowForReadsMs);
  }

  // Queues `bytes` (one complete command) for the server; `request` gets the reply (fragment
  // `fragment` for split requests). Requires accepting().
  void send(std::string_view bytes, InFlightRequest* request, uint32_t fragment);

  // Cluster mode: ASKING ahead of the next request (after an -ASK redirect). Requires accepting().
  void sendAsking();

  void flush() override;  // the worker's check phase (net::FlushBatch), when dirty
  void ping();            // health check, from the worker's ping timer
  // Gives back the memory of buffers that grew past kBufferKeepBytes for a large value and hold
  // little now; returns the bytes given back. From the worker's periodic trim, never per request.
  size_t trimBuffers();

  net::BackendState state() const;
  bool replica() const { return replica_; }
  const route::ShardAddress& address() const { return address_; }
  uint16_t shard() const { return shard_; }
  // The error line for requests that cannot be served: "-ERR shard <label> unavailable: <why>".
  std::string unavailableError(std::string_view reason) const;
  // The error line for a request refused because the connection is ejected.
  std::string ejectedError() const;

 private:
  static constexpr size_t kMinReadSpace = 64 * 1024;

  // The link's steps (shard_link.h).
  void onLinkHandshaking() override;
  void onLinkUp() override;  // AUTH, HELLO, READONLY ahead of what was queued; stall clock
  void onLinkRead(size_t nread) override;
  void onLinkReply(std::string_view reply) override;
  void onLinkWritten() override;
  void onLinkBackedUp() override;
  void onLinkFlushWanted() override;
  void onLinkFailed(std::string_view reason, ShardLink::Failure kind) override;
  void onLinkClosed() override {}

  // The one place the standing changes: checks the move (canMove) and keeps the ejection counter
  // and the ejected gauge.
  void enter(Standing next);
  void connect();
  void queue(std::string_view bytes, InFlightRequest* request, uint32_t fragment, OpKind kind,
             bool slow);
  // Puts one of the proxy's own commands ahead of everything queued (AUTH, READONLY).
  void prepend(std::string_view bytes, OpKind kind);
  // A failure: close the socket, answer every op, count it, then reconnect or eject. With
  // keep_unsent (a stall), the requests not yet written stay queued for the next connection.
  void fail(std::string_view reason, bool keep_unsent = false);
  void failAllOps(std::string_view reason);
  void failSentOps(std::string_view reason);  // all but the last unsent_ops_
  void failOp(BackendOp* op, const std::string& error);
  void closeSocket(bool keep_unsent);
  void complete(std::string_view reply);
  // A request's reply: in cluster mode a -MOVED/-ASK is followed (Worker::redirect) and a
  // -TRYAGAIN retried (Worker::retryLater); anything else, or a redirect or retry past its
  // bound, goes to the client.
  void deliver(InFlightRequest* request, uint32_t fragment, std::string_view reply);
  void healthy();  // a good reply arrived
  void onTimer();  // timer_: the connect timed out, or the reconnect or ejection delay is over
  void onRequestTimer();  // request_timer_: a stall check
  // The stall timer (stall_watch.h) is armed once when requests become outstanding and, when it
  // fires, re-arms itself for the time left, so a busy connection does not touch the timer heap
  // on every read.
  void startStallClock();
  void armRequestTimer();
  uint64_t stallLimitMs() const;

  net::Worker& worker_;
  net::ShardStats& stats_;
  uint16_t shard_;
  route::ShardAddress address_;
  Credentials credentials_;
  resp::Protocol protocol_;
  bool replica_;
  Standing standing_ = Standing::kServing;
  bool ping_outstanding_ = false;
  bool ever_up_ = false;
  uint32_t failures_ = 0;      // consecutive failures
  uint32_t reconnect_ms_ = 0;  // current reconnect delay (before ejection)
  uint32_t eject_ms_ = 0;      // current ejection length
  std::string last_failure_;

  ShardLink link_;  // the socket, its buffers and TLS session, the read and write loops
  // From start() to shutdown() (net/timers.h: the worker's, or a test's).
  std::unique_ptr<net::Timer> timer_;          // connect timeout; reconnect/ejection delay
  std::unique_ptr<net::Timer> request_timer_;  // stall check while the FIFO is not empty
  bool request_timer_armed_ = false;
  bool timeout_confirming_ = false;  // expired once; confirmed after the next poll
  StallWatch stall_;
  uint32_t slow_ops_ = 0;    // ops of backend.slow_commands in the FIFO
  uint32_t unsent_ops_ = 0;  // the FIFO's last ops, whose bytes are still in the link's out()

  uint64_t read_ns_ = 0;  // when the current read returned (metrics builds), for every reply in it
  IntrusiveQueue<BackendOp, &BackendOp::next> fifo_;
};

}  // namespace sp::backend
