// ContextWithWorkers: a net::ProxyContext as main leaves it for the control plane and for what
// reads every worker (INFO, the metrics scrape, reload, health): a config and topology published
// (no health PINGs), a fake control plane installed, and workers built with no listener. A worker
// runs once started (startAll on the loop's timers, startWorker on timers the test gives); until
// then its counters and heartbeat are the test's alone. Header-only, like worker_harness.h.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <utility>
#include <vector>

#include "config/config.h"
#include "fakes/fake_control_plane.h"
#include "fakes/worker_harness.h"
#include "net/proxy_context.h"
#include "net/timers.h"
#include "net/worker.h"
#include "route/topology.h"
#include "session/worker_clients.h"

namespace sp::fakes {

class ContextWithWorkers {
 public:
  // `shards`: the topology, split evenly; `tune` may change the config before it is published.
  ContextWithWorkers(std::vector<route::ShardAddress> shards, size_t workers,
                     const std::function<void(config::Config&)>& tune = {}) {
    const route::TopologyPtr topology = route::Topology::evenSplit(std::move(shards));
    context_.publish(configFor(*topology,
                               [&](config::Config& c) {
                                 noPings(c);
                                 if (tune) {
                                   tune(c);
                                 }
                               }),
                     topology);
    context_.control = &control_;
    for (size_t i = 0; i < workers; ++i) {
      workers_.push_back(std::make_unique<net::Worker>(static_cast<int>(i), context_,
                                                       std::vector<net::ListenSocket>(),
                                                       session::buildWorkerParts));
      context_.workers.push_back(workers_.back().get());
    }
  }
  ~ContextWithWorkers() {
    for (size_t i : started_) {
      workers_[i]->requestStop();
    }
    for (size_t i : started_) {
      workers_[i]->join();
    }
  }
  ContextWithWorkers(const ContextWithWorkers&) = delete;
  ContextWithWorkers& operator=(const ContextWithWorkers&) = delete;

  net::ProxyContext& context() { return context_; }
  net::Worker& worker(size_t i) { return *workers_[i]; }
  net::WorkerStats& stats(size_t i) { return workers_[i]->stats(); }

  void startAll() {
    for (size_t i = 0; i < workers_.size(); ++i) {
      startWorker(i);
    }
  }
  // `timers`: the worker's clock and timers (fake_timers.h), else the loop's.
  void startWorker(size_t i, std::unique_ptr<net::Timers> timers = nullptr) {
    if (timers != nullptr) {
      workers_[i]->useTimers(std::move(timers));
    }
    workers_[i]->startThread();
    started_.push_back(i);
  }

 private:
  FakeControlPlane control_;
  net::ProxyContext context_;
  std::vector<std::unique_ptr<net::Worker>> workers_;
  std::vector<size_t> started_;
};

}  // namespace sp::fakes
