// Runner: the default subcommand. Builds the workload, starts the threads of each phase in turn,
// shows progress, merges the per-thread statistics, prints the report and picks the exit status.
#pragma once

#include "options.h"

namespace sp::bench {

// Exit status: 0 ok, 1 run failure or error replies, 2 bad workload, 3 verify mismatches, 130
// interrupted.
int runBenchmark(const Options& options);

}  // namespace sp::bench
