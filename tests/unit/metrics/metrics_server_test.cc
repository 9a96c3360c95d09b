// Tests MetricsServer: serves a Collectable on /metrics and plain-text pages with their status
// over real loopback HTTP, and reports an address it cannot bind as an error instead of throwing.
#include "metrics/metrics_server.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <string>
#include <vector>

#include "metrics/family_set.h"

namespace sp::metrics {
namespace {

class OneGauge : public prometheus::Collectable {
 public:
  std::vector<prometheus::MetricFamily> Collect() const override {
    FamilySet set;
    set.add("shardproxy_test_value", "A value for the test", Type::kGauge, {}, 42);
    return set.take();
  }
};

// GET path from 127.0.0.1:port; the whole response (headers and body).
std::string httpGet(uint16_t port, const std::string& path) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    close(fd);
    return "";
  }
  const std::string request = "GET " + path + " HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n";
  if (write(fd, request.data(), request.size()) != static_cast<ssize_t>(request.size())) {
    close(fd);
    return "";
  }
  std::string out;
  char buf[4096];
  ssize_t n = 0;
  while ((n = read(fd, buf, sizeof buf)) > 0) {
    out.append(buf, static_cast<size_t>(n));
  }
  close(fd);
  return out;
}

TEST(MetricsServerTest, ServesTheCollectableOnMetrics) {
  auto collectable = std::make_shared<OneGauge>();
  MetricsServer server;
  const Status started = server.start("127.0.0.1:0", collectable);
  ASSERT_TRUE(started.ok()) << started.message();
  ASSERT_NE(server.port(), 0);
  const std::string response = httpGet(server.port(), "/metrics");
  EXPECT_NE(response.find("200 OK"), std::string::npos) << response;
  EXPECT_NE(response.find("shardproxy_test_value 42"), std::string::npos) << response;
  EXPECT_NE(response.find("Content-Type: text/plain; version=0.0.4"), std::string::npos)
      << response;
  server.stop();
}

TEST(MetricsServerTest, ServesPagesWithTheirStatus) {
  MetricsServer server;
  std::atomic<int> calls{0};  // read here, written on the server's thread
  server.addPage("/healthz", [] { return Page{200, "ok: fine\n"}; });
  server.addPage("/readyz", [&calls] {
    ++calls;
    return Page{503, "not ready: shard down\n"};
  });
  const Status started = server.start("127.0.0.1:0", std::make_shared<OneGauge>());
  ASSERT_TRUE(started.ok()) << started.message();
  const std::string healthy = httpGet(server.port(), "/healthz");
  EXPECT_EQ(healthy.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << healthy;
  EXPECT_NE(healthy.find("\r\n\r\nok: fine\n"), std::string::npos) << healthy;
  const std::string unready = httpGet(server.port(), "/readyz");
  EXPECT_EQ(unready.rfind("HTTP/1.1 503 Service Unavailable\r\n", 0), 0u) << unready;
  EXPECT_NE(unready.find("Content-Length: 22\r\n"), std::string::npos) << unready;
  EXPECT_NE(unready.find("\r\n\r\nnot ready: shard down\n"), std::string::npos) << unready;
  EXPECT_EQ(calls.load(), 1);  // each request asks the page afresh, nothing is cached
  httpGet(server.port(), "/readyz");
  EXPECT_EQ(calls.load(), 2);
  // A page is its exact path, not a prefix.
  EXPECT_NE(httpGet(server.port(), "/readyz/x").find("404"), std::string::npos);
  EXPECT_NE(httpGet(server.port(), "/other").find("404"), std::string::npos);
  server.stop();
}

TEST(MetricsServerTest, AnAddressInUseIsAnError) {
  auto collectable = std::make_shared<OneGauge>();
  MetricsServer first;
  const Status started = first.start("127.0.0.1:0", collectable);
  ASSERT_TRUE(started.ok()) << started.message();
  MetricsServer second;
  const Status taken = second.start("127.0.0.1:" + std::to_string(first.port()), collectable);
  EXPECT_FALSE(taken.ok());
  EXPECT_NE(taken.message().find("metrics.listen 127.0.0.1:" + std::to_string(first.port())),
            std::string::npos)
      << taken.message();
  EXPECT_NE(taken.message().find("--metrics-listen"), std::string::npos)
      << taken.message();  // how to choose another
  EXPECT_EQ(second.port(), 0);
}

}  // namespace
}  // namespace sp::metrics
