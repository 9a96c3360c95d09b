// Descriptor budget: reserve, RLIMIT_NOFILE raise, effective limits.max_clients.
#include "net/fd_budget.h"

#include <sys/resource.h>

#include <algorithm>

#include <spdlog/spdlog.h>

#include "net/proxy_context.h"

namespace sp::net {

uint64_t reservedDescriptors(const config::Config& config, const route::Topology& topology,
                             size_t workers) {
  uint64_t per_worker = 0;
  for (const route::ShardAddress& shard : topology.shards()) {
    per_worker += static_cast<uint64_t>(config.backend_connections) + shard.replicas.size();
  }
  return kFixedReservedFds + workers * (kReservedFdsPerWorker + per_worker);
}

FdBudget fdBudget(uint32_t configured, uint64_t reserved, uint64_t open_files) {
  FdBudget budget;
  budget.open_files = open_files;
  budget.reserved = reserved;
  budget.configured = configured;
  const uint64_t room = open_files > reserved ? open_files - reserved : 0;
  budget.max_clients = static_cast<uint32_t>(std::min<uint64_t>(configured, room));
  return budget;
}

FdBudget planDescriptors(uint32_t configured, uint64_t reserved) {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0) {
    return fdBudget(configured, reserved, RLIM_INFINITY);
  }
  const uint64_t wanted = static_cast<uint64_t>(configured) + reserved;
  if (limit.rlim_cur != RLIM_INFINITY && limit.rlim_cur < wanted) {
    rlimit raised = limit;
    raised.rlim_cur = limit.rlim_max == RLIM_INFINITY
                          ? static_cast<rlim_t>(wanted)
                          : std::min<rlim_t>(limit.rlim_max, static_cast<rlim_t>(wanted));
    if (raised.rlim_cur > limit.rlim_cur && setrlimit(RLIMIT_NOFILE, &raised) == 0) {
      limit = raised;
    }
  }
  const uint64_t open_files =
      limit.rlim_cur == RLIM_INFINITY ? UINT64_MAX : static_cast<uint64_t>(limit.rlim_cur);
  return fdBudget(configured, reserved, open_files);
}

std::string describeReduction(const FdBudget& budget) {
  if (!budget.reduced()) {
    return "";
  }
  return "limits.max_clients " + std::to_string(budget.configured) + " needs " +
         std::to_string(static_cast<uint64_t>(budget.configured) + budget.reserved) +
         " file descriptors (" + std::to_string(budget.reserved) +
         " for listeners and shard connections), but the open-files limit is " +
         std::to_string(budget.open_files) + ": at most " + std::to_string(budget.max_clients) +
         " clients will be accepted (raise `ulimit -n` or LimitNOFILE to allow more)";
}

Status applyDescriptorBudget(ProxyContext& context, const config::Config& config,
                             const route::Topology& topology, size_t workers,
                             std::string_view when) {
  const FdBudget budget =
      planDescriptors(config.limits.max_clients, reservedDescriptors(config, topology, workers));
  if (!budget.fits()) {
    return Status::failure(
        "the open-files limit (" + std::to_string(budget.open_files) +
        ") does not even cover the " + std::to_string(budget.reserved) +
        " file descriptors needed for listeners and shard connections (raise `ulimit -n`)");
  }
  if (budget.reduced()) {
    spdlog::warn("{}: {}", when, describeReduction(budget));
  }
  context.max_clients.store(budget.max_clients, std::memory_order_relaxed);
  return Status();
}

}  // namespace sp::net
