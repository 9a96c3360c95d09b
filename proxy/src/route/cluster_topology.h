// Redis Cluster discovery: CLUSTER SLOTS from a seed node, turned into the same immutable
// Topology that static mode uses (one shard per master, named by its address, with the masters'
// replicas attached). Control path only: a BlockingClient (plain or TLS), never on a worker thread.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/status.h"
#include "route/sentinel.h"
#include "route/topology.h"
#include "tls/tls_context.h"

struct redisReply;

namespace sp::route {

// Builds a topology from a CLUSTER SLOTS reply. Slots no master serves (a cluster that is not
// fully covered) point at shard 0, whose node answers them with Redis's own error. Fails for a
// malformed reply or one with no slots at all.
Status topologyFromClusterSlots(const redisReply* reply, const std::string& username,
                                const std::string& password, TopologyPtr* out);

// Asks the seeds in turn; the first that answers CLUSTER SLOTS gives the topology. username and
// password are used to AUTH to the seeds and are carried into every shard of the topology. `tls`:
// the client context for the seeds (nullptr: plain).
Status fetchClusterTopology(const std::vector<SentinelAddress>& seeds, const std::string& username,
                            const std::string& password,
                            const std::shared_ptr<const tls::TlsContext>& tls, TopologyPtr* out);

// True when both topologies route every slot to the same addresses.
bool sameRouting(const Topology& a, const Topology& b);

}  // namespace sp::route
