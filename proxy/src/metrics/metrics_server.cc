// MetricsServer: civetweb set-up and the handlers. civetweb reports a failed bind by throwing,
// caught here.
#include "metrics/metrics_server.h"

#include <CivetServer.h>
#include <prometheus/text_serializer.h>

#include <exception>
#include <string_view>
#include <vector>

namespace sp::metrics {
namespace {

const char* reason(int status) {
  switch (status) {
    case 200:
      return "OK";
    case 503:
      return "Service Unavailable";
    default:
      return "Error";
  }
}

// One page: the function's answer, as text/plain, never cached.
class PageHandler : public CivetHandler {
 public:
  explicit PageHandler(std::function<Page()> fn) : fn_(std::move(fn)) {}

  bool handleGet(CivetServer*, mg_connection* conn) override { return answer(conn, true); }
  bool handleHead(CivetServer*, mg_connection* conn) override { return answer(conn, false); }

 private:
  bool answer(mg_connection* conn, bool with_body) {
    const Page page = fn_();
    mg_printf(conn,
              "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
              "Cache-Control: no-cache, no-store\r\nConnection: close\r\n\r\n",
              page.status, reason(page.status), contentType(), page.body.size());
    if (with_body) {
      mg_write(conn, page.body.data(), page.body.size());
    }
    return true;
  }

 protected:
  virtual const char* contentType() const { return "text/plain; charset=utf-8"; }

 private:
  std::function<Page()> fn_;
};

// /metrics: the collectable in Prometheus' text exposition format 0.0.4.
class MetricsHandler : public PageHandler {
 public:
  explicit MetricsHandler(std::shared_ptr<prometheus::Collectable> collectable)
      : PageHandler([collectable] {
          return Page{200, prometheus::TextSerializer().Serialize(collectable->Collect())};
        }) {}

 protected:
  const char* contentType() const override { return "text/plain; version=0.0.4; charset=utf-8"; }
};

}  // namespace

MetricsServer::MetricsServer() = default;

MetricsServer::~MetricsServer() { stop(); }

void MetricsServer::addPage(const std::string& uri, std::function<Page()> fn) {
  pages_[uri] = std::move(fn);
}

Status MetricsServer::start(const std::string& listen,
                            const std::shared_ptr<prometheus::Collectable>& collectable) {
  // Two threads: a Prometheus server and an operator's curl (or a load balancer's health check)
  // can be served at the same time.
  const std::vector<std::string> options = {"listening_ports", listen, "num_threads", "2"};
  std::vector<const char*> argv;
  for (const std::string& o : options) {
    argv.push_back(o.c_str());
  }
  argv.push_back(nullptr);
  try {
    server_ = std::make_unique<CivetServer>(argv.data());
  } catch (const std::exception&) {
    server_.reset();
    return Status::failure(
        "metrics.listen " + listen +
        ": cannot listen there (the address is in use, perhaps by another shardproxy, or is "
        "not one of this host's); choose another with metrics.listen or --metrics-listen "
        "HOST:PORT, or turn the endpoint off with --metrics-listen off");
  }
  handlers_["/metrics"] = std::make_unique<MetricsHandler>(collectable);
  for (const auto& [uri, fn] : pages_) {
    handlers_[uri] = std::make_unique<PageHandler>(fn);
  }
  for (const auto& [uri, handler] : handlers_) {
    // civetweb matches a prefix unless the URI ends with '$'.
    server_->addHandler(uri + "$", handler.get());
  }
  const std::vector<int> ports = server_->getListeningPorts();
  port_ = ports.empty() ? 0 : static_cast<uint16_t>(ports.front());
  return Status();
}

void MetricsServer::stop() {
  if (server_) {
    server_->close();  // waits for the requests being served
    server_.reset();
  }
  handlers_.clear();
  port_ = 0;
}

}  // namespace sp::metrics
