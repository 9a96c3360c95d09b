// ProxyWithWorkers: a net::ProxyContext as main leaves it for the control plane (INFO, the
// metrics scrape, reload), with its workers running (fakes/context_with_workers.h). The tests
// write the workers' counters directly; the workers touch none of those they read while no
// client connects.
#pragma once

#include <cstddef>
#include <functional>
#include <utility>
#include <vector>

#include "config/config.h"
#include "fakes/context_with_workers.h"
#include "route/topology.h"

namespace sp::control::testing {

class ProxyWithWorkers : public fakes::ContextWithWorkers {
 public:
  explicit ProxyWithWorkers(std::vector<route::ShardAddress> shards, size_t workers = 0,
                            const std::function<void(config::Config&)>& tune = {})
      : ContextWithWorkers(std::move(shards), workers, tune) {
    startAll();
  }
};

}  // namespace sp::control::testing
