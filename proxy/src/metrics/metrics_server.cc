// MetricsServer: Exposer set-up; civetweb reports a failed bind by throwing, caught here.
#include "metrics/metrics_server.h"

#include <prometheus/exposer.h>

#include <exception>
#include <vector>

namespace sp::metrics {

MetricsServer::MetricsServer() = default;

MetricsServer::~MetricsServer() { stop(); }

bool MetricsServer::start(const std::string& listen,
                          const std::shared_ptr<prometheus::Collectable>& collectable,
                          std::string* error) {
  try {
    // Two threads: a Prometheus server and an operator's curl can scrape at the same time.
    exposer_ = std::make_unique<prometheus::Exposer>(
        std::vector<std::string>{"listening_ports", listen, "num_threads", "2"});
    exposer_->RegisterCollectable(collectable, "/metrics");
    const std::vector<int> ports = exposer_->GetListeningPorts();
    port_ = ports.empty() ? 0 : static_cast<uint16_t>(ports.front());
    return true;
  } catch (const std::exception& e) {
    exposer_.reset();
    *error = "metrics.listen " + listen + ": cannot serve /metrics: " + e.what();
    return false;
  }
}

void MetricsServer::stop() { exposer_.reset(); }

}  // namespace sp::metrics
