// CommandStats: what one report row counts (ops, hits, misses, bytes, errors by kind, latency
// histogram), kept per thread and merged after the run; PhaseResult: the rows of one phase.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "latency_histogram.h"

namespace sp::bench {

// Error replies by kind: the first word of the error ("ERR", "WRONGTYPE", "MOVED"), plus the
// client-side kinds "TIMEOUT" and "CONNECTION_LOST" for requests that never got a reply.
class ErrorCounts {
 public:
  void add(std::string_view kind, uint64_t count = 1, std::string_view example = {});
  void merge(const ErrorCounts& other);
  uint64_t total() const;
  uint64_t count(std::string_view kind) const;
  struct Entry {
    std::string kind;
    uint64_t count;
    std::string example;  // the first message of this kind, for the report
  };
  const std::vector<Entry>& entries() const { return entries_; }

 private:
  std::vector<Entry> entries_;  // few kinds; a linear search is fine (errors are the slow path)
};

// The first word of an error reply ("-WRONGTYPE Operation ..." -> "WRONGTYPE").
std::string_view errorKind(std::string_view reply);

struct CommandStats {
  uint64_t ops = 0;  // replies received (errors included)
  uint64_t hits = 0;
  uint64_t misses = 0;
  uint64_t bytes_tx = 0;
  uint64_t bytes_rx = 0;
  ErrorCounts errors;
  LatencyHistogram latency;

  void merge(const CommandStats& other);
};

struct RowResult {
  std::string type;  // "SET", "Sets", "Totals"
  bool has_hits = false;
  CommandStats stats;
  // Rates. A live run divides by its duration; `shardbench merge` adds the rates of runs that
  // ran side by side on several machines.
  double ops_per_sec = 0;
  double hits_per_sec = 0;
  double misses_per_sec = 0;
  double kb_per_sec = 0;  // (bytes sent + received) / 1024 per second, as memtier reports

  void computeRates(double seconds);
  void mergeRun(const RowResult& other);  // another machine's run of the same row
};

struct PhaseResult {
  std::string name;
  double duration_s = 0;
  std::vector<RowResult> rows;  // commands, then Totals when the phase has one
  bool totals_row = false;
  bool interrupted = false;
};

}  // namespace sp::bench
