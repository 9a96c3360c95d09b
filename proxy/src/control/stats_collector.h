// StatsCollector: the prometheus::Collectable behind /metrics. At scrape time (on the metrics
// server's thread) it sums every worker's plain counters and histograms, as declared once in
// net/worker_stats.h, and adds the process, build, reload and keyspace metrics. The request path
// never touches a prometheus-cpp object.
#pragma once

#include <prometheus/collectable.h>

#include <mutex>
#include <vector>

namespace sp::net {
struct ProxyContext;
}

namespace sp::control {

class StatsCollector : public prometheus::Collectable {
 public:
  explicit StatsCollector(const net::ProxyContext& context) : context_(&context) {}

  std::vector<prometheus::MetricFamily> Collect() const override;

  // Stops reading the context (before the workers go away): later scrapes get nothing.
  void detach();

 private:
  mutable std::mutex mu_;
  const net::ProxyContext* context_;  // guarded by mu_
};

}  // namespace sp::control
