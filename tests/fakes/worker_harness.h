// A real Worker for unit tests of the runtime, with no listener and its thread running, and a fake
// reply handler (the seam backend/backend_op.h declares) that records every reply the shard
// connections hand back instead of client sessions. Header-only: the suites that include it link
// the runtime.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "backend/backend_op.h"
#include "config/config.h"
#include "fakes/fake_control_plane.h"
#include "net/listener.h"
#include "net/proxy_context.h"
#include "net/worker.h"
#include "route/topology.h"
#include "session/worker_clients.h"

namespace sp::fakes {

struct DeliveredReply {
  backend::InFlightRequest* request;
  uint32_t fragment;
  std::string reply;
};

// What the fake handler saw, filled on the worker's thread.
struct ReplyCatcher {
  std::mutex mu;
  std::condition_variable cv;
  std::vector<DeliveredReply> delivered;

  // True once n replies arrived, within 10 s.
  bool waitFor(size_t n) {
    std::unique_lock lock(mu);
    return cv.wait_for(lock, std::chrono::seconds(10), [&] { return delivered.size() >= n; });
  }
};

namespace detail {
inline ReplyCatcher* g_catcher = nullptr;

inline void catchReply(net::Worker& /*worker*/, backend::InFlightRequest* request,
                       uint32_t fragment, std::string_view reply) {
  std::lock_guard lock(g_catcher->mu);
  g_catcher->delivered.push_back({request, fragment, std::string(reply)});
  g_catcher->cv.notify_all();
}
}  // namespace detail

// Installs the catching handler for the test's life and puts the previous handler back after.
class FakeReplyHandler {
 public:
  FakeReplyHandler() {
    detail::g_catcher = &catcher;
    previous_ = backend::reply_handler.set(&detail::catchReply);
  }
  ~FakeReplyHandler() {
    backend::reply_handler.set(previous_);
    detail::g_catcher = nullptr;
  }
  FakeReplyHandler(const FakeReplyHandler&) = delete;
  FakeReplyHandler& operator=(const FakeReplyHandler&) = delete;
  ReplyCatcher catcher;

 private:
  backend::ReplyHandler previous_;
};

// A config over `topology`'s shards, changed by `tune` when given.
inline std::shared_ptr<config::Config> configFor(
    const route::Topology& topology, const std::function<void(config::Config&)>& tune = {}) {
  auto config = std::make_shared<config::Config>();
  if (tune) {
    tune(*config);
  }
  for (const route::ShardAddress& shard : topology.shards()) {
    config::ShardConfig sc;
    sc.name = shard.name;
    sc.host = shard.host;
    sc.port = shard.port;
    config->shards.push_back(sc);
  }
  return config;
}

// A worker over `topology`, its thread running, with a fake control plane; `tune` may change the
// config. With Listen::kLoopback it also accepts clients on a free loopback port (port()).
class WorkerHarness {
 public:
  enum class Listen { kNo, kLoopback };

  // `timers`: the shard connections' clock and timers (fakes/fake_timers.h), else the loop's.
  explicit WorkerHarness(route::TopologyPtr topology,
                         const std::function<void(config::Config&)>& tune = {},
                         Listen listen = Listen::kNo,
                         std::unique_ptr<net::Timers> timers = nullptr) {
    context_.publish(configFor(*topology, tune), topology);
    context_.control = &control_;
    std::vector<net::ListenSocket> sockets;
    if (listen == Listen::kLoopback) {
      int fd = -1;
      if (Status bound = net::bindListenSocket("127.0.0.1", 0, &port_, &fd); !bound.ok()) {
        throw std::runtime_error("cannot listen on loopback: " + bound.message());
      }
      context_.bound_port = port_;
      sockets.push_back(net::ListenSocket{fd});
    }
    worker_ =
        std::make_unique<net::Worker>(0, context_, std::move(sockets), session::buildWorkerParts);
    context_.workers.push_back(worker_.get());
    if (timers != nullptr) {
      worker_->useTimers(std::move(timers));
    }
    worker_->startThread();
    if (listen == Listen::kLoopback) {
      worker_->startAccepting();
    }
  }
  ~WorkerHarness() {
    worker_->requestStop();
    worker_->join();
  }
  WorkerHarness(const WorkerHarness&) = delete;
  WorkerHarness& operator=(const WorkerHarness&) = delete;
  net::Worker& worker() { return *worker_; }
  FakeControlPlane& control() { return control_; }
  uint16_t port() const { return port_; }  // Listen::kLoopback's

 private:
  uint16_t port_ = 0;
  FakeControlPlane control_;
  net::ProxyContext context_;
  std::unique_ptr<net::Worker> worker_;
};

// Runs fn on the worker's thread and returns what it returned.
template <typename T>
T onWorker(net::Worker& worker, const std::function<T(net::Worker&)>& fn) {
  std::promise<T> result;
  worker.post([&](net::Worker& w) { result.set_value(fn(w)); });
  return result.get_future().get();
}

// One shard, "s0", at 127.0.0.1:port (a ScriptedShard's), owning every slot.
inline route::TopologyPtr oneShard(uint16_t port) {
  return route::Topology::evenSplit({route::ShardAddress("s0", "127.0.0.1", port)});
}

// No health PINGs: a fake shard then reads only the test's commands.
inline void noPings(config::Config& c) { c.backend_ping_interval_ms = UINT32_MAX; }  // 49 days

inline std::string getCommand(const std::string& key) {
  return "*2\r\n$3\r\nGET\r\n$" + std::to_string(key.size()) + "\r\n" + key + "\r\n";
}

inline std::string bulk(const std::string& text) {
  return "$" + std::to_string(text.size()) + "\r\n" + text + "\r\n";
}

// n keys that `topology` places on `shard`.
inline std::vector<std::string> keysOn(const route::Topology& topology, uint16_t shard, size_t n) {
  std::vector<std::string> keys;
  for (int i = 0; keys.size() < n; ++i) {
    std::string key = "key:" + std::to_string(i);
    if (topology.shardOfKey(key) == shard) {
      keys.push_back(std::move(key));
    }
  }
  return keys;
}

// A TCP socket bound to a free loopback port, not listening (connections to it are refused until
// it listens); -1 when none could be bound.
inline int boundLoopbackSocket(uint16_t* port) {
  int fd = -1;
  return net::bindListenSocket("127.0.0.1", 0, port, &fd).ok() ? fd : -1;
}

}  // namespace sp::fakes
