// Publishing a configuration and topology: into the ProxyContext, and to every worker through
// its mailbox. Serialised, so that a reload, a topology watcher and CONFIG SET never interleave
// their updates.
#pragma once

#include <functional>
#include <memory>

#include "config/config.h"
#include "route/topology.h"

namespace sp::net {

struct ProxyContext;

// Publishes config + topology in the context and hands them to every worker (Worker::applyConfig
// through its mailbox). Serialised, so a reload and a watcher never interleave their updates.
void publishTopology(ProxyContext& context, std::shared_ptr<const config::Config> config,
                     route::TopologyPtr topology);

// A change to what is published (CONFIG SET of a proxy parameter, a Sentinel failover, a new
// cluster map), made from the configuration and topology in force and published before any other
// publisher runs: `change` may replace either and returns true to publish, false to leave them.
// Two changes made at once both survive; neither publishes a copy made before the other.
struct Published {
  std::shared_ptr<const config::Config> config;
  route::TopologyPtr topology;
};
bool updatePublished(ProxyContext& context, const std::function<bool(Published&)>& change);

}  // namespace sp::net
