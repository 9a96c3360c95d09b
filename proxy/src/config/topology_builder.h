// makeTopology: the route::Topology snapshot a validated Config describes.
#pragma once

#include <memory>

#include "config/config.h"
#include "route/topology.h"

namespace sp::config {

// Precondition: validate(config) returned no errors. Shards keep their config order; with no
// explicit slots the 16384 slots are split evenly (as redis-cli --cluster create does).
std::shared_ptr<const sp::route::Topology> makeTopology(const Config& config);

}  // namespace sp::config
