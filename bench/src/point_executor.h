// executePoint: runs one planned point (its runs concurrently, each a full shardbench run in this
// process) against one target and returns the Measurement. While the runs go, a monitor thread
// samples the local proxy's VmRSS and the target's INFO connected_clients every 100 ms; after
// them it reads the shards' used_memory. A target process that died before or during the run
// makes the measurement fail with its exit status and log tail.
#pragma once

#include "measurement.h"
#include "scenario_plan.h"
#include "target.h"

namespace sp::bench {

struct ExecuteOptions {
  bool proxy_rss = false;
  bool info_clients = false;
  bool shard_memory = false;
};

Measurement executePoint(const PlannedPoint& point, const Target& target, int rep,
                         const ExecuteOptions& options);

// Sum of used_memory over the servers' INFO memory; nullopt when one does not answer.
std::optional<double> usedMemoryBytes(const std::vector<Endpoint>& servers);

}  // namespace sp::bench
