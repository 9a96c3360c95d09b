// MetricsServer: an embedded civetweb HTTP server on metrics.listen serving /metrics (the
// registered Collectable in Prometheus' text format) and plain-text pages such as /healthz and
// /readyz. Requests run on the server's own threads and call the page functions, which read the
// workers' counters; nothing here touches a worker's loop.
#pragma once

#include <prometheus/collectable.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "core/status.h"

class CivetServer;
class CivetHandler;

namespace sp::metrics {

// What a page function answers: an HTTP status (200, 503, ...) and a text/plain body.
struct Page {
  int status = 200;
  std::string body;
};

class MetricsServer {
 public:
  MetricsServer();
  ~MetricsServer();
  MetricsServer(const MetricsServer&) = delete;
  MetricsServer& operator=(const MetricsServer&) = delete;

  // A page served from start() on: `uri` ("/healthz") answers GET and HEAD with fn's result.
  // Call before start().
  void addPage(const std::string& uri, std::function<Page()> fn);

  // Binds `listen` ("host:port", "[v6]:port") and serves `collectable` on /metrics and the
  // pages. The failure says which address, and how to choose another, when it cannot bind.
  Status start(const std::string& listen,
               const std::shared_ptr<prometheus::Collectable>& collectable);
  void stop();  // before whatever the collectable and the pages read goes away
  uint16_t port() const { return port_; }

 private:
  std::map<std::string, std::function<Page()>> pages_;
  std::map<std::string, std::unique_ptr<CivetHandler>> handlers_;  // uri -> handler, while serving
  std::unique_ptr<CivetServer> server_;
  uint16_t port_ = 0;
};

}  // namespace sp::metrics
