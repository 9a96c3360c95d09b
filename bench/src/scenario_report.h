// The result directory of a scenario run: results.json (settings, every measurement, the tables
// as text), results.csv (one line per measured row), report.md (the tables laid out like the
// seed's, with the seed's published numbers as extra rows and ratios to the first target), SVG
// charts (a line per series for sweeps, grouped bars for workloads) and runs/*.json (each run's
// full shardbench result, histograms included, for `shardbench merge`).
#pragma once

#include <string>
#include <vector>

#include "machine_info.h"
#include "measurement.h"
#include "scenario.h"
#include "scenario_plan.h"
#include "target.h"

namespace sp::bench {

struct ScenarioRun {
  const Scenario* scenario = nullptr;
  const ScenarioPlan* plan = nullptr;
  std::vector<Target> targets;
  std::vector<Measurement> measurements;
  int repeat = 1;
  std::string command_line;
  std::string deployment;  // what was started locally, "" for external targets
  MachineInfo machine;
  double wall_s = 0;
  bool interrupted = false;
  std::vector<std::string> warnings;
};

// Writes everything into `dir` (which exists). *markdown receives report.md's text.
bool writeScenarioReport(const ScenarioRun& run, const std::string& dir, std::string* markdown,
                         std::string* error);

// The measurements of one point and target (all repetitions).
std::vector<const Measurement*> measurementsOf(const std::vector<Measurement>& all,
                                               const std::string& point, const std::string& target);

}  // namespace sp::bench
