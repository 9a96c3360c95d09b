// The metric table.
#include "metric.h"

#include <array>

namespace sp::bench {
namespace {

constexpr std::array<MetricInfo, 19> kMetrics = {{
    {Metric::kQps, "qps", "requests/s", 0, false},
    {Metric::kKbPerSec, "kb_per_sec", "KB/s", 0, false},
    {Metric::kAvgMs, "avg_ms", "avg latency (ms)", 3, false},
    {Metric::kP50Ms, "p50_ms", "p50 latency (ms)", 3, false},
    {Metric::kP90Ms, "p90_ms", "p90 latency (ms)", 3, false},
    {Metric::kP99Ms, "p99_ms", "p99 latency (ms)", 3, false},
    {Metric::kP999Ms, "p999_ms", "p99.9 latency (ms)", 3, false},
    {Metric::kP9999Ms, "p9999_ms", "p99.99 latency (ms)", 3, false},
    {Metric::kMaxMs, "max_ms", "max latency (ms)", 3, false},
    {Metric::kAvgUs, "avg_us", "avg latency (µs)", 0, false},
    {Metric::kP99Us, "p99_us", "p99 latency (µs)", 0, false},
    {Metric::kP9999Us, "p9999_us", "p99.99 latency (µs)", 0, false},
    {Metric::kHitRate, "hit_rate", "hit rate", 3, false},
    {Metric::kOps, "ops", "requests", 0, false},
    {Metric::kErrors, "errors", "errors", 0, false},
    {Metric::kConnectedClients, "connected_clients", "connected clients", 0, true},
    {Metric::kProxyRssMb, "proxy_rss_mb", "proxy RSS (MB)", 1, true},
    {Metric::kRssPerConnKb, "rss_per_conn_kb", "proxy RSS per connection (KB)", 2, true},
    {Metric::kShardMemoryMb, "shard_memory_mb", "shard used_memory (MB)", 1, true},
}};

}  // namespace

const MetricInfo& metricInfo(Metric metric) {
  for (const auto& m : kMetrics) {
    if (m.metric == metric) {
      return m;
    }
  }
  return kMetrics[0];
}

std::optional<Metric> parseMetric(std::string_view name) {
  for (const auto& m : kMetrics) {
    if (m.name == name) {
      return m.metric;
    }
  }
  return std::nullopt;
}

std::string metricNames() {
  std::string out;
  for (const auto& m : kMetrics) {
    if (!out.empty()) {
      out += ", ";
    }
    out += m.name;
  }
  return out;
}

}  // namespace sp::bench
