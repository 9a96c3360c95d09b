// WorkerBackends: a worker's shard side (net::ShardSide). It owns the worker's connections to its
// shards (BackendPool), the cluster redirector, the dedicated connections of transactions,
// blocking commands and subscribers, and the pool of in-flight operations. The functions below
// reach them from the worker they belong to.
#pragma once

#include <memory>

#include "backend/backend_op.h"
#include "core/intrusive_queue.h"
#include "net/worker.h"
#include "net/worker_parts.h"

namespace sp::backend {

class BackendPool;
class ClusterRedirector;
class DedicatedPool;

class WorkerBackends final : public net::ShardSide {
 public:
  explicit WorkerBackends(net::Worker& worker);
  ~WorkerBackends() override;
  WorkerBackends(const WorkerBackends&) = delete;
  WorkerBackends& operator=(const WorkerBackends&) = delete;

  BackendPool& pool() { return *pool_; }
  ClusterRedirector& redirector() { return *redirector_; }
  DedicatedPool& dedicated() { return *dedicated_; }
  ObjectPool<BackendOp>& ops() { return ops_; }

  void start() override;
  Reconciled applyTopology(const route::Topology& before, const route::Topology& after,
                           bool same_connections) override;
  void ping() override;
  size_t trimBuffers() override;
  void shutdown() override;

 private:
  // Destroyed last to first: the redirector, the pool, the dedicated connections, then the ops.
  ObjectPool<BackendOp> ops_;
  std::unique_ptr<DedicatedPool> dedicated_;
  std::unique_ptr<BackendPool> pool_;
  std::unique_ptr<ClusterRedirector> redirector_;
};

// The worker's shard side (its worker thread only).
inline WorkerBackends& backendsOf(net::Worker& worker) {
  return static_cast<WorkerBackends&>(worker.shardSide());
}
inline BackendPool& poolOf(net::Worker& worker) { return backendsOf(worker).pool(); }
inline ClusterRedirector& redirectorOf(net::Worker& worker) {
  return backendsOf(worker).redirector();
}
inline DedicatedPool& dedicatedOf(net::Worker& worker) { return backendsOf(worker).dedicated(); }
inline ObjectPool<BackendOp>& opsOf(net::Worker& worker) { return backendsOf(worker).ops(); }

}  // namespace sp::backend
