// Metric: the numbers a scenario table can show for a report row (QPS, latency percentiles, hit
// rate, ...) or for a whole point (the proxy's RSS, INFO connected_clients, the shards' memory),
// with the names scenario files use for them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace sp::bench {

enum class Metric : uint8_t {
  kQps,
  kKbPerSec,
  kAvgMs,
  kP50Ms,
  kP90Ms,
  kP99Ms,
  kP999Ms,
  kP9999Ms,
  kMaxMs,
  kAvgUs,
  kP99Us,
  kP9999Us,
  kHitRate,
  kOps,
  kErrors,
  // Per point (the row is ignored):
  kConnectedClients,  // peak connected_clients in the target's INFO during the run
  kProxyRssMb,        // peak VmRSS of the local proxy during the run
  kRssPerConnKb,      // (peak RSS - RSS before the run) / client connections
  kShardMemoryMb,     // sum of the local shards' used_memory after the run
};

struct MetricInfo {
  Metric metric;
  std::string_view name;   // as written in scenario files
  std::string_view title;  // for axes: "requests/s", "p99 latency (ms)"
  int decimals;
  bool per_point;
};

const MetricInfo& metricInfo(Metric metric);
std::optional<Metric> parseMetric(std::string_view name);
std::string metricNames();  // "qps, kb_per_sec, ..." for error messages

}  // namespace sp::bench
