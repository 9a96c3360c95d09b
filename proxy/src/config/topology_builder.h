// makeTopology: the route::Topology snapshot a validated Config describes.
#pragma once

#include <memory>

#include "config/config.h"
#include "route/topology.h"

namespace sp::config {

// The string twemproxy's ketama hashes for a server: its name when the config gives one, else
// "host:port" ("host" alone for port 11211, libmemcached's default), as nutcracker does.
std::string ketamaName(const ShardConfig& shard);

// Precondition: validate(config) returned no errors. Shards keep their config order; with no
// explicit slots the 16384 slots are split evenly (as redis-cli --cluster create does).
std::shared_ptr<const sp::route::Topology> makeTopology(const Config& config);

}  // namespace sp::config
