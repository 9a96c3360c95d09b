// Row summaries, metric lookup and the median and spread over repetitions.
#include "measurement.h"

namespace sp::bench {

RowSummary summarizeRow(const RowResult& row, std::string name) {
  RowSummary s;
  s.name = std::move(name);
  const CommandStats& st = row.stats;
  const LatencyHistogram& h = st.latency;
  s.has_hits = row.has_hits;
  s.ops = st.ops;
  s.hits = st.hits;
  s.misses = st.misses;
  s.errors = st.errors.total();
  s.qps = row.ops_per_sec;
  s.kb_per_sec = row.kb_per_sec;
  if (h.count() > 0) {
    s.avg_ns = h.mean();
    s.p50_ns = static_cast<double>(h.percentile(50));
    s.p90_ns = static_cast<double>(h.percentile(90));
    s.p99_ns = static_cast<double>(h.percentile(99));
    s.p999_ns = static_cast<double>(h.percentile(99.9));
    s.p9999_ns = static_cast<double>(h.percentile(99.99));
    s.max_ns = static_cast<double>(h.max());
  }
  return s;
}

std::string_view statusName(MeasureStatus status) {
  switch (status) {
    case MeasureStatus::kOk:
      return "ok";
    case MeasureStatus::kFailed:
      return "failed";
    case MeasureStatus::kSkipped:
      return "skipped";
    case MeasureStatus::kNotRun:
      return "not run";
  }
  return "not run";
}

const RowSummary* Measurement::row(std::string_view name) const {
  for (const auto& r : rows) {
    if (r.name == name) {
      return &r;
    }
  }
  return nullptr;
}

std::optional<double> metricValue(const Measurement& m, std::string_view row, Metric metric) {
  if (m.status != MeasureStatus::kOk) {
    return std::nullopt;
  }
  switch (metric) {
    case Metric::kConnectedClients:
      return m.connected_clients_peak;
    case Metric::kProxyRssMb:
      if (m.proxy_rss_kb_peak) {
        return *m.proxy_rss_kb_peak / 1024.0;
      }
      return std::nullopt;
    case Metric::kRssPerConnKb:
      if (m.proxy_rss_kb_peak && m.proxy_rss_kb_before && m.connections > 0) {
        return (*m.proxy_rss_kb_peak - *m.proxy_rss_kb_before) / static_cast<double>(m.connections);
      }
      return std::nullopt;
    case Metric::kShardMemoryMb:
      if (m.shard_memory_bytes) {
        return *m.shard_memory_bytes / 1048576.0;
      }
      return std::nullopt;
    default:
      break;
  }
  const RowSummary* r = m.row(row);
  if (r == nullptr) {
    return std::nullopt;
  }
  const bool timed = r->ops > 0;
  switch (metric) {
    case Metric::kQps:
      return r->qps;
    case Metric::kKbPerSec:
      return r->kb_per_sec;
    case Metric::kAvgMs:
      return timed ? std::optional<double>(r->avg_ns / 1e6) : std::nullopt;
    case Metric::kP50Ms:
      return timed ? std::optional<double>(r->p50_ns / 1e6) : std::nullopt;
    case Metric::kP90Ms:
      return timed ? std::optional<double>(r->p90_ns / 1e6) : std::nullopt;
    case Metric::kP99Ms:
      return timed ? std::optional<double>(r->p99_ns / 1e6) : std::nullopt;
    case Metric::kP999Ms:
      return timed ? std::optional<double>(r->p999_ns / 1e6) : std::nullopt;
    case Metric::kP9999Ms:
      return timed ? std::optional<double>(r->p9999_ns / 1e6) : std::nullopt;
    case Metric::kMaxMs:
      return timed ? std::optional<double>(r->max_ns / 1e6) : std::nullopt;
    case Metric::kAvgUs:
      return timed ? std::optional<double>(r->avg_ns / 1e3) : std::nullopt;
    case Metric::kP99Us:
      return timed ? std::optional<double>(r->p99_ns / 1e3) : std::nullopt;
    case Metric::kP9999Us:
      return timed ? std::optional<double>(r->p9999_ns / 1e3) : std::nullopt;
    case Metric::kHitRate:
      if (!r->has_hits || r->hits + r->misses == 0) {
        return std::nullopt;
      }
      return static_cast<double>(r->hits) / static_cast<double>(r->hits + r->misses);
    case Metric::kOps:
      return static_cast<double>(r->ops);
    case Metric::kErrors:
      return static_cast<double>(r->errors);
    default:
      return std::nullopt;
  }
}

std::optional<double> medianValue(const std::vector<const Measurement*>& reps, std::string_view row,
                                  Metric metric) {
  const auto s = spreadValue(reps, row, metric);
  return s ? std::optional<double>(s->median) : std::nullopt;
}

std::optional<Spread> spreadValue(const std::vector<const Measurement*>& reps, std::string_view row,
                                  Metric metric) {
  std::vector<double> values;
  for (const Measurement* m : reps) {
    if (auto v = metricValue(*m, row, metric)) {
      values.push_back(*v);
    }
  }
  return spreadOf(std::move(values));
}

}  // namespace sp::bench
