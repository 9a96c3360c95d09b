// Each shard's INFO (the default sections: memory, persistence, stats, keyspace, ...), polled every
// couple of seconds by a background thread of the proxy (BlockingClient, short timeouts) into the
// net::KeyspaceCache, so INFO never waits on a shard and the workers' pipelines carry no extra
// commands. The proxy's INFO aggregates the cached fields (control/info_report.cc: memory,
// persistence, the shards' stats and keyspace) by the rules below, and the
// shardproxy_backend_keys gauge reads the keyspace. The figures are as old as the last poll.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "net/keyspace_cache.h"
#include "route/topology.h"
#include "tls/tls_context.h"

namespace sp::control {

// The shards' INFO combined, field by field, over the shards that answered the last poll (the
// rule of each field: kShardRules in keyspace_poller.cc; docs/operations.md, INFO). Sums for
// counters and sizes, the largest for peaks of a moment, durations and flags, the oldest
// rdb_last_save_time, "err" when any shard's *_status is not ok, the first shard's for settings
// and names; *_human and the ratios recomputed from the totals.
// combinedSection: every field of `section` ("memory"), as "key:value\r\n" lines.
std::string combinedSection(const std::vector<net::ShardKeyspace>& shards,
                            std::string_view section);
// combinedField: one field ("0" when no shard has it).
std::string combinedField(const std::vector<net::ShardKeyspace>& shards, std::string_view key);
// redis-server's bytesToHuman: "512B", "1.50K", "3.30M", ...
std::string bytesToHuman(uint64_t n);

class KeyspacePoller {
 public:
  // `topology` returns the shards to poll (the current topology) each round, and `tls` the client
  // TLS context for their TCP addresses (nullptr, or no function: plain); a Unix-socket shard is
  // always polled plain, as redis-server speaks TLS only on its tls-port.
  KeyspacePoller(net::KeyspaceCache& cache, std::function<route::TopologyPtr()> topology,
                 std::chrono::milliseconds interval,
                 std::function<std::shared_ptr<const tls::TlsContext>()> tls = nullptr);
  ~KeyspacePoller();
  KeyspacePoller(const KeyspacePoller&) = delete;
  KeyspacePoller& operator=(const KeyspacePoller&) = delete;

  void start();
  void stop();  // wakes the thread and joins it

 private:
  void run();
  void pollOnce();

  net::KeyspaceCache& cache_;
  std::function<route::TopologyPtr()> topology_;
  std::chrono::milliseconds interval_;
  std::function<std::shared_ptr<const tls::TlsContext>()> tls_;
  std::mutex mu_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace sp::control
