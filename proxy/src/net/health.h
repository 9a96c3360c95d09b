// Health for load balancers and supervisors: liveness (/healthz: every worker's loop is turning)
// and readiness (/readyz: enough shards can be reached from every worker), each with a one-line
// reason and, when not healthy, a line per cause. Served on the metrics listener and by
// PROXY HEALTH; read from any thread (the workers' counters and heartbeats are atomics).
#pragma once

#include <cstdint>
#include <string>

namespace sp::net {

struct ProxyContext;

struct HealthStatus {
  bool ok = false;
  std::string text;  // "ok: ...\n" or "not ...: ...\n", then a line per cause
};

// A worker whose loop has not turned for this long (its once-a-second timer) is stuck.
inline constexpr uint64_t kWorkerStuckMs = 10000;

// Every worker's loop has turned within kWorkerStuckMs of `now_ms` (uv_hrtime's clock, in ms;
// by default the time now).
HealthStatus liveness(const ProxyContext& context, uint64_t now_ms);
HealthStatus liveness(const ProxyContext& context);
// At least metrics.ready_quorum percent of the shards (rounded up) have a connection up, and not
// ejected, in every worker.
HealthStatus readiness(const ProxyContext& context);

}  // namespace sp::net
