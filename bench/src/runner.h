// Runner: the default subcommand. Builds the workload, starts the threads of each phase in turn,
// shows progress, merges the per-thread statistics, prints the report and picks the exit status.
#pragma once

#include <string>

#include "options.h"
#include "result_json.h"

namespace sp::bench {

// Exit status: 0 ok, 1 run failure or error replies, 2 bad workload, 3 verify mismatches, 130
// interrupted.
int runBenchmark(const Options& options);

// What a run produced, for the subcommands (matrix, scenario) that run benchmarks themselves.
struct RunOutput {
  int status = 0;     // the exit status runBenchmark would return
  RunRecord record;   // settings, summary and phases (only the phases that ran)
  std::string error;  // why the run failed ("" when it did not), as one line
  bool interrupted = false;
};

// Runs like runBenchmark but prints nothing (no report, no progress line, no --json-out-file):
// the caller reports. Safe to call from several threads at once for concurrent runs.
RunOutput collectBenchmark(const Options& options);

}  // namespace sp::bench
