// BackendPool: one worker's connections to its shards. For every shard of the topology it holds
// backend.connections connections to the primary and one to each replica; RESP3 clients get a
// second set that speaks RESP3, built on first use per shard; in cluster mode, connections to
// nodes a redirect named before the topology listed them are opened on demand.
//
// On reload, reconcile() keeps the connections of every shard whose name, address, credentials
// and replicas are unchanged (when backend.connections is unchanged too) and builds new ones for
// the rest; the connections it replaces are retired: they take no new request, finish the ones
// already sent, and are freed once closed (sweepRetired). Everything runs on the worker's thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "net/worker_parts.h"
#include "resp/protocol.h"
#include "route/topology.h"

namespace sp::net {
class Worker;
}

namespace sp::backend {

class BackendConn;

class BackendPool {
 public:
  // Builds (does not start) the connections for `worker`'s topology.
  explicit BackendPool(net::Worker& worker);
  ~BackendPool();
  BackendPool(const BackendPool&) = delete;
  BackendPool& operator=(const BackendPool&) = delete;

  void start();  // connects every connection built so far

  // The connection a client uses for a shard's primary: fixed per client, so its requests to one
  // shard keep their order at the shard. RESP3 clients have connections of their own that speak
  // RESP3 (made on first use per shard), so shard replies reach them unchanged.
  BackendConn& primary(uint16_t shard, uint64_t client_id,
                       resp::Protocol protocol = resp::Protocol::kResp2);
  // Where a read-only command goes under backend.read_from: a replica that serves reads now, or
  // the primary (at once, when no replica does, except in replica-only mode).
  BackendConn& forRead(uint16_t shard, uint64_t client_id,
                       resp::Protocol protocol = resp::Protocol::kResp2);
  // Cluster mode: the connection to host:port, a listed shard's primary or one opened on demand
  // (for `shard`'s statistics); RESP3 clients' go over a RESP3 one.
  BackendConn& node(const std::string& host, uint16_t port, uint16_t shard, uint64_t client_id,
                    resp::Protocol protocol);
  // The index-th RESP2 primary connection of `shard`.
  BackendConn& at(uint16_t shard, size_t index) { return *primaries_[shard][index]; }
  size_t connsPerShard() const { return primaries_.empty() ? 0 : primaries_[0].size(); }
  // Every live connection: primaries, replicas (both protocols) and on-demand nodes.
  void forEach(const std::function<void(BackendConn&)>& fn);

  using Reconciled = net::ShardSide::Reconciled;  // shards kept, connections retired
  // From `old` to `now` (the worker's config already holds the new backend settings);
  // `same_connections`: backend.connections did not change.
  Reconciled reconcile(const route::Topology& old, const route::Topology& now,
                       bool same_connections);
  size_t retiredCount() const { return retired_.size(); }  // draining after a reload
  void sweepRetired();  // frees the retired connections that have closed

  // Closes every connection for good, retired ones included; in-flight requests get an error,
  // and a RESP3 shard built afterwards is shut down at once.
  void shutdown();

 private:
  using Conns = std::vector<std::unique_ptr<BackendConn>>;
  using PerShard = std::vector<Conns>;  // [shard][i]

  // Connections for shard s of `topology` (not started).
  void buildShard(const route::Topology& topology, size_t s, Conns* primaries, Conns* replicas,
                  resp::Protocol protocol);
  void buildResp3Shard(uint16_t shard);  // built and started (or shut down) on first use
  void retire(std::unique_ptr<BackendConn> conn);

  net::Worker& worker_;
  PerShard primaries_;
  PerShard replicas_;
  PerShard resp3_primaries_;
  PerShard resp3_replicas_;
  std::vector<size_t> read_turn_;  // [shard] rotation over read candidates
  Conns retired_;                  // draining; freed once closed
  std::unordered_map<std::string, std::unique_ptr<BackendConn>> extra_nodes_;
  bool shut_down_ = false;
};

}  // namespace sp::backend
