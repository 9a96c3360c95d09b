// Result files (--json-out-file): the run's settings, every phase and row with the same numbers
// as the table, errors by kind, and each row's full latency histogram (non-empty buckets as
// [index, count] of the log-linear layout), so `shardbench merge` can combine runs exactly.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "command_stats.h"
#include "report.h"

namespace sp::bench {

struct RunRecord {
  std::string command_line;
  std::string target;                // "host:port"
  std::vector<std::string> sources;  // merged files (merge only)
  RunSummary summary;
  std::vector<PhaseResult> phases;
  // --print-percentiles: each row also gets "percentiles_ms" with these percentiles (not read
  // back: merge recomputes everything from the histograms).
  std::vector<double> percentiles;
};

std::string toJson(const RunRecord& run);
// False with a message for malformed JSON, another format version or another histogram layout.
bool fromJson(std::string_view text, RunRecord* out, std::string* error);

}  // namespace sp::bench
