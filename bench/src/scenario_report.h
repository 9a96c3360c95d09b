// The result directory of a scenario run: results.json (settings, every measurement, the tables
// as text), results.csv (one line per measured row), report.md (the tables laid out like the
// seed's, with the seed's published numbers as extra rows and ratios to the first target), SVG
// charts (a line per series for sweeps, grouped bars for workloads) and runs/*.json (each run's
// full shardbench result, histograms included, for `shardbench merge`). Repeated points show the
// median with the min–max range (whiskers on the charts); a ratio between targets is called a
// difference only when their ranges do not overlap. Every output states the CPU budget.
#pragma once

#include <string>
#include <vector>

#include "cpu_budget.h"
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
  CpuBudget cpu_budget;
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

// "1.30×" when the ranges of `value` and `base` are apart (or untested: one repetition), and
// "within noise, 1.02×" when they overlap.
std::string ratioText(const Spread& value, const Spread& base);

// The measurements of one point and target (all repetitions).
std::vector<const Measurement*> measurementsOf(const std::vector<Measurement>& all,
                                               const std::string& point, const std::string& target);

}  // namespace sp::bench
