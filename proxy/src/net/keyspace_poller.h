// Each shard's INFO (the default sections: memory, persistence, stats, keyspace, ...), polled every
// couple of seconds by a background thread of the proxy (BlockingClient, short timeouts) and
// cached, so INFO never waits on a shard and the workers' pipelines carry no extra commands. The
// proxy's INFO aggregates the cached fields (net/proxy_context.cc: memory, persistence, the shards'
// stats and keyspace), and the shardproxy_backend_keys gauge reads the keyspace. The figures are as
// old as the last poll.
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

#include "route/topology.h"
#include "tls/tls_context.h"

namespace sp::net {

struct DbKeys {
  uint32_t db = 0;
  uint64_t keys = 0;
  uint64_t expires = 0;
  uint64_t avg_ttl = 0;
};

// One "key:value" line of an INFO reply, with the section it came under ("memory", ...).
struct InfoField {
  std::string section;  // lowercase, as "# Memory" names it
  std::string key;
  std::string value;
};

// "# Section" headers and "key:value" lines of an INFO reply, in order; other lines are ignored.
std::vector<InfoField> parseInfo(std::string_view info);

struct ShardKeyspace {
  std::string shard;  // its name
  bool ok = false;    // the last poll got an answer
  std::vector<DbKeys> dbs;
  std::vector<InfoField> info;  // every field of its INFO
  uint64_t keys() const;
  // The value of INFO field `key` ("" when absent); number(): as an unsigned integer.
  std::string_view field(std::string_view key) const;
  bool number(std::string_view key, uint64_t* out) const;
};

// The shards' INFO combined, field by field, over the shards that answered the last poll (the
// rule of each field: kShardRules in keyspace_poller.cc; docs/operations.md, INFO). Sums for
// counters and sizes, the largest for peaks of a moment, durations and flags, the oldest
// rdb_last_save_time, "err" when any shard's *_status is not ok, the first shard's for settings
// and names; *_human and the ratios recomputed from the totals.
// combinedSection: every field of `section` ("memory"), as "key:value\r\n" lines.
std::string combinedSection(const std::vector<ShardKeyspace>& shards, std::string_view section);
// combinedField: one field ("0" when no shard has it).
std::string combinedField(const std::vector<ShardKeyspace>& shards, std::string_view key);
// redis-server's bytesToHuman: "512B", "1.50K", "3.30M", ...
std::string bytesToHuman(uint64_t n);

// "db0:keys=3,expires=1,avg_ttl=100" lines of an INFO keyspace reply; other lines are ignored.
std::vector<DbKeys> parseKeyspace(std::string_view info);

class KeyspaceCache {
 public:
  void store(std::vector<ShardKeyspace> shards, uint64_t unix_time);
  std::vector<ShardKeyspace> snapshot() const;
  uint64_t refreshedAt() const;  // unix seconds of the last poll, 0 = none yet
  // The first shard's redis_version as last polled ("" before any shard has answered): the
  // version INFO and HELLO report, as the server the clients' commands run on.
  std::string serverVersion() const;
  // "dbN:keys=..,expires=..,avg_ttl=.." summed over the shards (avg_ttl weighted by expires),
  // CRLF-terminated, as INFO keyspace prints them.
  std::string infoLines() const;

 private:
  mutable std::mutex mu_;
  std::vector<ShardKeyspace> shards_;
  uint64_t refreshed_unix_ = 0;
};

class KeyspacePoller {
 public:
  // `topology` returns the shards to poll (the current topology) each round, and `tls` the client
  // TLS context for their TCP addresses (nullptr, or no function: plain); a Unix-socket shard is
  // always polled plain, as redis-server speaks TLS only on its tls-port.
  KeyspacePoller(KeyspaceCache& cache, std::function<route::TopologyPtr()> topology,
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

  KeyspaceCache& cache_;
  std::function<route::TopologyPtr()> topology_;
  std::chrono::milliseconds interval_;
  std::function<std::shared_ptr<const tls::TlsContext>()> tls_;
  std::mutex mu_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace sp::net
