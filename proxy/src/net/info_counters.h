// The proxy's own counters that INFO reports (stats, commandstats, errorstats, latencystats),
// summed over the workers, and the two pieces of state INFO keeps between calls: the baseline of
// CONFIG RESETSTAT and the samples of the instantaneous_* rates. ProxyContext holds both; the INFO
// text itself is the control plane's (control/info_report.h).
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "metrics/latency_histogram.h"

namespace sp::resp {
struct CommandInfo;
}

namespace sp::net {

// The proxy's own counters that INFO stats, commandstats, errorstats and latencystats report,
// summed over the workers.
struct InfoCounters {
  struct Command {
    const resp::CommandInfo* cmd = nullptr;
    uint64_t calls = 0;
    uint64_t usec = 0;
    uint64_t failed = 0;
    std::array<uint64_t, metrics::kLatencyBuckets> buckets{};
  };
  uint64_t accepted = 0, rejected = 0, commands = 0, local = 0, split = 0, refused = 0;
  uint64_t perr_client = 0, perr_backend = 0, out_limit = 0, paused = 0, in = 0, sent = 0;
  uint64_t slow = 0, auth_failures = 0, errors = 0, reads = 0, writes = 0;
  uint64_t ring_writes = 0, ring_submits = 0;  // client writes sent through io_uring, submissions
  uint64_t ring_reads = 0;                     // socket reads completed through io_uring
  std::vector<Command> by_command;             // in the command table's order
  std::map<std::string, uint64_t> by_code;  // error replies by code, sorted as redis-server lists
};

// CONFIG RESETSTAT: INFO reports the counters since the last reset. The counters themselves are
// never reset (they are also Prometheus counters, which only go up, and each has one writer, its
// worker); the reset keeps their values at that moment and INFO subtracts them.
class InfoBaseline {
 public:
  void reset(InfoCounters now);
  // `now` less the values at the last reset (nothing before the first).
  InfoCounters since(InfoCounters now) const;

 private:
  mutable std::mutex mu_;
  InfoCounters base_;  // guarded by mu_
};

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

}  // namespace sp::net
