// Where the shards' addresses come from when they are not all in the config file: Redis Sentinel
// (each shard's primary) or a Redis Cluster (CLUSTER SLOTS). Resolves them at start-up and on
// reload, and runs the background watcher that follows failovers and resharding, publishing each
// new topology to the workers exactly as a reload does. Control path only.
#pragma once

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "config/config.h"
#include "route/sentinel.h"
#include "route/topology.h"
#include "tls/tls_context.h"

namespace sp::net {
struct ProxyContext;
}

namespace sp::control {

// The topology for `config`: from the shards list (static), from Sentinel (each shard's primary
// is written into *config) or from the cluster's seeds. `backend_tls` is the client context for
// the sentinels and seeds, built from config->backend_tls_client when config->backend_tls (nullptr:
// plain). Fails when Sentinel or every seed fails to answer.
Status resolveTopology(config::Config* config, route::TopologyPtr* out,
                       const std::shared_ptr<const tls::TlsContext>& backend_tls = nullptr);

// Follows Sentinel's +switch-master, or refreshes CLUSTER SLOTS every cluster_refresh_ms and
// whenever requestRefresh() is called (a MOVED reply, a failed node connection).
class TopologyWatcher {
 public:
  explicit TopologyWatcher(net::ProxyContext& context);
  ~TopologyWatcher();
  TopologyWatcher(const TopologyWatcher&) = delete;
  TopologyWatcher& operator=(const TopologyWatcher&) = delete;

  void start();  // no-op in static mode without Sentinel
  void stop();
  void requestRefresh();  // any thread; cheap, coalesced

 private:
  void runCluster();
  void onSwitchMaster(const std::string& master, const std::string& host, uint16_t port);

  net::ProxyContext& context_;
  std::unique_ptr<route::SentinelWatcher> sentinel_;
  std::thread cluster_thread_;
  std::mutex mu_;
  std::condition_variable wake_;
  bool refresh_requested_ = false;  // guarded by mu_
  bool stop_ = false;               // guarded by mu_
};

}  // namespace sp::control
