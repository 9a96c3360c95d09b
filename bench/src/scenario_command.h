// `shardbench scenario FILE`: runs a scenario file against the given targets (or against local
// shards and the shardproxy of this build) at the quick or full scale, alternating targets
// between repetitions, and writes the result directory (see scenario_report.h).
#pragma once

#include <string>
#include <vector>

namespace sp::bench {

// Exit status: 0 every point ran (or was skipped for a stated reason), 1 a point failed or
// nothing could start, 2 bad flags or a bad scenario file, 130 interrupted.
int runScenarioCommand(const std::vector<std::string>& args);

std::string scenarioHelpText();

}  // namespace sp::bench
