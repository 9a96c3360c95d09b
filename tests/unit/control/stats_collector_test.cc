// StatsCollector: the Prometheus families of one scrape, built from the catalogue rows of
// net/worker_stats.h summed over the workers (rows sharing a name in one family, INFO-only rows
// left out), the per-shard families by role, the keyspace gauge of the shards that answered, the
// reload and build families; and nothing once detached.
#include "control/stats_collector.h"

#include <gtest/gtest.h>
#include <prometheus/metric_family.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "fakes/scripted_shard.h"
#include "net/keyspace_cache.h"
#include "net/proxy_context.h"
#include "net/worker_stats.h"
#include "resp/errors.h"
#include "unit/control/proxy_with_workers.h"

namespace sp::control {
namespace {

using testing::ProxyWithWorkers;
using Labels = std::map<std::string, std::string>;

// Privileged ports that nothing listens on: the workers' shard connections are refused.
const route::ShardAddress kS0("s0", "127.0.0.1", 1);
const route::ShardAddress kS1("s1", "127.0.0.1", 2);

// Refused connections are never ejected: the connection gauges stay where the test expects.
void neverEject(config::Config& c) { c.backend_failure_limit = 1000000; }

class Scrape {
 public:
  explicit Scrape(const StatsCollector& collector) : families_(collector.Collect()) {}

  // The family `name`; fails the test (and returns an empty one) when there is none or several.
  const prometheus::MetricFamily& family(const std::string& name) const {
    static const prometheus::MetricFamily kNone;
    const auto n = std::count_if(families_.begin(), families_.end(),
                                 [&](const prometheus::MetricFamily& f) { return f.name == name; });
    EXPECT_EQ(n, 1) << name;
    for (const prometheus::MetricFamily& f : families_) {
      if (f.name == name) {
        return f;
      }
    }
    return kNone;
  }
  // The value of the sample of `name` with exactly `labels` (-1 when there is none).
  double value(const std::string& name, const Labels& labels = {}) const {
    const prometheus::MetricFamily& f = family(name);
    for (const prometheus::ClientMetric& m : f.metric) {
      Labels have;
      for (const auto& l : m.label) {
        have[l.name] = l.value;
      }
      if (have == labels) {
        return f.type == prometheus::MetricType::Counter ? m.counter.value : m.gauge.value;
      }
    }
    ADD_FAILURE() << name << ": no sample with these labels";
    return -1;
  }
  const std::vector<prometheus::MetricFamily>& families() const { return families_; }

 private:
  std::vector<prometheus::MetricFamily> families_;
};

TEST(StatsCollectorTest, ADetachedCollectorScrapesNothing) {
  ProxyWithWorkers proxy({kS0});
  StatsCollector collector(proxy.context());
  EXPECT_FALSE(collector.Collect().empty());
  collector.detach();
  EXPECT_TRUE(collector.Collect().empty());
}

TEST(StatsCollectorTest, WorkerCountersAreSummedOverTheWorkers) {
  ProxyWithWorkers proxy({kS0}, 2);
  proxy.stats(0).connections_accepted.add(2);
  proxy.stats(1).connections_accepted.add(3);
  proxy.stats(1).connections_open.add(4);
  proxy.stats(0).bytes_in.add(100);
  proxy.stats(1).bytes_in.add(20);
  const Scrape scrape{StatsCollector(proxy.context())};
  EXPECT_EQ(scrape.value("shardproxy_client_connections_accepted_total"), 5);
  EXPECT_EQ(scrape.value("shardproxy_client_connections"), 4);
  if (metrics::kMetricsEnabled) {
    EXPECT_EQ(scrape.value("shardproxy_client_received_bytes_total"), 120);
  }
  EXPECT_EQ(scrape.family("shardproxy_client_connections_accepted_total").type,
            prometheus::MetricType::Counter);
  EXPECT_EQ(scrape.family("shardproxy_client_connections").type, prometheus::MetricType::Gauge);
}

TEST(StatsCollectorTest, InfoOnlyCatalogueRowsAreNotExported) {
  ProxyWithWorkers proxy({kS0}, 1);
  const Scrape scrape{StatsCollector(proxy.context())};
  for (const prometheus::MetricFamily& f : scrape.families()) {
    EXPECT_FALSE(f.name.empty());
    EXPECT_TRUE(f.name.starts_with("shardproxy_") || f.name.starts_with("process_")) << f.name;
  }
}

TEST(StatsCollectorTest, RequestsHaveASampleForEveryClassAndResult) {
  ProxyWithWorkers proxy({kS0}, 2);
  proxy.stats(0).countRequest(net::CommandClass::kRead, net::RequestResult::kOk);
  proxy.stats(1).countRequest(net::CommandClass::kRead, net::RequestResult::kOk);
  proxy.stats(1).countRequest(net::CommandClass::kWrite, net::RequestResult::kUnavailable);
  const Scrape scrape{StatsCollector(proxy.context())};
  EXPECT_EQ(scrape.family("shardproxy_requests_total").metric.size(),
            net::kCommandClasses * net::kRequestResults);
  if (metrics::kMetricsEnabled) {
    EXPECT_EQ(scrape.value("shardproxy_requests_total", {{"class", "read"}, {"result", "ok"}}), 2);
    EXPECT_EQ(
        scrape.value("shardproxy_requests_total", {{"class", "write"}, {"result", "unavailable"}}),
        1);
  }
  EXPECT_EQ(scrape.value("shardproxy_requests_total", {{"class", "admin"}, {"result", "refused"}}),
            0);
  EXPECT_EQ(scrape.family("shardproxy_request_duration_seconds").metric.size(),
            net::kCommandClasses);
}

TEST(StatsCollectorTest, ClosedConnectionsHaveASampleForEveryReason) {
  ProxyWithWorkers proxy({kS0}, 2);
  proxy.stats(0).countClose(net::CloseReason::kIdleTimeout);
  proxy.stats(1).countClose(net::CloseReason::kIdleTimeout);
  const Scrape scrape{StatsCollector(proxy.context())};
  EXPECT_EQ(scrape.family("shardproxy_client_connections_closed_total").metric.size(),
            net::kCloseReasons);
  EXPECT_EQ(
      scrape.value("shardproxy_client_connections_closed_total", {{"reason", "idle_timeout"}}), 2);
  EXPECT_EQ(scrape.value("shardproxy_client_connections_closed_total", {{"reason", "tls_error"}}),
            0);
}

TEST(StatsCollectorTest, TheProxysOwnErrorsHaveASampleForEveryKindButNone) {
  ProxyWithWorkers proxy({kS0}, 2);
  proxy.stats(0).countProxyError(resp::err::ProxyError::kCrossSlot);
  proxy.stats(1).countProxyError(resp::err::ProxyError::kCrossSlot);
  proxy.stats(1).countProxyError(resp::err::ProxyError::kShardUnavailable);
  proxy.stats(1).countProxyError(resp::err::ProxyError::kNone);  // not the proxy's: not counted
  const Scrape scrape{StatsCollector(proxy.context())};
  EXPECT_EQ(scrape.family("shardproxy_proxy_errors_total").metric.size(),
            resp::err::kProxyErrors - 1);
  EXPECT_EQ(scrape.value("shardproxy_proxy_errors_total", {{"error", "cross_slot"}}), 2);
  EXPECT_EQ(scrape.value("shardproxy_proxy_errors_total", {{"error", "shard_unavailable"}}), 1);
  EXPECT_EQ(scrape.value("shardproxy_proxy_errors_total", {{"error", "no_reply"}}), 0);
  EXPECT_EQ(scrape.family("shardproxy_proxy_errors_total").type, prometheus::MetricType::Counter);
}

TEST(StatsCollectorTest, AnUnexpectedReplyIsABackendProtocolErrorOnly) {
  ProxyWithWorkers proxy({kS0}, 1);
  proxy.stats(0).protocol_errors_backend.add();
  const Scrape scrape{StatsCollector(proxy.context())};
  size_t client = 0;
  size_t backend = 0;
  for (const auto& m : scrape.family("shardproxy_protocol_errors_total").metric) {
    const bool is_client = std::any_of(m.label.begin(), m.label.end(), [](const auto& l) {
      return l.name == "side" && l.value == "client";
    });
    (is_client ? client : backend) += 1;
  }
  EXPECT_EQ(client, net::kParseErrors - 1);
  EXPECT_EQ(backend, net::kParseErrors);
  EXPECT_EQ(scrape.value("shardproxy_protocol_errors_total",
                         {{"side", "backend"}, {"reason", "unexpected_reply"}}),
            1);
}

TEST(StatsCollectorTest, ShardFamiliesHaveAPrimarySampleAndAReplicaOneOnlyWithReplicas) {
  route::ShardAddress with_replica = kS1;
  with_replica.replicas = {route::ShardAddress("", "127.0.0.1", 3)};
  ProxyWithWorkers proxy({kS0, with_replica}, 1, neverEject);
  const Scrape scrape{StatsCollector(proxy.context())};
  EXPECT_EQ(scrape.family("shardproxy_backend_requests_total").metric.size(), 3u);
  EXPECT_EQ(
      scrape.value("shardproxy_backend_requests_total", {{"shard", "s1"}, {"role", "replica"}}), 0);
  // Rows that share a name are one family, told apart by their label.
  EXPECT_EQ(scrape.family("shardproxy_backend_errors_total").metric.size(), 6u);
  EXPECT_EQ(scrape.value("shardproxy_backend_errors_total",
                         {{"shard", "s0"}, {"role", "primary"}, {"kind", "reply"}}),
            0);
  EXPECT_EQ(scrape.family("shardproxy_backend_errors_total").help,
            "Backend failures by kind: connection (a request failed because its connection "
            "failed), reply (the shard answered an error reply)");
  EXPECT_EQ(scrape.value("shardproxy_shards"), 2);
}

TEST(StatsCollectorTest, ConnectionsNeitherUpNorEjectedAreCountedDown) {
  ProxyWithWorkers proxy({kS0}, 2, [](config::Config& c) {
    neverEject(c);
    c.backend_connections = 3;
  });
  const Scrape scrape{StatsCollector(proxy.context())};
  const Labels s0 = {{"shard", "s0"}, {"role", "primary"}};
  auto state = [&](const std::string& value) {
    Labels labels = s0;
    labels["state"] = value;
    return scrape.value("shardproxy_backend_connections", labels);
  };
  EXPECT_EQ(state("up"), 0);
  EXPECT_EQ(state("ejected"), 0);
  EXPECT_EQ(state("down"), 6);  // 2 workers x 3 connections
  EXPECT_EQ(scrape.value("shardproxy_backend_up", s0), 0);
}

TEST(StatsCollectorTest, ConnectionsUpAreNotCountedDown) {
  fakes::ScriptedShard shard(
      [](const fakes::ScriptedShard::Argv&) { return fakes::ScriptedShard::reply("+OK\r\n"); });
  ProxyWithWorkers proxy({route::ShardAddress("s0", "127.0.0.1", shard.port())}, 2,
                         [](config::Config& c) { c.backend_connections = 3; });
  const Labels up = {{"shard", "s0"}, {"role", "primary"}, {"state", "up"}};
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (Scrape(StatsCollector(proxy.context())).value("shardproxy_backend_connections", up) < 6 &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  const Scrape scrape{StatsCollector(proxy.context())};
  EXPECT_EQ(scrape.value("shardproxy_backend_connections", up), 6);
  EXPECT_EQ(scrape.value("shardproxy_backend_connections",
                         {{"shard", "s0"}, {"role", "primary"}, {"state", "down"}}),
            0);
  EXPECT_EQ(scrape.value("shardproxy_backend_up", {{"shard", "s0"}, {"role", "primary"}}), 1);
}

TEST(StatsCollectorTest, TheKeysGaugeHasTheShardsThatAnsweredTheLastPoll) {
  ProxyWithWorkers proxy({kS0, kS1});
  net::ShardKeyspace answered;
  answered.shard = "s0";
  answered.ok = true;
  answered.dbs = net::parseKeyspace("db0:keys=5,expires=0,avg_ttl=0\r\ndb3:keys=2,expires=0\r\n");
  net::ShardKeyspace silent;
  silent.shard = "s1";
  proxy.context().keyspace.store({answered, silent}, 1);
  const Scrape scrape{StatsCollector(proxy.context())};
  EXPECT_EQ(scrape.family("shardproxy_backend_keys").metric.size(), 1u);
  EXPECT_EQ(scrape.value("shardproxy_backend_keys", {{"shard", "s0"}}), 7);
}

TEST(StatsCollectorTest, ReloadsByResultAndTheLastSuccess) {
  ProxyWithWorkers proxy({kS0});
  proxy.context().start_time_unix = 1700000000;
  proxy.context().reloads.succeeded = 2;
  proxy.context().reloads.failed = 1;
  proxy.context().reloads.last_ok = false;
  Scrape scrape{StatsCollector(proxy.context())};
  EXPECT_EQ(scrape.value("shardproxy_config_reloads_total", {{"result", "success"}}), 2);
  EXPECT_EQ(scrape.value("shardproxy_config_reloads_total", {{"result", "failure"}}), 1);
  EXPECT_EQ(scrape.value("shardproxy_config_last_reload_successful"), 0);
  // No reload has succeeded yet: the configuration was last loaded at start-up.
  EXPECT_EQ(scrape.value("shardproxy_config_last_reload_success_timestamp_seconds"), 1700000000);

  proxy.context().reloads.last_ok = true;
  proxy.context().reloads.last_success_unix = 1700000600;
  scrape = Scrape{StatsCollector(proxy.context())};
  EXPECT_EQ(scrape.value("shardproxy_config_last_reload_successful"), 1);
  EXPECT_EQ(scrape.value("shardproxy_config_last_reload_success_timestamp_seconds"), 1700000600);
}

TEST(StatsCollectorTest, BuildInfoAndWorkers) {
  ProxyWithWorkers proxy({kS0}, 2);
  const Scrape scrape{StatsCollector(proxy.context())};
  EXPECT_EQ(
      scrape.value("shardproxy_build_info", {{"version", SHARDPROXY_VERSION},
                                             {"metrics", metrics::kMetricsEnabled ? "on" : "off"}}),
      1);
  EXPECT_EQ(scrape.value("shardproxy_workers"), 2);
}

}  // namespace
}  // namespace sp::control
