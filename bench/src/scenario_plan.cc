// Expanding scenario templates into checked shardbench runs.
#include "scenario_plan.h"

#include <algorithm>
#include <cstdint>
#include <fstream>

#include "command_template.h"

namespace sp::bench {
namespace {

constexpr uint64_t kOpenFileSlack = 256;  // listeners, shard connections, logs, hiredis probes

std::string joinArgs(const std::vector<std::string>& parts) {
  std::string out;
  for (const auto& p : parts) {
    if (p.empty()) {
      continue;
    }
    if (!out.empty()) {
      out += ' ';
    }
    out += p;
  }
  return out;
}

bool planRun(const Scenario& s, const ScaleSpec& scale, const PointSpec& point, const RunSpec& run,
             const VarMap& vars, PlannedRun* out, std::string* error) {
  std::string point_args;
  for (const auto& [label, args] : scale.point_args) {
    if (label == point.label) {
      point_args = args;
    }
  }
  const std::string text = joinArgs({s.args, run.args, scale.args, point_args});
  std::string expanded;
  std::string where = "point '" + point.label + "'";
  if (!run.name.empty()) {
    where += ", run '" + run.name + "'";
  }
  if (!expandTemplate(text, vars, &expanded, error)) {
    *error = where + ": " + *error;
    return false;
  }
  std::vector<std::string> args;
  if (!CommandTemplate::split(expanded, &args, error)) {
    *error = where + ": " + *error;
    return false;
  }
  for (const auto& a : args) {
    if (a == "-h" || a == "-p" || a == "-s" || a == "--host" || a == "--port" || a == "--server" ||
        a == "--json-out-file" || a == "--out-file" || a == "-o") {
      *error = where + ": " + a + " is set by the scenario runner";
      return false;
    }
  }
  std::vector<std::string> full = args;
  full.insert(full.end(), {"-h", "127.0.0.1", "-p", "1", "--no-progress"});
  if (!parseOptions(full, &out->options, error)) {
    *error = where + ": shardbench " + expanded + ": " + *error;
    return false;
  }
  out->name = run.name;
  out->args = std::move(args);
  return true;
}

bool planPoint(const Scenario& s, const ScaleSpec& scale, const PointSpec& point,
               const VarMap& base, PlannedPoint* out, std::string* error) {
  VarMap vars = base;
  for (const auto& [k, v] : point.vars) {
    vars[k] = v;
  }
  out->label = point.label;
  for (const auto& run : point.runs) {
    PlannedRun pr;
    if (!planRun(s, scale, point, run, vars, &pr, error)) {
      return false;
    }
    out->connections += pr.options.clients_total;
    out->runs.push_back(std::move(pr));
  }
  return true;
}

// Binds a point's connections to 127.0.0.1, 127.0.0.2, ... in turn (every run the same list),
// enough addresses that each needs at most 90% of the ephemeral ports (the rest stay for the
// proxy's own connections and for sockets still in TIME_WAIT).
void spreadOverLoopbackSources(PlannedPoint* pp, uint64_t local_ports) {
  const uint64_t per_address = std::max<uint64_t>(1, local_ports * 9 / 10);
  const uint64_t count = std::min<uint64_t>(254, (pp->connections + per_address - 1) / per_address);
  std::string list;
  std::vector<std::string> addresses;
  for (uint64_t i = 1; i <= count; ++i) {
    addresses.push_back("127.0.0." + std::to_string(i));
    list += (i == 1 ? "" : ",") + addresses.back();
  }
  for (PlannedRun& run : pp->runs) {
    run.args.push_back("--source-address");
    run.args.push_back(list);
    run.options.source_addresses = addresses;
  }
}

}  // namespace

uint64_t openFilesNeeded(uint64_t connections) { return connections + kOpenFileSlack; }

uint64_t localPortCount() {
  std::ifstream in("/proc/sys/net/ipv4/ip_local_port_range");
  uint64_t lo = 0;
  uint64_t hi = 0;
  if (!(in >> lo >> hi) || hi < lo) {
    return 0;
  }
  return hi - lo + 1;
}

bool planScenario(const Scenario& s, const std::string& scale_name, const VarMap& overrides,
                  uint64_t open_files, ScenarioPlan* out, std::string* error, uint64_t local_ports,
                  bool spread_loopback) {
  const ScaleSpec* scale = s.scale(scale_name);
  if (scale == nullptr) {
    *error = "unknown scale '" + scale_name + "' (quick or full)";
    return false;
  }
  ScenarioPlan plan;
  plan.scale = scale_name;
  plan.vars = s.vars;
  for (const auto& [k, v] : scale->vars) {
    plan.vars[k] = v;
  }
  for (const auto& [k, v] : overrides) {
    plan.vars[k] = v;
  }
  std::vector<const PointSpec*> points;
  if (scale->values.empty()) {
    for (const auto& p : s.points) {
      points.push_back(&p);
    }
  } else {
    for (const auto& p : s.points) {
      if (std::find(scale->values.begin(), scale->values.end(), p.label) != scale->values.end()) {
        points.push_back(&p);
      }
    }
  }
  bool any_skipped = false;
  uint64_t largest_fit = 0;
  for (const PointSpec* p : points) {
    PlannedPoint pp;
    if (!planPoint(s, *scale, *p, plan.vars, &pp, error)) {
      return false;
    }
    const uint64_t need = openFilesNeeded(pp.connections);
    if (open_files > 0 && need > open_files) {
      pp.skip_reason = "needs about " + std::to_string(need) +
                       " open files in shardbench and in the proxy; the open-file limit "
                       "(RLIMIT_NOFILE, hard) here is " +
                       std::to_string(open_files);
      any_skipped = true;
    } else if (local_ports > 0 && pp.connections > local_ports && spread_loopback) {
      spreadOverLoopbackSources(&pp, local_ports);
      largest_fit = std::max(largest_fit, pp.connections);
    } else if (local_ports > 0 && pp.connections > local_ports) {
      // Every client connection to the one target address takes its own ephemeral port.
      pp.skip_reason = "needs " + std::to_string(pp.connections) +
                       " client connections to one address; the ephemeral port range "
                       "(net.ipv4.ip_local_port_range) here has " +
                       std::to_string(local_ports) + " ports";
      any_skipped = true;
    } else {
      largest_fit = std::max(largest_fit, pp.connections);
    }
    plan.points.push_back(std::move(pp));
  }
  if (s.fit_open_files && any_skipped && s.has_sweep) {
    // One extra point at the largest round count that fits, placed before the first skipped one.
    uint64_t limit = open_files > kOpenFileSlack ? open_files - kOpenFileSlack : UINT64_MAX;
    if (local_ports > 0 && !spread_loopback) {
      limit = std::min(limit, local_ports);
    }
    const uint64_t fit = limit / 1000 * 1000;
    if (fit > largest_fit) {
      PointSpec extra = *points.front();
      extra.label = std::to_string(fit);
      extra.vars["value"] = extra.label;
      PlannedPoint pp;
      if (!planPoint(s, *scale, extra, plan.vars, &pp, error)) {
        return false;
      }
      pp.added_to_fit = true;
      if (open_files == 0 || openFilesNeeded(pp.connections) <= open_files) {
        auto it = std::find_if(plan.points.begin(), plan.points.end(),
                               [](const PlannedPoint& x) { return !x.skip_reason.empty(); });
        plan.points.insert(it, std::move(pp));
      }
    }
  }
  for (const auto& [title, value] : s.report_vars) {
    std::string expanded;
    if (!expandTemplate(value, plan.vars, &expanded, error)) {
      *error = "report_vars '" + title + "': " + *error;
      return false;
    }
    plan.report_vars.emplace_back(title, expanded);
  }
  if (!s.memory_estimate.empty()) {
    std::string expanded;
    int64_t bytes = 0;
    if (!expandTemplate(s.memory_estimate, plan.vars, &expanded, error) ||
        !evalExpression(expanded, plan.vars, &bytes, error)) {
      *error = "memory_estimate: " + *error;
      return false;
    }
    plan.memory_estimate_bytes = bytes;
  }
  *out = std::move(plan);
  return true;
}

std::string commandLine(const PlannedRun& run, const std::string& host, uint16_t port) {
  std::string out = "shardbench -h " + host + " -p " + std::to_string(port);
  for (const auto& a : run.args) {
    const bool quote = a.empty() || a.find_first_of(" \t'\"\\$`") != std::string::npos;
    if (!quote) {
      out += " " + a;
      continue;
    }
    std::string q = "'";
    for (char c : a) {
      if (c == '\'') {
        q += "'\\''";
      } else {
        q += c;
      }
    }
    out += " " + q + "'";
  }
  return out;
}

}  // namespace sp::bench
