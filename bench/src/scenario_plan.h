// ScenarioPlan: a scenario expanded for one scale: every point's runs as concrete shardbench
// flags (templates filled in from the scenario's, the scale's and the command line's variables),
// each checked by the flag parser before anything starts, and points that cannot run on this
// machine (more connections than open files allow) marked as skipped with the reason.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "options.h"
#include "scenario.h"

namespace sp::bench {

struct PlannedRun {
  std::string name;               // "" for a point's single run
  std::vector<std::string> args;  // shardbench flags without -h/-p
  Options options;                // parsed (host and port are filled in per target)
};

struct PlannedPoint {
  std::string label;
  std::vector<PlannedRun> runs;
  uint64_t connections = 0;   // client connections of all runs together
  std::string skip_reason;    // non-empty: not run
  bool added_to_fit = false;  // the extra point at the largest connection count that fits
};

struct ScenarioPlan {
  std::string scale;
  VarMap vars;
  std::vector<PlannedPoint> points;
  std::vector<std::pair<std::string, std::string>> report_vars;  // expanded
  std::optional<int64_t> memory_estimate_bytes;
};

// Open files a point of `connections` needs in shardbench (and in a proxy in front of it).
uint64_t openFilesNeeded(uint64_t connections);

// `overrides` (--set NAME=VALUE) win over the scale's vars, which win over the scenario's.
// `open_files` is the open-file limit that applies to shardbench and the proxy (0: unchecked);
// `local_ports` the ephemeral ports one client address has for connections to one server
// address (net.ipv4.ip_local_port_range; 0: unchecked). A point that needs more open files is
// skipped with the reason. One that needs more ports is too, unless `spread_loopback` (every
// target listens on 127.0.0.0/8): then its runs bind to 127.0.0.1, 127.0.0.2, ... in turn
// (--source-address), each address with its own ports.
bool planScenario(const Scenario& scenario, const std::string& scale, const VarMap& overrides,
                  uint64_t open_files, ScenarioPlan* out, std::string* error,
                  uint64_t local_ports = 0, bool spread_loopback = false);

// The size of net.ipv4.ip_local_port_range (0 when it cannot be read).
uint64_t localPortCount();

// The shardbench command line of a run against host:port, for reports.
std::string commandLine(const PlannedRun& run, const std::string& host, uint16_t port);

}  // namespace sp::bench
