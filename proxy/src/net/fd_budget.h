// The descriptor budget: how many client connections the open-files limit (RLIMIT_NOFILE) leaves
// room for once the proxy's own descriptors are set aside. Like redis-server, which lowers
// maxclients to its `ulimit -n` with a warning, the proxy raises its soft limit as far as the hard
// limit allows and then lowers limits.max_clients to what fits, at start-up and on every reload.
// The worker refuses the clients past it with Redis' "-ERR max number of clients reached" while
// descriptors remain to say so (net/worker.cc).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "config/config.h"
#include "core/status.h"
#include "route/topology.h"

namespace sp::net {

struct ProxyContext;

// Descriptors held whatever the clients do: stdio, the log, the metrics endpoint, the keyspace
// poller and the Sentinel or cluster watcher (redis-server sets aside 32 too).
inline constexpr uint64_t kFixedReservedFds = 32;
// Per worker: its loop's epoll and async descriptors, libuv's own spare, the listening socket and
// the spare kept to refuse a connection when descriptors run out, with room to spare.
inline constexpr uint64_t kReservedFdsPerWorker = 8;

// Descriptors the proxy needs besides client connections: the allowances above plus every
// pipelined shard connection (workers x shards x (backend.connections + replicas)). Dedicated
// connections (transactions, blocking commands, subscribers) follow the clients and are not
// counted; a client that cannot get one is answered an error.
uint64_t reservedDescriptors(const config::Config& config, const route::Topology& topology,
                             size_t workers);

struct FdBudget {
  uint64_t open_files = 0;   // the soft RLIMIT_NOFILE in force (after any raise)
  uint64_t reserved = 0;     // reservedDescriptors()
  uint32_t configured = 0;   // limits.max_clients
  uint32_t max_clients = 0;  // the limit applied: min(configured, open_files - reserved)
  bool fits() const { return open_files > reserved; }
  bool reduced() const { return max_clients < configured; }
};

// Pure: the budget for a limit of `open_files` descriptors (max_clients 0 when nothing fits).
FdBudget fdBudget(uint32_t configured, uint64_t reserved, uint64_t open_files);

// Raises the soft RLIMIT_NOFILE toward configured + reserved (never above the hard limit, never
// lowering it) and returns the budget for the limit then in force.
FdBudget planDescriptors(uint32_t configured, uint64_t reserved);

// The warning logged when the configured limit does not fit ("" when it does).
std::string describeReduction(const FdBudget& budget);

// Start-up and reload (`when` prefixes the log line): plans the budget of `config` and `topology`
// with `workers` workers, warns when limits.max_clients was lowered, and publishes the limit in
// context.max_clients. Fails, and publishes nothing, when the open-files limit does not even
// cover the reserve.
Status applyDescriptorBudget(ProxyContext& context, const config::Config& config,
                             const route::Topology& topology, size_t workers,
                             std::string_view when);

}  // namespace sp::net
