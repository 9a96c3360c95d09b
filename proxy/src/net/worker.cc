// Worker thread: accept, batched flush in the check phase, health pings, drain and shutdown.
#include "net/worker.h"

#include <spdlog/spdlog.h>

#include "backend/backend_conn.h"
#include "core/assert.h"
#include "core/clock.h"
#include "session/client_session.h"

namespace sp::net {
namespace {

constexpr uint64_t kDrainPollMs = 10;

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

Worker::Worker(int index, ProxyContext& context, int listen_fd)
    : index_(index),
      context_(context),
      listen_fd_(listen_fd),
      topology_(context.topology),
      stats_(shardNames(*context.topology)),
      read_buffer_(new char[kReadBufferSize]) {
  const auto& limits = context.config.limits;
  parser_limits_.max_bulk_len = limits.max_bulk_len;
  parser_limits_.max_array_len = limits.max_array_len;
  parser_limits_.max_inline_len = limits.max_inline_len;
  uv_loop_init(&loop_);
  loop_.data = this;
  const auto& shards = topology_->shards();
  backends_.resize(shards.size());
  replicas_.resize(shards.size());
  read_turn_.assign(shards.size(), 0);
  for (size_t s = 0; s < shards.size(); ++s) {
    const auto shard = static_cast<uint16_t>(s);
    const backend::Credentials creds{shards[s].username, shards[s].password};
    for (int i = 0; i < context.config.backend_connections; ++i) {
      backends_[s].push_back(
          std::make_unique<backend::BackendConn>(*this, shard, shards[s], creds, false));
    }
    for (const auto& replica : shards[s].replicas) {
      replicas_[s].push_back(std::make_unique<backend::BackendConn>(
          *this, shard, replica, backend::Credentials{replica.username, replica.password}, true));
    }
  }
}

Worker::~Worker() {
  backends_.clear();
  replicas_.clear();
  uv_loop_close(&loop_);
}

void Worker::startThread() {
  thread_ = std::thread([this] { run(); });
}

void Worker::join() {
  if (thread_.joinable()) {
    thread_.join();
  }
}

void Worker::requestStop() { uv_async_send(&stop_async_); }

void Worker::run() {
  uv_tcp_init(&loop_, &listener_);
  listener_.data = this;
  int rc = uv_tcp_open(&listener_, listen_fd_);
  SP_ASSERT(rc == 0);
  rc = uv_listen(reinterpret_cast<uv_stream_t*>(&listener_), 4096, [](uv_stream_t* s, int status) {
    static_cast<Worker*>(s->data)->onConnection(status);
  });
  if (rc != 0) {
    spdlog::critical("worker {}: listen failed: {}", index_, uv_strerror(rc));
    std::abort();
  }
  uv_check_init(&loop_, &check_);
  check_.data = this;
  uv_check_start(&check_, [](uv_check_t* c) { static_cast<Worker*>(c->data)->onCheck(); });
  uv_idle_init(&loop_, &idle_);
  uv_timer_init(&loop_, &drain_timer_);
  drain_timer_.data = this;
  uv_timer_init(&loop_, &ping_timer_);
  ping_timer_.data = this;
  uv_timer_start(
      &ping_timer_, [](uv_timer_t* t) { static_cast<Worker*>(t->data)->onPingTimer(); },
      context_.config.backend_ping_interval_ms, context_.config.backend_ping_interval_ms);
  uv_async_init(&loop_, &stop_async_,
                [](uv_async_t* a) { static_cast<Worker*>(a->data)->onStopRequested(); });
  stop_async_.data = this;
  forEachBackend([](backend::BackendConn& conn) { conn.start(); });
  uv_run(&loop_, UV_RUN_DEFAULT);
  spdlog::debug("worker {}: stopped", index_);
}

void Worker::onConnection(int status) {
  if (status < 0 || draining_) {
    return;
  }
  uint64_t id = context_.next_client_id.fetch_add(1, std::memory_order_relaxed);
  auto* session = new session::ClientSession(*this, id);
  uv_tcp_init(&loop_, session->handle());
  sessions_.insert(session);
  stats_.connections_open.add();
  const uint64_t open = context_.clients_open.fetch_add(1, std::memory_order_relaxed) + 1;
  if (uv_accept(reinterpret_cast<uv_stream_t*>(&listener_),
                reinterpret_cast<uv_stream_t*>(session->handle())) != 0) {
    session->close("accept failed");
    return;
  }
  if (open > context_.config.limits.max_clients) {
    stats_.connections_rejected.add();
    session->refuseConnection("-ERR max number of clients reached\r\n");
    return;
  }
  stats_.connections_accepted.add();
  session->start();
}

void Worker::sessionClosed(session::ClientSession* s) {
  sessions_.erase(s);
  stats_.connections_open.sub();
  context_.clients_open.fetch_sub(1, std::memory_order_relaxed);
}

backend::BackendConn& Worker::backendFor(uint16_t shard, uint64_t client_id) {
  auto& conns = backends_[shard];
  return *conns[conns.size() == 1 ? 0 : client_id % conns.size()];
}

backend::BackendConn& Worker::backendForRead(uint16_t shard, uint64_t client_id) {
  backend::BackendConn& primary = backendFor(shard, client_id);
  auto& replicas = replicas_[shard];
  const config::ReadFrom mode = context_.config.read_from;
  if (replicas.empty() || mode == config::ReadFrom::kPrimary) {
    return primary;
  }
  // Take the next live candidate in turn; the primary counts as one in round-robin mode and is
  // the fallback of prefer-replica. replica-only returns an ejected replica when none is live,
  // so the request fails with that replica's error.
  const size_t candidates = replicas.size() + (mode == config::ReadFrom::kRoundRobin ? 1 : 0);
  for (size_t tried = 0; tried < candidates; ++tried) {
    const size_t pick = read_turn_[shard]++ % candidates;
    backend::BackendConn& conn = pick < replicas.size() ? *replicas[pick] : primary;
    if (conn.accepting()) {
      return conn;
    }
  }
  return mode == config::ReadFrom::kReplicaOnly ? *replicas[0] : primary;
}

void Worker::forEachBackend(const std::function<void(backend::BackendConn&)>& fn) {
  for (auto* group : {&backends_, &replicas_}) {
    for (auto& shard : *group) {
      for (auto& conn : shard) {
        fn(*conn);
      }
    }
  }
}

void Worker::markDirty(session::ClientSession* s) {
  if (!s->dirty) {
    s->dirty = true;
    dirty_sessions_.push_back(s);
  }
}

void Worker::markDirty(backend::BackendConn* b) {
  if (!b->dirty) {
    b->dirty = true;
    dirty_backends_.push_back(b);
  }
}

void Worker::markResume(session::ClientSession* s) {
  if (!s->resume_pending) {
    s->resume_pending = true;
    resume_sessions_.push_back(s);
  }
}

void Worker::onCheck() {
  // Everything parsed this turn has been queued; send it, one write per connection. Flushing can
  // produce more work (a failed backend answers its FIFO), so go round a few times.
  for (int round = 0; round < 8; ++round) {
    if (resume_sessions_.empty() && dirty_backends_.empty() && dirty_sessions_.empty()) {
      break;
    }
    flush_scratch_.swap(resume_sessions_);
    for (session::ClientSession* s : flush_scratch_) {
      s->resume();
    }
    flush_scratch_.clear();
    flush_backend_scratch_.swap(dirty_backends_);
    for (backend::BackendConn* b : flush_backend_scratch_) {
      b->flush();
    }
    flush_backend_scratch_.clear();
    flush_scratch_.swap(dirty_sessions_);
    for (session::ClientSession* s : flush_scratch_) {
      s->flush();
    }
    flush_scratch_.clear();
  }
  const bool pending =
      !resume_sessions_.empty() || !dirty_backends_.empty() || !dirty_sessions_.empty();
  if (pending && !closed_) {
    uv_idle_start(&idle_, [](uv_idle_t*) {});
  } else {
    uv_idle_stop(&idle_);
  }
}

void Worker::onPingTimer() {
  forEachBackend([](backend::BackendConn& conn) { conn.ping(); });
}

void Worker::onStopRequested() {
  if (draining_) {
    return;
  }
  draining_ = true;
  uv_close(reinterpret_cast<uv_handle_t*>(&listener_), nullptr);
  drain_deadline_ms_ = monoMicros() / 1000 + context_.config.shutdown_timeout_ms;
  uv_timer_start(
      &drain_timer_, [](uv_timer_t* t) { static_cast<Worker*>(t->data)->onDrainTimer(); }, 0,
      kDrainPollMs);
}

void Worker::onDrainTimer() {
  bool idle = true;
  for (session::ClientSession* s : sessions_) {
    idle = idle && s->idle();
  }
  if (idle || monoMicros() / 1000 >= drain_deadline_ms_) {
    if (!idle) {
      spdlog::warn("worker {}: shutdown timeout with requests in flight", index_);
    }
    closeEverything();
  }
}

void Worker::closeEverything() {
  if (closed_) {
    return;
  }
  closed_ = true;
  std::vector<session::ClientSession*> sessions(sessions_.begin(), sessions_.end());
  for (session::ClientSession* s : sessions) {
    s->close("shutdown");
  }
  forEachBackend([](backend::BackendConn& conn) { conn.shutdown(); });
  uv_timer_stop(&drain_timer_);
  uv_timer_stop(&ping_timer_);
  uv_close(reinterpret_cast<uv_handle_t*>(&drain_timer_), nullptr);
  uv_close(reinterpret_cast<uv_handle_t*>(&ping_timer_), nullptr);
  uv_check_stop(&check_);
  uv_close(reinterpret_cast<uv_handle_t*>(&check_), nullptr);
  uv_idle_stop(&idle_);
  uv_close(reinterpret_cast<uv_handle_t*>(&idle_), nullptr);
  uv_close(reinterpret_cast<uv_handle_t*>(&stop_async_), nullptr);
}

}  // namespace sp::net
