// ContextWithWorkers: a net::ProxyContext over three shards (s0, s1, s2 on 127.0.0.1 ports 1-3,
// which nothing is asked to reach) with workers that are built but whose threads have not
// started, so the tests own their counters and heartbeats; startWorker runs one on fake timers,
// whose clock stands still, so its heartbeat stays where its loop started.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <vector>

#include "config/config.h"
#include "fakes/fake_control_plane.h"
#include "fakes/fake_timers.h"
#include "fakes/worker_harness.h"
#include "net/proxy_context.h"
#include "net/worker.h"
#include "route/topology.h"
#include "session/worker_clients.h"

namespace sp::net::testing {

class ContextWithWorkers {
 public:
  explicit ContextWithWorkers(size_t workers,
                              const std::function<void(config::Config&)>& tune = {}) {
    const route::TopologyPtr topology = route::Topology::evenSplit(
        {route::ShardAddress("s0", "127.0.0.1", 1), route::ShardAddress("s1", "127.0.0.1", 2),
         route::ShardAddress("s2", "127.0.0.1", 3)});
    context_.publish(fakes::configFor(*topology,
                                      [&](config::Config& c) {
                                        fakes::noPings(c);
                                        if (tune) {
                                          tune(c);
                                        }
                                      }),
                     topology);
    context_.control = &control_;
    for (size_t i = 0; i < workers; ++i) {
      workers_.push_back(std::make_unique<Worker>(
          static_cast<int>(i), context_, std::vector<ListenSocket>(), session::buildWorkerParts));
      context_.workers.push_back(workers_.back().get());
    }
  }
  ~ContextWithWorkers() {
    for (size_t i : started_) {
      workers_[i]->requestStop();
      workers_[i]->join();
    }
  }
  ContextWithWorkers(const ContextWithWorkers&) = delete;
  ContextWithWorkers& operator=(const ContextWithWorkers&) = delete;

  ProxyContext& context() { return context_; }
  Worker& worker(size_t i) { return *workers_[i]; }
  // Shard `shard`'s primary counters in worker `w` (only while that worker has not started).
  ShardStats& shard(size_t w, size_t shard) { return workers_[w]->stats().shards[shard]; }
  void startWorker(size_t i) {
    workers_[i]->useTimers(std::make_unique<fakes::FakeTimers>());
    workers_[i]->startThread();
    started_.push_back(i);
  }

 private:
  fakes::FakeControlPlane control_;
  ProxyContext context_;
  std::vector<std::unique_ptr<Worker>> workers_;
  std::vector<size_t> started_;
};

}  // namespace sp::net::testing
