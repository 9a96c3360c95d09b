// ProxyWithWorkers: a net::ProxyContext as main leaves it for the control plane (INFO, the
// metrics scrape, reload): a config and topology published, a fake control plane installed, and
// real workers running (no listener, no health PINGs). The tests write the workers' counters
// directly; the workers touch none of those they read while no client connects.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "config/config.h"
#include "fakes/fake_control_plane.h"
#include "fakes/worker_harness.h"
#include "net/proxy_context.h"
#include "net/worker.h"
#include "route/topology.h"
#include "session/worker_clients.h"

namespace sp::control::testing {

class ProxyWithWorkers {
 public:
  // `shards`: the topology, split evenly; `tune` may change the config before it is published.
  explicit ProxyWithWorkers(std::vector<route::ShardAddress> shards, size_t workers = 0,
                            const std::function<void(config::Config&)>& tune = {}) {
    const route::TopologyPtr topology = route::Topology::evenSplit(std::move(shards));
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
      workers_.push_back(std::make_unique<net::Worker>(static_cast<int>(i), context_,
                                                       std::vector<net::ListenSocket>(),
                                                       session::buildWorkerParts));
      context_.workers.push_back(workers_.back().get());
    }
    for (auto& w : workers_) {
      w->startThread();
    }
  }
  ~ProxyWithWorkers() {
    for (auto& w : workers_) {
      w->requestStop();
    }
    for (auto& w : workers_) {
      w->join();
    }
  }
  ProxyWithWorkers(const ProxyWithWorkers&) = delete;
  ProxyWithWorkers& operator=(const ProxyWithWorkers&) = delete;

  net::ProxyContext& context() { return context_; }
  net::WorkerStats& stats(size_t worker) { return workers_[worker]->stats(); }

 private:
  fakes::FakeControlPlane control_;
  net::ProxyContext context_;
  std::vector<std::unique_ptr<net::Worker>> workers_;
};

}  // namespace sp::control::testing
