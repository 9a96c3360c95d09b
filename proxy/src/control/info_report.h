// INFO's reply text (net::ControlPlane::info): every section redis-server 7 has, in its order, and
// the proxy's shards section. Server, Clients, Replication, CPU, Modules and Cluster are the
// proxy's own; Memory and Persistence the shards' (their last polled INFO, keyspace_poller.h)
// combined field by field; Stats the proxy's for what its clients see and the shards' for their
// data; Commandstats, Errorstats and Latencystats the commands the proxy served. The rule of every
// field is written in info_report.cc and docs/operations.md (INFO).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "net/info_counters.h"

namespace sp::net {
struct ProxyContext;
}

namespace sp::control {

// CONFIG RESETSTAT's part in the proxy: INFO's counters start again from 0.
void resetInfoCounters(net::ProxyContext& context);

// The INFO reply text for `sections` (as net::ControlPlane::info takes them).
std::string infoReport(const net::ProxyContext& context, std::string_view sections, bool admin);

}  // namespace sp::control
