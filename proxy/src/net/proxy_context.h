// ProxyContext: what every worker shares, read-only after start-up except for a few atomics
// touched only on accept/close (never per request): the config, the workers (for INFO), ids.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "config/config.h"
#include "route/topology.h"

namespace sp::net {

class Worker;

struct ProxyContext {
  config::Config config;
  route::TopologyPtr topology;
  std::vector<Worker*> workers;
  uint64_t start_time_unix = 0;
  uint16_t bound_port = 0;
  std::atomic<uint64_t> next_client_id{1};
  std::atomic<uint64_t> clients_open{0};

  // The INFO reply text for `section` ("" or "default" or "all" = every section).
  std::string info(std::string_view section) const;
};

}  // namespace sp::net
