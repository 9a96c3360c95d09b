// A worker's shard side: build, start, reconcile, ping, trim, shut down.
#include "backend/worker_backends.h"

#include "backend/backend_conn.h"
#include "backend/backend_pool.h"
#include "backend/cluster_redirector.h"
#include "backend/dedicated_conn.h"

namespace sp::backend {

WorkerBackends::WorkerBackends(net::Worker& worker)
    : dedicated_(std::make_unique<DedicatedPool>(worker)),
      pool_(std::make_unique<BackendPool>(worker)),
      redirector_(std::make_unique<ClusterRedirector>(worker, *pool_)) {}

WorkerBackends::~WorkerBackends() {
  redirector_.reset();
  pool_.reset();
  dedicated_.reset();
}

void WorkerBackends::start() {
  redirector_->start();
  pool_->start();
}

net::ShardSide::Reconciled WorkerBackends::applyTopology(const route::Topology& before,
                                                         const route::Topology& after,
                                                         bool same_connections) {
  return pool_->reconcile(before, after, same_connections);
}

void WorkerBackends::ping() {
  pool_->forEach([](BackendConn& conn) { conn.ping(); });
  pool_->sweepRetired();
}

size_t WorkerBackends::trimBuffers() {
  size_t freed = 0;
  pool_->forEach([&freed](BackendConn& conn) { freed += conn.trimBuffers(); });
  return freed;
}

void WorkerBackends::shutdown() {
  // The clients have gone: answering the waiting retries releases their requests.
  redirector_->shutdown();
  dedicated_->shutdown();
  pool_->shutdown();
}

}  // namespace sp::backend
