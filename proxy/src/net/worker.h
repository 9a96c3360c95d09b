// Worker: one thread, one uv loop, one SO_REUSEPORT listener, its own client sessions and its own
// connections to every shard. Nothing on the request path is shared with another worker. The
// worker is the thread, the loop, the mailbox, the listeners and the timers; the sessions and the
// shard connections are its two parts (net/worker_parts.h), built by the layers above.
//
// Output is batched (net/flush_batch.h): sessions and shard connections that have bytes to send
// mark themselves, and the check phase of each loop turn flushes each with one write.
#pragma once

#include <uv.h>

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "core/buffer.h"
#include "core/intrusive_queue.h"
#include "core/log.h"
#include "net/flush_batch.h"
#include "net/listener.h"
#include "net/proxy_context.h"
#include "net/ring_loop.h"
#include "net/slow_log.h"
#include "net/timers.h"
#include "net/worker_parts.h"
#include "net/worker_stats.h"
#include "resp/protocol.h"
#include "resp/request_parser.h"
#include "route/router.h"

namespace sp::net {

class Worker {
 public:
  // listen: the worker's own SO_REUSEPORT TCP sockets (plain and TLS) and/or its copy (dup) of
  // the shared Unix socket; the worker owns and closes them. `parts` builds its shard side and
  // client side (session::buildWorkerParts).
  Worker(int index, ProxyContext& context, std::vector<ListenSocket> listen,
         const WorkerPartsFactory& parts);
  ~Worker();
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  // Starts the worker's thread and returns once its loop is about to turn: from then on the
  // worker counts as live (/healthz). It accepts clients only after startAccepting.
  void startThread();
  // Listens on the worker's sockets (connections queue from now on) and has its loop accept
  // them; main calls it once everything else (the metrics endpoint) is up.
  void startAccepting();
  void join();
  // Thread-safe: stop accepting, finish in-flight requests (up to shutdown_timeout_ms), exit.
  void requestStop();
  // Thread-safe mailbox: runs fn on this worker's thread between loop iterations (never in the
  // middle of a request). Work posted after the worker closed is dropped.
  void post(std::function<void(Worker&)> fn);

  // The worker thread (through post(), on reload): from now on use `config` and `topology`.
  // The shard side keeps the connections of unchanged shards and retires the others. Client
  // connections are untouched; parser limits apply to clients accepted from now on, the other
  // limits and timeouts at once.
  void applyConfig(std::shared_ptr<const config::Config> config, route::TopologyPtr topology);

  int index() const { return index_; }
  uv_loop_t* loop() { return &loop_; }
  // The worker's clock and timers: the loop's (LoopTimers), or, in unit tests, ones the test
  // drives, installed with useTimers before startThread. Everything on the worker's thread that
  // waits or measures idleness reads them: its own sweeps (pings, idle clients, drain, memory
  // trim), the shard connections, deferred replies and retries, the clients' idle clock (read
  // inline on every client read and write).
  Timers& timers() { return *timers_; }
  void useTimers(std::unique_ptr<Timers> timers) { timers_ = std::move(timers); }
  ProxyContext& context() { return context_; }
  const ProxyContext& context() const { return context_; }
  const config::Config& config() const { return *config_; }
  const route::Topology& topology() const { return *topology_; }
  WorkerStats& stats() { return stats_; }
  const WorkerStats& stats() const { return stats_; }
  BufferPool& buffers() { return buffers_; }
  LogLimiter& logLimiter() { return log_limiter_; }
  const resp::ParserLimits& parserLimits() const { return parser_limits_; }
  // backend.slow_commands: a request of one of these waits up to backend.slow_timeout_ms.
  bool slowCommand(const resp::CommandInfo* cmd) const { return slow_commands_.contains(cmd); }
  SlowLog& slowLog() { return slow_log_; }
  const SlowLog& slowLog() const { return slow_log_; }
  uint64_t slowlogThresholdUs() const { return slowlog_threshold_us_; }
  bool slowlogEnabled() const { return slowlog_enabled_; }
  // Any thread: the loop time (uv_hrtime's clock, in ms) of this worker's last once-a-second
  // timer; 0 before its loop runs. /healthz reads it to tell a live loop from a stuck one.
  uint64_t heartbeatMs() const { return heartbeat_ms_.load(std::memory_order_relaxed); }

  // The shared read buffer: sessions with no partial request read into it, so an idle
  // connection owns no buffer.
  char* readBuffer() { return read_buffer_.get(); }
  size_t readBufferSize() const { return kReadBufferSize; }

  // The worker's parts (backend::backendsOf and session::clientsOf reach them typed).
  ShardSide& shardSide() { return *shards_; }
  ClientSide& clientSide() { return *clients_; }

  // Cluster mode: asks the topology watcher for a CLUSTER SLOTS refresh soon.
  void requestTopologyRefresh();
  // limits.tcp_keepalive on a connected client or shard connection.
  void setKeepAlive(uv_tcp_t* tcp) const;

  // Output batching: connections with bytes to send (or input to resume) mark themselves here.
  FlushBatch& flushes() { return flushes_; }
  // Socket reads through io_uring (active() false: libuv reads them).
  RingLoop& ringReads() { return ring_reads_; }

 private:
  static constexpr size_t kReadBufferSize = 64 * 1024;
  static constexpr unsigned kSendRingEntries = 256;  // writes per submission, at most

  void run();
  // Accepting. The listening socket is polled and accepted here rather than by uv_listen, whose
  // answer to EMFILE is to accept and close every waiting connection without a word: when
  // descriptors run out, spare_fd_ is given up for a moment to accept one connection, write it
  // "-ERR max number of clients reached" and close it (counted, logged), as redis-server answers.
  struct Listener {
    Worker* worker;
    int fd;
    bool unix_socket;  // listen.unix's, else TCP
    bool tls;          // tls.listen's
    uv_poll_t poll{};  // readable: connections wait in fd's backlog
  };
  static void onListenerCb(uv_poll_t* poll, int status, int events);
  void pollListeners();  // loop thread: startAccepting's second half
  void startListening();
  void onAcceptable(const Listener& listener);
  void onConnection(int fd, const Listener& listener);
  bool refuseOnSpare(int listen_fd);  // EMFILE/ENFILE: false when no spare descriptor could be had
  void pauseAccepting();         // for kAcceptPauseMs, when accept fails and cannot be answered
  void startIdleTimer();         // limits.timeout: the idle-client sweep, or none
  uint64_t idleSweepMs() const;  // the sweep's period while idle_timeout_ms_ > 0
  void onIdleTimer();
  void onStopRequested();
  void onDrainTimer();
  void onPingTimer();
  // Memory return, once a second: frees backend buffers that a large value left grown, and
  // gives freed memory back to the system when much was freed (core/allocator.h).
  void onTrimTimer();
  void onMailbox();
  void closeEverything();
  void applyLimits();  // parser limits and slow log from config_
  void startPingTimer();
  void startSendRing();  // io_uring: client writes in one submission per turn, else send(2)
  // io_uring: socket reads and the wait, else libuv's; with it, client writes go out with the
  // wait.
  void startReadRing();

  int index_;
  ProxyContext& context_;
  std::vector<std::unique_ptr<Listener>> listeners_;  // each polled, not owned, by its handle
  bool accepting_ = false;                            // listeners_' polls initialised
  std::shared_ptr<const config::Config> config_;
  route::TopologyPtr topology_;
  uv_loop_t loop_{};
  std::unique_ptr<Timers> timers_;
  // The worker's own timers, from timers_ (created in run(), dropped in closeEverything()).
  std::unique_ptr<Timer> accept_timer_;  // pauseAccepting()
  std::unique_ptr<Timer> idle_timer_;    // limits.timeout sweep, re-armed each sweep
  std::unique_ptr<Timer> drain_timer_;   // the shutdown drain's poll
  std::unique_ptr<Timer> ping_timer_;    // backend health pings, re-armed each round
  std::unique_ptr<Timer> trim_timer_;    // memory return, re-armed each second
  int spare_fd_ = -1;                    // /dev/null, given up to refuse a connection on EMFILE
  uint64_t idle_timeout_ms_ = 0;
  uv_async_t stop_async_{};
  uv_async_t mailbox_async_{};
  std::mutex mailbox_mu_;
  std::vector<std::function<void(Worker&)>> mailbox_;  // guarded by mailbox_mu_
  bool closed_mailbox_ = false;                        // guarded by mailbox_mu_
  std::atomic<uint64_t> heartbeat_ms_{0};
  // Buffer bytes onTrimTimer saw freed and has not yet asked the allocator to hand back.
  size_t unreturned_bytes_ = 0;
  bool draining_ = false;
  bool closed_ = false;
  uint64_t drain_deadline_ms_ = 0;
  std::thread thread_;

  WorkerStats stats_;
  BufferPool buffers_;
  LogLimiter log_limiter_;
  resp::ParserLimits parser_limits_;
  resp::CommandSet slow_commands_;
  SlowLog slow_log_;
  uint64_t slowlog_threshold_us_ = 0;
  bool slowlog_enabled_ = false;
  uint32_t ping_interval_ms_ = 0;
  std::unique_ptr<char[]> read_buffer_;
  FlushBatch flushes_;
  RingLoop ring_reads_;
  // Built in the constructor, destroyed first in the destructor: the shard side, then the clients.
  std::unique_ptr<ShardSide> shards_;
  std::unique_ptr<ClientSide> clients_;
};

}  // namespace sp::net
