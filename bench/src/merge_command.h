// `shardbench merge a.json b.json ...`: combines result files of runs taken side by side (on
// several machines) into one report. Counts and histograms add up and percentiles are recomputed
// from the merged histograms (never averaged); rates add up; a phase lasts as long as its
// longest run.
#pragma once

#include <string>
#include <vector>

#include "result_json.h"

namespace sp::bench {

// Merges `other` into `into` (phases matched by name, rows by type).
void mergeRuns(RunRecord* into, const RunRecord& other);

// The subcommand; args are those after "merge". Exit status 0, 1 (unreadable file) or 2 (usage).
int runMerge(const std::vector<std::string>& args);

}  // namespace sp::bench
