// Sentinel and cluster topology sources.
#include "control/topology_source.h"

#include <chrono>

#include <spdlog/spdlog.h>

#include "config/topology_builder.h"
#include "net/proxy_context.h"
#include "net/publish.h"
#include "route/cluster_topology.h"

namespace sp::control {

using net::Published;
using net::updatePublished;

namespace {

std::vector<route::SentinelAddress> toAddresses(const std::vector<config::Endpoint>& endpoints) {
  std::vector<route::SentinelAddress> out;
  for (const auto& e : endpoints) {
    out.push_back({e.host, e.port});
  }
  return out;
}

}  // namespace

Status resolveTopology(config::Config* config, route::TopologyPtr* out,
                       const std::shared_ptr<const tls::TlsContext>& backend_tls) {
  if (config->cluster_mode) {
    return route::fetchClusterTopology(toAddresses(config->cluster_seeds), config->backend_username,
                                       config->backend_password, backend_tls, out);
  }
  if (!config->sentinel.addresses.empty()) {
    const auto sentinels = toAddresses(config->sentinel.addresses);
    for (auto& shard : config->shards) {
      const std::string master = config->sentinel.master_name_prefix + shard.name;
      if (Status primary = route::querySentinelPrimary(sentinels, config->sentinel.password, master,
                                                       backend_tls, &shard.host, &shard.port);
          !primary.ok()) {
        return primary;
      }
    }
  }
  *out = config::makeTopology(*config);
  return Status();
}

TopologyWatcher::TopologyWatcher(net::ProxyContext& context) : context_(context) {}

TopologyWatcher::~TopologyWatcher() { stop(); }

void TopologyWatcher::start() {
  const auto config = context_.config();
  if (config->cluster_mode) {
    cluster_thread_ = std::thread([this] { runCluster(); });
    return;
  }
  if (config->sentinel.addresses.empty()) {
    return;
  }
  std::vector<std::string> masters;
  for (const auto& shard : config->shards) {
    masters.push_back(config->sentinel.master_name_prefix + shard.name);
  }
  sentinel_ = std::make_unique<route::SentinelWatcher>(
      toAddresses(config->sentinel.addresses), config->sentinel.password, masters,
      [this] { return context_.backendTls(); },
      [this](const std::string& master, const std::string& host, uint16_t port) {
        onSwitchMaster(master, host, port);
      });
  sentinel_->start();
}

void TopologyWatcher::stop() {
  if (sentinel_) {
    sentinel_->stop();
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  if (cluster_thread_.joinable()) {
    cluster_thread_.join();
  }
}

void TopologyWatcher::requestRefresh() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (refresh_requested_) {
      return;
    }
    refresh_requested_ = true;
  }
  wake_.notify_all();
}

void TopologyWatcher::onSwitchMaster(const std::string& master, const std::string& host,
                                     uint16_t port) {
  updatePublished(context_, [&](Published& p) {
    auto fresh = std::make_shared<config::Config>(*p.config);
    bool changed = false;
    for (auto& shard : fresh->shards) {
      if (fresh->sentinel.master_name_prefix + shard.name == master &&
          (shard.host != host || shard.port != port)) {
        spdlog::info("sentinel: shard {} primary {}:{} -> {}:{}", shard.name, shard.host,
                     shard.port, host, port);
        shard.host = host;
        shard.port = port;
        changed = true;
      }
    }
    if (changed) {
      p.topology = config::makeTopology(*fresh);
      p.config = std::move(fresh);
    }
    return changed;
  });
}

void TopologyWatcher::runCluster() {
  // After a requested refresh (a MOVED, a failed node) the cluster may still be converging, e.g.
  // electing a replica: keep refreshing every kFastRefresh for a while, not every
  // cluster_refresh_ms.
  constexpr auto kFastRefresh = std::chrono::milliseconds(300);
  constexpr auto kFastPeriod = std::chrono::seconds(15);
  auto fast_until = std::chrono::steady_clock::now();
  for (;;) {
    const auto config = context_.config();
    {
      std::unique_lock<std::mutex> lock(mu_);
      const auto wait = std::chrono::steady_clock::now() < fast_until
                            ? kFastRefresh
                            : std::chrono::milliseconds(config->cluster_refresh_ms);
      wake_.wait_for(lock, wait, [this] { return stop_ || refresh_requested_; });
      if (stop_) {
        return;
      }
      if (refresh_requested_) {
        fast_until = std::chrono::steady_clock::now() + kFastPeriod;
      }
      refresh_requested_ = false;
    }
    const std::shared_ptr<const tls::TlsContext> tls = context_.backendTls();
    route::TopologyPtr fresh;
    if (!route::fetchClusterTopology(toAddresses(config->cluster_seeds), config->backend_username,
                                     config->backend_password, tls, &fresh)
             .ok()) {
      // Seeds may have failed over: also try the nodes we know.
      std::vector<route::SentinelAddress> known;
      for (const auto& shard : context_.topology()->shards()) {
        known.push_back({shard.host, shard.port});
        for (const auto& r : shard.replicas) {
          known.push_back({r.host, r.port});
        }
      }
      if (Status fetched = route::fetchClusterTopology(known, config->backend_username,
                                                       config->backend_password, tls, &fresh);
          !fetched.ok()) {
        spdlog::warn("cluster refresh failed: {}", fetched.message());
        continue;
      }
    }
    updatePublished(context_, [&](Published& p) {
      if (route::sameRouting(*fresh, *p.topology)) {
        return false;
      }
      spdlog::info("cluster topology changed: {} masters", fresh->shardCount());
      p.topology = fresh;  // with the configuration in force, not the one read before the fetch
      return true;
    });
    // Coalesce bursts of requests (many MOVED replies at once) into one refresh per few ms.
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

}  // namespace sp::control
