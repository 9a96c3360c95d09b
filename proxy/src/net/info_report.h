// INFO's reply text (ProxyContext::info): every section redis-server 7 has, in its order, and the
// proxy's shards section. Server, Clients, Replication, CPU, Modules and Cluster are the proxy's
// own; Memory and Persistence the shards' (their last polled INFO, keyspace_poller.h) combined
// field by field; Stats the proxy's for what its clients see and the shards' for their data;
// Commandstats, Errorstats and Latencystats the commands the proxy served. The rule of every
// field is written in info_report.cc and docs/operations.md (INFO).
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace sp::net {

struct ProxyContext;

// INFO stats' instantaneous_* rates. The proxy samples nothing in the background, so each INFO
// leaves a sample and its rates run from an earlier one: the oldest of about the last 2 s, or the
// latest before them.
class RateSampler {
 public:
  struct Sample {
    uint64_t micros = 0;  // monotonic
    uint64_t commands = 0;
    uint64_t bytes_in = 0;
    uint64_t bytes_out = 0;
  };

  // Any thread: keeps `now` and returns the sample the rates run from (`now` when none).
  Sample base(const Sample& now);

 private:
  std::mutex mu_;
  std::vector<Sample> samples_;  // guarded by mu_, oldest first
};

// The INFO reply text for `sections` (as ProxyContext::info takes them).
std::string infoReport(const ProxyContext& context, std::string_view sections, bool admin);

}  // namespace sp::net
