// Worker thread: accept, health pings, timers, drain and shutdown.
#include "net/worker.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <spdlog/spdlog.h>

#include "core/allocator.h"
#include "core/assert.h"
#include "core/clock.h"
#include "net/tcp_keepalive.h"
#include "resp/errors.h"

namespace sp::net {
namespace {

constexpr uint64_t kDrainPollMs = 10;
constexpr uint64_t kTrimIntervalMs = 1000;
// Buffer bytes freed (per worker) past which the allocator is asked to give free memory back to
// the system, once a trim interval passes with less than this freed.
constexpr size_t kReturnMemoryAfterBytes = 1 << 20;
constexpr int kListenBacklog = 4096;
// Connections accepted per readable event; the socket stays readable, so the rest follow after
// the loop has served the other connections.
constexpr int kAcceptBatch = 64;
constexpr uint64_t kAcceptPauseMs = 100;  // accept failed and could not be answered: wait
constexpr std::string_view kMaxClientsError = resp::err::kMaxClients;

int openSpare() { return ::open("/dev/null", O_RDONLY | O_CLOEXEC); }

std::vector<std::string> shardNames(const route::Topology& topology) {
  std::vector<std::string> names;
  for (const auto& shard : topology.shards()) {
    names.push_back(shard.name);
  }
  return names;
}

}  // namespace

const char* backendStateName(BackendState state) {
  switch (state) {
    case BackendState::kConnecting:
      return "connecting";
    case BackendState::kUp:
      return "up";
    case BackendState::kDown:
      return "down";
    case BackendState::kEjected:
      return "ejected";
  }
  return "unknown";
}

Worker::Worker(int index, ProxyContext& context, std::vector<ListenSocket> listen,
               const WorkerPartsFactory& parts)
    : index_(index),
      context_(context),
      config_(context.config()),
      topology_(context.topology()),
      stats_(shardNames(*topology_)),
      read_buffer_(new char[kReadBufferSize]) {
  for (const ListenSocket& socket : listen) {
    sockaddr_storage addr{};
    socklen_t len = sizeof addr;
    const bool unix_socket =
        ::getsockname(socket.fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0 &&
        addr.ss_family == AF_UNIX;
    listeners_.push_back(
        std::make_unique<Listener>(Listener{this, socket.fd, unix_socket, socket.tls}));
  }
  applyLimits();
  uv_loop_init(&loop_);
  loop_.data = this;
  timers_ = std::make_unique<LoopTimers>(&loop_);
  // Initialised here, not in run(): the main thread may post (a reload) as soon as it has
  // started the thread.
  uv_async_init(&loop_, &mailbox_async_,
                [](uv_async_t* a) { static_cast<Worker*>(a->data)->onMailbox(); });
  mailbox_async_.data = this;
  WorkerParts built = parts(*this);
  shards_ = std::move(built.shards);
  clients_ = std::move(built.clients);
}

Worker::~Worker() {
  shards_.reset();
  clients_.reset();
  timers_.reset();
  if (heartbeat_ms_.load(std::memory_order_acquire) == 0) {
    // Built but never started: the mailbox's handle is still open, and the loop frees what it
    // holds only once its handles are closed.
    uv_close(reinterpret_cast<uv_handle_t*>(&mailbox_async_), nullptr);
    uv_run(&loop_, UV_RUN_DEFAULT);
  }
  uv_loop_close(&loop_);
}

void Worker::applyLimits() {
  const auto& limits = config_->limits;
  parser_limits_.max_bulk_len = limits.max_bulk_len;
  parser_limits_.max_array_len = limits.max_array_len;
  parser_limits_.max_inline_len = limits.max_inline_len;
  slowlog_threshold_us_ = config_->slowlog_threshold_us;
  slowlog_enabled_ = config_->slowlog_max_len > 0;
  slow_log_.configure(config_->slowlog_max_len);
  buffers_.setMaxBytes(limits.buffer_pool_bytes);
  slow_commands_ = resp::CommandSet(config_->backend_slow_commands);
}

void Worker::startThread() {
  // spdlog's registry is a function-local static built on first use; building it here, before
  // any worker thread logs, keeps two workers from racing to build it (main logs first anyway,
  // but an embedder such as a unit test may not).
  (void)spdlog::default_logger_raw();
  thread_ = std::thread([this] { run(); });
  heartbeat_ms_.wait(0, std::memory_order_acquire);
}

void Worker::join() {
  if (thread_.joinable()) {
    thread_.join();
  }
}

void Worker::requestStop() { uv_async_send(&stop_async_); }

void Worker::post(std::function<void(Worker&)> fn) {
  std::lock_guard<std::mutex> lock(mailbox_mu_);
  if (closed_mailbox_) {
    return;
  }
  mailbox_.push_back(std::move(fn));
  uv_async_send(&mailbox_async_);  // under the lock: closeEverything cannot close it meanwhile
}

void Worker::onMailbox() {
  std::vector<std::function<void(Worker&)>> work;
  {
    std::lock_guard<std::mutex> lock(mailbox_mu_);
    work.swap(mailbox_);
  }
  for (auto& fn : work) {
    if (!closed_) {
      fn(*this);
    }
  }
}

void Worker::applyConfig(std::shared_ptr<const config::Config> config,
                         route::TopologyPtr topology) {
  const bool same_connections = config->backend_connections == config_->backend_connections;
  config_ = std::move(config);
  applyLimits();
  if (!closed_ && config_->backend_ping_interval_ms != ping_interval_ms_) {
    startPingTimer();
  }
  if (!closed_ && static_cast<uint64_t>(config_->limits.timeout) * 1000 != idle_timeout_ms_) {
    startIdleTimer();
  }
  if (topology == topology_ || closed_) {
    return;
  }
  // Bind the stats first: new connections take their counters from the new positions.
  stats_.shards.bind(shardNames(*topology));
  stats_.replica_shards.bind(shardNames(*topology));
  const ShardSide::Reconciled done =
      shards_->applyTopology(*topology_, *topology, same_connections);
  topology_ = std::move(topology);
  spdlog::debug("worker {}: new topology: {} shards kept, {} new, {} connections draining", index_,
                done.kept, topology_->shardCount() - done.kept, done.retired);
}

void Worker::startPingTimer() {
  ping_interval_ms_ = config_->backend_ping_interval_ms;
  ping_timer_->start(ping_interval_ms_);
}

void Worker::startAccepting() {
  // listen() here, in the caller's thread: from now on connections wait in the backlog (none is
  // refused) until the loop polls the sockets.
  for (auto& listener : listeners_) {
    if (::listen(listener->fd, kListenBacklog) != 0) {
      spdlog::critical("worker {}: listen failed: {}", index_, std::strerror(errno));
      std::abort();
    }
  }
  post([](Worker& self) { self.pollListeners(); });
}

void Worker::pollListeners() {
  if (draining_ || accepting_) {
    return;
  }
  for (auto& listener : listeners_) {
    int rc = uv_poll_init_socket(&loop_, &listener->poll, listener->fd);
    SP_ASSERT(rc == 0);
    listener->poll.data = listener.get();
  }
  accepting_ = true;
  startListening();
}

void Worker::run() {
  spare_fd_ = openSpare();
  accept_timer_ = timers_->timer("worker.accept", [this] {
    if (!draining_) {
      startListening();
    }
  });
  idle_timer_ = timers_->timer("worker.idle", [this] { onIdleTimer(); });
  startIdleTimer();
  flushes_.start(&loop_);
  startSendRing();
  startReadRing();
  drain_timer_ = timers_->timer("worker.drain", [this] { onDrainTimer(); });
  ping_timer_ = timers_->timer("worker.ping", [this] { onPingTimer(); });
  clients_->start();
  startPingTimer();
  trim_timer_ = timers_->timer("worker.trim", [this] { onTrimTimer(); });
  trim_timer_->start(kTrimIntervalMs);
  uv_async_init(&loop_, &stop_async_,
                [](uv_async_t* a) { static_cast<Worker*>(a->data)->onStopRequested(); });
  stop_async_.data = this;
  shards_->start();
  // Non-zero from here on: startThread waits for the first beat.
  heartbeat_ms_.store(std::max<uint64_t>(uv_now(&loop_), 1), std::memory_order_release);
  heartbeat_ms_.notify_all();
  if (ring_reads_.active()) {
    ring_reads_.run();
  } else {
    uv_run(&loop_, UV_RUN_DEFAULT);
  }
  spdlog::debug("worker {}: stopped", index_);
}

void Worker::startSendRing() {
  SendBatch& sends = flushes_.sends();
  sends.countInto(&stats_.io_uring_workers, &stats_.ring_submits, &stats_.ring_writes);
  if (!config_->io_uring) {
    return;
  }
  std::string why;
  if (!sends.startRing(kSendRingEntries, &why)) {
    spdlog::warn("worker {}: client writes use send(2): io_uring is not usable here ({})", index_,
                 why);
    return;
  }
  static std::atomic<bool> logged{false};
  if (!logged.exchange(true)) {
    spdlog::debug("client writes go out through io_uring, one submission per loop turn");
  }
}

void Worker::startReadRing() {
  ring_reads_.countInto(&stats_.ring_reads);
  if (!config_->io_uring) {
    return;
  }
  std::string why;
  // A turn's completions are followed by the flush batch, as libuv's check phase follows I/O.
  if (!ring_reads_.start(
          &loop_, [this] { flushes_.runIfStarted(); }, &why)) {
    spdlog::warn("worker {}: socket reads use libuv: io_uring reads are not usable here ({})",
                 index_, why);
    return;
  }
  stats_.io_uring_read_workers.set(1);
  spdlog::debug("worker {}: socket reads through io_uring, {}", index_,
                ring_reads_.incrementalBuffers() ? "buffers consumed incrementally"
                                                 : "a whole buffer per receive");
  // Client writes then go out with the ring's waits rather than in a submission of their own.
  if (!flushes_.sends().sendWith(&ring_reads_, &why)) {
    spdlog::warn("worker {}: client writes take their own io_uring submission ({})", index_, why);
  }
}

void Worker::startListening() {
  for (auto& listener : listeners_) {
    uv_poll_start(&listener->poll, UV_READABLE, &Worker::onListenerCb);
  }
}

void Worker::onListenerCb(uv_poll_t* poll, int status, int /*events*/) {
  auto* listener = static_cast<Listener*>(poll->data);
  Worker* self = listener->worker;
  if (status < 0) {
    if (self->log_limiter_.allow()) {
      spdlog::warn("worker {}: listening socket error: {}", self->index_, uv_strerror(status));
    }
    self->pauseAccepting();
    return;
  }
  self->onAcceptable(*listener);
}

void Worker::onAcceptable(const Listener& listener) {
  for (int i = 0; i < kAcceptBatch && !draining_; ++i) {
    const int fd = ::accept4(listener.fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd >= 0) {
      onConnection(fd, listener);
      continue;
    }
    const int err = errno;
    if (err == EAGAIN || err == EWOULDBLOCK) {
      return;
    }
    if (err == EINTR || err == ECONNABORTED) {
      continue;
    }
    if ((err == EMFILE || err == ENFILE) && refuseOnSpare(listener.fd)) {
      continue;
    }
    // No spare descriptor either (or ENOBUFS, ENOMEM): the connection waits in the backlog, and
    // polling a socket that stays readable would spin.
    if (log_limiter_.allow()) {
      spdlog::warn("worker {}: accept failed: {}; not accepting for {} ms", index_,
                   std::strerror(err), kAcceptPauseMs);
    }
    pauseAccepting();
    return;
  }
}

bool Worker::refuseOnSpare(int listen_fd) {
  if (spare_fd_ < 0) {
    // Lost to another thread after the last refusal; a descriptor is free again if it opens.
    spare_fd_ = openSpare();
    return spare_fd_ >= 0;
  }
  ::close(spare_fd_);
  spare_fd_ = -1;
  const int fd = ::accept4(listen_fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
  const int accept_errno = fd < 0 ? errno : 0;
  if (fd >= 0) {
    // Best effort, as redis-server does: the error fits any socket buffer.
    (void)::send(fd, kMaxClientsError.data(), kMaxClientsError.size(), MSG_NOSIGNAL);
    ::close(fd);
    stats_.connections_rejected.add();
    stats_.accept_fd_exhausted.add();
    if (log_limiter_.allow()) {
      spdlog::warn(
          "worker {}: out of file descriptors with {} clients open: connection refused with "
          "-ERR max number of clients reached (raise `ulimit -n` or lower limits.max_clients)",
          index_, context_.clients_open.load(std::memory_order_relaxed));
    }
  }
  spare_fd_ = openSpare();
  return fd >= 0 || (accept_errno != EMFILE && accept_errno != ENFILE);
}

void Worker::pauseAccepting() {
  if (draining_ || closed_) {
    return;
  }
  for (auto& listener : listeners_) {
    uv_poll_stop(&listener->poll);
  }
  accept_timer_->start(kAcceptPauseMs);
}

void Worker::onConnection(int fd, const Listener& listener) {
  clients_->accept(fd, listener.unix_socket, listener.tls);
}

void Worker::setKeepAlive(uv_tcp_t* tcp) const {
  setTcpKeepAlive(tcp, config_->limits.tcp_keepalive);
}

void Worker::startIdleTimer() {
  idle_timeout_ms_ = static_cast<uint64_t>(config_->limits.timeout) * 1000;
  if (idle_timeout_ms_ == 0) {
    idle_timer_->stop();
    return;
  }
  idle_timer_->start(idleSweepMs());
}

uint64_t Worker::idleSweepMs() const {
  // One sweep per quarter of the timeout (0.1 to 1 s apart): a client goes at most that late.
  return std::clamp<uint64_t>(idle_timeout_ms_ / 4, 100, 1000);
}

void Worker::onIdleTimer() {
  idle_timer_->start(idleSweepMs());
  clients_->closeIdle(timers_->nowMs(), idle_timeout_ms_);
}

void Worker::requestTopologyRefresh() { context_.control->requestTopologyRefresh(); }

void Worker::onPingTimer() {
  ping_timer_->start(ping_interval_ms_);
  shards_->ping();
}

void Worker::onTrimTimer() {
  trim_timer_->start(kTrimIntervalMs);
  heartbeat_ms_.store(uv_now(&loop_), std::memory_order_relaxed);
  buffers_.trim();
  const size_t freed = buffers_.takeFreedBytes() + shards_->trimBuffers();
  unreturned_bytes_ += freed;
  // Once a burst is over: while buffers are still freed by the megabyte every second, the heap
  // is being reused, and handing it back would only cost page faults.
  if (freed < kReturnMemoryAfterBytes && unreturned_bytes_ >= kReturnMemoryAfterBytes) {
    unreturned_bytes_ = 0;
    returnFreeMemory();
  }
}

void Worker::onStopRequested() {
  if (draining_) {
    return;
  }
  draining_ = true;
  accept_timer_->stop();
  for (auto& listener : listeners_) {
    if (!accepting_) {
      ::close(listener->fd);  // stopped before it accepted anything
      continue;
    }
    uv_close(reinterpret_cast<uv_handle_t*>(&listener->poll), [](uv_handle_t* h) {
      ::close(static_cast<Listener*>(h->data)->fd);  // polled, not owned, by the handle
    });
  }
  drain_deadline_ms_ = timers_->freshNowMs() + config_->shutdown_timeout_ms;
  onDrainTimer();
}

void Worker::onDrainTimer() {
  const bool idle = clients_->idle();
  if (idle || timers_->nowMs() >= drain_deadline_ms_) {
    if (!idle) {
      spdlog::warn("worker {}: shutdown timeout with requests in flight", index_);
    }
    closeEverything();
    return;
  }
  drain_timer_->start(kDrainPollMs);
}

void Worker::closeEverything() {
  if (closed_) {
    return;
  }
  closed_ = true;
  clients_->closeAll();
  shards_->shutdown();
  drain_timer_.reset();
  ping_timer_.reset();
  trim_timer_.reset();
  accept_timer_.reset();
  idle_timer_.reset();
  if (spare_fd_ >= 0) {
    ::close(spare_fd_);
    spare_fd_ = -1;
  }
  flushes_.close();
  uv_close(reinterpret_cast<uv_handle_t*>(&stop_async_), nullptr);
  {
    std::lock_guard<std::mutex> lock(mailbox_mu_);
    closed_mailbox_ = true;
  }
  uv_close(reinterpret_cast<uv_handle_t*>(&mailbox_async_), nullptr);
}

}  // namespace sp::net
