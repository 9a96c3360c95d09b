// ProxyContext: what every worker shares. The configuration and topology in force are immutable
// snapshots published by the main thread (at start-up and on reload) and read by INFO, admin
// commands and the metrics scrape; workers keep their own copies, handed over by their mailbox.
// The rest is fixed after start-up, or atomics touched only on accept/close or by rare events
// (never per request).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "config/config.h"
#include "metrics/latency_histogram.h"
#include "net/control_plane.h"
#include "net/info_counters.h"
#include "net/keyspace_cache.h"
#include "net/slow_log.h"
#include "net/worker_stats.h"
#include "route/topology.h"
#include "tls/tls_context.h"

namespace sp::net {

class Worker;

// One shard's counters summed over the workers.
struct ShardTotals {
#define SP_TOTAL_FIELD(field, storage, type, name, help, label, value) uint64_t field = 0;
  SP_SHARD_METRICS(SP_TOTAL_FIELD)
#undef SP_TOTAL_FIELD
  metrics::HistogramTotals duration;

  void add(const ShardStats& stats);
};

// A shard of the current topology with its counters: what INFO shards, PROXY SHARDS and the
// scrape report.
struct ShardSummary {
  route::ShardAddress address;
  std::string slots;  // "0-5460 9000", in slot order
  uint32_t slot_count = 0;
  ShardTotals primary;
  ShardTotals replica;                          // all of its replicas' connections
  uint64_t connections_configured = 0;          // workers x backend.connections
  uint64_t replica_connections_configured = 0;  // workers x replicas
  std::vector<std::string> worker_states;       // per worker: "up", "down" or "ejected"

  // "up" (every primary connection up), "down" (none) or "partial".
  std::string state() const;
};

// Config reloads, written by the main thread, read by the scrape and INFO.
struct ReloadStats {
  std::atomic<uint64_t> succeeded{0};
  std::atomic<uint64_t> failed{0};
  std::atomic<uint64_t> last_success_unix{0};
  std::atomic<bool> last_ok{true};
};

struct ProxyContext {
  // Main thread: the configuration and topology in force from now on.
  void publish(std::shared_ptr<const config::Config> config, route::TopologyPtr topology);
  std::shared_ptr<const config::Config> config() const;
  route::TopologyPtr topology() const;
  // Main thread: the TLS contexts in force from now on (nullptr: that side is plain). Built from
  // the config at start-up and again on every reload, so renewed certificates are read from disk;
  // a connection takes the pointer when it starts and keeps it.
  void publishTls(std::shared_ptr<const tls::TlsContext> server,
                  std::shared_ptr<const tls::TlsContext> backend);
  std::shared_ptr<const tls::TlsContext> serverTls() const;   // the client-facing listener's
  std::shared_ptr<const tls::TlsContext> backendTls() const;  // shards, Cluster nodes, Sentinels

  std::vector<Worker*> workers;  // fixed once the workers start
  uint64_t start_time_unix = 0;
  uint16_t bound_port = 0;                // listen.port as bound (0: no plain TCP listener)
  uint16_t bound_tls_port = 0;            // tls.listen's port as bound (0: none)
  std::atomic<uint16_t> metrics_port{0};  // 0: no metrics endpoint; set once workers run
  std::string config_file;                // --config, "" when run from flags alone
  std::atomic<uint64_t> next_client_id{1};
  std::atomic<uint64_t> clients_open{0};
  // limits.max_clients as the open-files limit allows it (net/fd_budget.h), set by main at
  // start-up and on reload; the workers refuse clients past it.
  std::atomic<uint32_t> max_clients{UINT32_MAX};
  mutable SlowLogIds slowlog_ids;  // PROXY SLOWLOG GET numbers new entries (net/slow_log.h)
  ReloadStats reloads;
  // Reload, the topology watcher and INFO's text: set by main (control::ProxyControl) before the
  // workers start, and never null while they run.
  ControlPlane* control = nullptr;
  KeyspaceCache keyspace;          // refreshed by control's KeyspacePoller thread
  mutable RateSampler info_rates;  // INFO stats' instantaneous_* (control/info_report.h)
  InfoBaseline info_baseline;      // CONFIG RESETSTAT (control/info_report.h)

  // Every shard of the current topology, summed over the workers.
  std::vector<ShardSummary> shardSummaries() const;

 private:
  mutable std::mutex mu_;
  std::shared_ptr<const config::Config> config_;
  route::TopologyPtr topology_;
  std::shared_ptr<const tls::TlsContext> server_tls_;
  std::shared_ptr<const tls::TlsContext> backend_tls_;
};

}  // namespace sp::net
