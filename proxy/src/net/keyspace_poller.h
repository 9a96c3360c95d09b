// The INFO keyspace section and the shardproxy_backend_keys gauge: each shard's own INFO
// keyspace, polled every couple of seconds by a background thread of the proxy (hiredis, short
// timeouts) and cached, so INFO never waits on a shard and the workers' pipelines carry no extra
// commands. The figures are as old as the last poll (INFO says when that was).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "route/topology.h"

namespace sp::net {

struct DbKeys {
  uint32_t db = 0;
  uint64_t keys = 0;
  uint64_t expires = 0;
  uint64_t avg_ttl = 0;
};

struct ShardKeyspace {
  std::string shard;  // its name
  bool ok = false;    // the last poll got an answer
  std::vector<DbKeys> dbs;
  uint64_t keys() const;
};

// "db0:keys=3,expires=1,avg_ttl=100" lines of an INFO keyspace reply; other lines are ignored.
std::vector<DbKeys> parseKeyspace(std::string_view info);

class KeyspaceCache {
 public:
  void store(std::vector<ShardKeyspace> shards, uint64_t unix_time);
  std::vector<ShardKeyspace> snapshot() const;
  uint64_t refreshedAt() const;  // unix seconds of the last poll, 0 = none yet
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
  // `topology` returns the shards to poll (the current topology) each round.
  KeyspacePoller(KeyspaceCache& cache, std::function<route::TopologyPtr()> topology,
                 std::chrono::milliseconds interval);
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
  std::mutex mu_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace sp::net
