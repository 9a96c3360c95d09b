// MetricsServer: prometheus-cpp's Exposer (an embedded civetweb HTTP server) serving /metrics on
// metrics.listen. Scrapes run on the exposer's own threads and call the registered Collectable,
// which reads the workers' counters; nothing here touches a worker's loop.
#pragma once

#include <prometheus/collectable.h>

#include <cstdint>
#include <memory>
#include <string>

namespace prometheus {
class Exposer;
}

namespace sp::metrics {

class MetricsServer {
 public:
  MetricsServer();
  ~MetricsServer();
  MetricsServer(const MetricsServer&) = delete;
  MetricsServer& operator=(const MetricsServer&) = delete;

  // Binds `listen` ("host:port", "[v6]:port") and serves `collectable` on /metrics. False with
  // *error when the address cannot be bound.
  bool start(const std::string& listen, const std::shared_ptr<prometheus::Collectable>& collectable,
             std::string* error);
  void stop();  // before whatever the collectable reads goes away
  uint16_t port() const { return port_; }

 private:
  std::unique_ptr<prometheus::Exposer> exposer_;
  uint16_t port_ = 0;
};

}  // namespace sp::metrics
