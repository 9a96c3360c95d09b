// ContextWithWorkers over three shards (s0, s1, s2 on 127.0.0.1 ports 1-3, which nothing is asked
// to reach) whose workers are built but not started, so the tests own their counters and
// heartbeats; startWorker runs one on fake timers, whose clock stands still, so its heartbeat
// stays where its loop started.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>

#include "config/config.h"
#include "fakes/context_with_workers.h"
#include "fakes/fake_timers.h"
#include "net/worker_stats.h"
#include "route/topology.h"

namespace sp::net::testing {

class ContextWithWorkers : public fakes::ContextWithWorkers {
 public:
  explicit ContextWithWorkers(size_t workers, const std::function<void(config::Config&)>& tune = {})
      : fakes::ContextWithWorkers(
            {route::ShardAddress("s0", "127.0.0.1", 1), route::ShardAddress("s1", "127.0.0.1", 2),
             route::ShardAddress("s2", "127.0.0.1", 3)},
            workers, tune) {}

  // Shard `shard`'s primary counters in worker `w` (only while that worker has not started).
  ShardStats& shard(size_t w, size_t shard) { return stats(w).shards[shard]; }
  void startWorker(size_t i) {
    fakes::ContextWithWorkers::startWorker(i, std::make_unique<fakes::FakeTimers>());
  }
};

}  // namespace sp::net::testing
