// Flags, target set-up and the measurement loop of `shardbench scenario`.
#include "scenario_command.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>

#include "child_process.h"
#include "command_template.h"
#include "cpu_budget.h"
#include "interrupt.h"
#include "machine_info.h"
#include "options.h"
#include "point_executor.h"
#include "scenario.h"
#include "scenario_plan.h"
#include "scenario_report.h"
#include "target.h"

namespace sp::bench {
namespace {

struct ScenarioFlags {
  std::string file;
  std::string scale = "quick";
  std::vector<Target> targets;
  int local_shards = 0;  // 0: the scenario's default
  int workers = 0;
  bool twemproxy = false;
  bool direct = false;
  int repeat = 0;  // 0: from the scale
  CpuList proxy_cpus;
  CpuList shard_cpus;
  CpuList client_cpus;
  std::vector<std::string> points;
  VarMap vars;
  std::string out_dir;
  ServerBinaries binaries;
  std::vector<std::string> proxy_args;
  std::vector<Endpoint> flush_shards;
  bool no_flush = false;
  bool dry_run = false;
  bool help = false;
  std::string command_line;
};

std::vector<std::string> splitComma(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    if (comma == std::string::npos) {
      comma = text.size();
    }
    if (comma > start) {
      out.push_back(text.substr(start, comma - start));
    }
    start = comma + 1;
  }
  return out;
}

bool parseInt(const std::string& v, const std::string& flag, int lo, int hi, int* out,
              std::string* error) {
  char* end = nullptr;
  const long n = std::strtol(v.c_str(), &end, 10);
  if (v.empty() || *end != '\0' || n < lo || n > hi) {
    *error = "invalid value '" + v + "' for " + flag + ": expected an integer from " +
             std::to_string(lo) + " to " + std::to_string(hi);
    return false;
  }
  *out = static_cast<int>(n);
  return true;
}

bool parseFlags(const std::vector<std::string>& args, ScenarioFlags* f, std::string* error) {
  f->command_line = "shardbench scenario";
  for (const auto& a : args) {
    f->command_line += " " + a;
  }
  for (size_t i = 0; i < args.size(); ++i) {
    std::string name = args[i];
    std::string value;
    bool has_value = false;
    if (name.rfind("--", 0) == 0) {
      const size_t eq = name.find('=');
      if (eq != std::string::npos) {
        value = name.substr(eq + 1);
        name = name.substr(0, eq);
        has_value = true;
      }
    } else if (name.empty() || name[0] != '-') {
      if (!f->file.empty()) {
        *error = "one scenario file at a time (got '" + f->file + "' and '" + name + "')";
        return false;
      }
      f->file = name;
      continue;
    }
    auto take = [&]() -> bool {
      if (has_value) {
        return true;
      }
      if (i + 1 >= args.size()) {
        *error = "missing value for " + name;
        return false;
      }
      value = args[++i];
      return true;
    };
    auto flag = [&](bool ok) {
      if (ok && has_value) {
        *error = name + " takes no value";
        return false;
      }
      return ok;
    };
    if (name == "--help" || name == "-h") {
      f->help = true;
    } else if (name == "--scale") {
      if (!take()) {
        return false;
      }
      if (value != "quick" && value != "full") {
        *error = "invalid value '" + value + "' for --scale: expected quick or full";
        return false;
      }
      f->scale = value;
    } else if (name == "--target") {
      if (!take()) {
        return false;
      }
      Target t;
      if (!parseTargetSpec(value, &t, error)) {
        *error = "--target: " + *error;
        return false;
      }
      for (const auto& other : f->targets) {
        if (other.name == t.name) {
          *error = "--target: two targets named '" + t.name + "'";
          return false;
        }
      }
      f->targets.push_back(std::move(t));
    } else if (name == "--local-shards") {
      if (!take() || !parseInt(value, name, 1, 64, &f->local_shards, error)) {
        return false;
      }
    } else if (name == "--workers") {
      if (!take() || !parseInt(value, name, 1, 1024, &f->workers, error)) {
        return false;
      }
    } else if (name == "--with-twemproxy") {
      if (!flag(true)) {
        return false;
      }
      f->twemproxy = true;
    } else if (name == "--with-direct") {
      if (!flag(true)) {
        return false;
      }
      f->direct = true;
    } else if (name == "--repeat") {
      if (!take() || !parseInt(value, name, 1, 100, &f->repeat, error)) {
        return false;
      }
    } else if (name == "--proxy-cpus" || name == "--shard-cpus" || name == "--client-cpus") {
      CpuList* cpus = name == "--proxy-cpus"   ? &f->proxy_cpus
                      : name == "--shard-cpus" ? &f->shard_cpus
                                               : &f->client_cpus;
      if (!take() || !parseCpuFlag(name, value, allowedCpus(), cpus, error)) {
        return false;
      }
    } else if (name == "--points") {
      if (!take()) {
        return false;
      }
      f->points = splitComma(value);
    } else if (name == "--set") {
      if (!take()) {
        return false;
      }
      const size_t eq = value.find('=');
      if (eq == std::string::npos || eq == 0) {
        *error = "invalid value '" + value + "' for --set: expected NAME=VALUE";
        return false;
      }
      f->vars[value.substr(0, eq)] = value.substr(eq + 1);
    } else if (name == "--out") {
      if (!take()) {
        return false;
      }
      f->out_dir = value;
    } else if (name == "--proxy-bin") {
      if (!take()) {
        return false;
      }
      f->binaries.shardproxy = value;
    } else if (name == "--redis-server-bin") {
      if (!take()) {
        return false;
      }
      f->binaries.redis_server = value;
    } else if (name == "--nutcracker-bin") {
      if (!take()) {
        return false;
      }
      f->binaries.nutcracker = value;
    } else if (name == "--proxy-args") {
      if (!take() || !CommandTemplate::split(value, &f->proxy_args, error)) {
        return false;
      }
    } else if (name == "--flush-shards") {
      if (!take()) {
        return false;
      }
      for (const auto& part : splitComma(value)) {
        Endpoint ep;
        if (!parseEndpoint(part, &ep, error)) {
          *error = "--flush-shards: " + *error;
          return false;
        }
        f->flush_shards.push_back(ep);
      }
    } else if (name == "--no-flush") {
      if (!flag(true)) {
        return false;
      }
      f->no_flush = true;
    } else if (name == "--dry-run") {
      if (!flag(true)) {
        return false;
      }
      f->dry_run = true;
    } else if (isTlsFlag(name)) {
      *error = name +
               " applies to the run command only (shardbench --tls -h HOST -p PORT ...): "
               "scenario's local servers run without TLS, and its setup connections to a "
               "--target (FLUSHALL, INFO) have no TLS";
      return false;
    } else {
      *error = "unknown flag '" + name + "' (see shardbench scenario --help)";
      return false;
    }
  }
  if (f->help) {
    return true;
  }
  if (f->file.empty()) {
    *error = "missing the scenario file (conf/scenarios/*.yaml)";
    return false;
  }
  if (!f->targets.empty() && (f->local_shards > 0 || f->twemproxy || f->direct || f->workers)) {
    *error =
        "--target measures running servers; --local-shards, --workers, --with-twemproxy and "
        "--with-direct start local ones: give one or the other";
    return false;
  }
  if (!f->targets.empty() && (!f->proxy_cpus.empty() || !f->shard_cpus.empty())) {
    *error =
        "--target measures running servers: --proxy-cpus and --shard-cpus pin only servers "
        "shardbench starts (--client-cpus still applies)";
    return false;
  }
  if (f->repeat == 0) {
    f->repeat = f->scale == "full" ? 3 : 1;
  }
  if (f->binaries.shardproxy.empty()) {
    f->binaries.shardproxy = defaultProxyBinary();
  }
  return true;
}

std::string timestamp() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  localtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y%m%d-%H%M%S", &tm);
  return buf;
}

std::string progressText(const Measurement& m) {
  std::string text;
  if (m.status == MeasureStatus::kOk) {
    size_t shown = 0;
    for (const auto& r : m.rows) {
      if (shown == 4) {
        text += ", ...";
        break;
      }
      char buf[128];
      std::snprintf(buf, sizeof(buf), "%s%s %.0f/s", shown ? ", " : "", r.name.c_str(), r.qps);
      text += buf;
      ++shown;
    }
  } else {
    text = std::string(statusName(m.status)) + ": " + m.message.substr(0, 200);
  }
  char wall[32];
  std::snprintf(wall, sizeof(wall), " (%.1f s)", m.wall_s);
  return text + wall;
}

class ScenarioExecution {
 public:
  ScenarioExecution(const ScenarioFlags& flags, const Scenario& s, const ScenarioPlan& plan,
                    std::vector<Target> targets)
      : flags_(flags), s_(s), plan_(plan), targets_(std::move(targets)) {
    options_.proxy_rss = s.measure_proxy_rss;
    options_.info_clients = s.measure_info_clients;
    options_.shard_memory = s.measure_shard_memory;
    const size_t per_rep = plan.points.size() * targets_.size();
    total_ = per_rep * static_cast<size_t>(flags.repeat);
  }

  void run() {
    for (int rep = 0; rep < flags_.repeat && !interruptRequested(); ++rep) {
      // Alternate: repetition r starts with target r mod T.
      std::vector<const Target*> order;
      for (size_t k = 0; k < targets_.size(); ++k) {
        order.push_back(&targets_[(k + static_cast<size_t>(rep)) % targets_.size()]);
      }
      if (s_.stateful) {
        for (const Target* t : order) {
          flush(*t);
          for (const auto& p : plan_.points) {
            measure(p, *t, rep);
          }
        }
      } else {
        for (const auto& p : plan_.points) {
          for (const Target* t : order) {
            flush(*t);
            measure(p, *t, rep);
          }
        }
      }
    }
  }

  std::vector<Measurement>& measurements() { return measurements_; }
  std::vector<std::string>& warnings() { return warnings_; }
  const std::vector<Target>& targets() const { return targets_; }

 private:
  void flush(const Target& t) {
    if (flags_.no_flush || interruptRequested()) {
      return;
    }
    std::string error;
    std::vector<Endpoint> servers = t.flush;
    if (servers.empty()) {
      servers =
          flags_.flush_shards.empty() ? std::vector<Endpoint>{t.endpoint} : flags_.flush_shards;
    }
    if (!flushAll(servers, &error) && !flush_warned_) {
      flush_warned_ = true;
      warnings_.push_back("could not flush between runs (" + error +
                          "): keys of earlier runs remain; pass --flush-shards with the shards "
                          "behind the target, or --no-flush");
    }
  }

  void measure(const PlannedPoint& p, const Target& t, int rep) {
    if (interruptRequested()) {
      return;
    }
    Measurement m = executePoint(p, t, rep, options_);
    ++done_;
    std::fprintf(stderr, "[%zu/%zu] %s x %s: %s\n", done_, total_, p.label.c_str(), t.name.c_str(),
                 progressText(m).c_str());
    measurements_.push_back(std::move(m));
  }

  const ScenarioFlags& flags_;
  const Scenario& s_;
  const ScenarioPlan& plan_;
  std::vector<Target> targets_;
  ExecuteOptions options_;
  std::vector<Measurement> measurements_;
  std::vector<std::string> warnings_;
  bool flush_warned_ = false;
  size_t done_ = 0;
  size_t total_ = 0;
};

}  // namespace

std::string scenarioHelpText() {
  return R"(Usage: shardbench scenario FILE [FLAGS]

Runs a scenario file (conf/scenarios/*.yaml: one table of a seed stress report) and writes a
result directory: report.md (the seed's table layout with the seed's numbers as extra rows),
results.json, results.csv, SVG charts and runs/*.json (each run's full result).

Where to run (default: local shards and the shardproxy of this build):
  --target [NAME=]HOST:PORT  measure a running endpoint (repeatable: side by side, tables show
                             ratios to the first; repetitions alternate the order)
  --local-shards N           start N redis-server shards and shardproxy in front of them
                             (default: the scenario's, usually 4)
  --workers N                shardproxy workers (default: one per CPU)
  --with-twemproxy           also measure twemproxy (nutcracker) over the same shards
  --with-direct              also measure the first shard on its own
  --proxy-bin PATH           shardproxy binary (default: proxy/shardproxy of this build tree)
  --redis-server-bin PATH    default /usr/bin/redis-server
  --nutcracker-bin PATH      default /usr/sbin/nutcracker
  --proxy-args 'ARGS'        extra shardproxy flags
  --proxy-cpus LIST          run shardproxy and twemproxy on these CPUs (LIST: CPU numbers and
                             ranges, e.g. 0, 1-3 or 0,2; default: unpinned); --workers then
                             defaults to one per CPU in the list
  --shard-cpus LIST          run the redis-server shards on these CPUs
  --client-cpus LIST         run shardbench's client threads on these CPUs (also with --target)
                             The report states each part's CPUs ("proxy: CPU 0; shards: CPU 1;
                             client: CPU 1") and warns when two parts may share a CPU.

What to run:
  --scale quick|full         quick (default): each scenario in under a minute, a smoke test
                             (titles and chart names say so; not published); full: the seed's
                             sizes where this machine allows
  --points A,B,...           only these points (labels as in the tables)
  --set NAME=VALUE           override a scenario variable (e.g. --set keys=1000000)
  --repeat N                 run every point N times (default: 3 at the full scale, 1 at the
                             quick one): tables show the median and the min-max range, charts
                             draw the range as whiskers, and a ratio between targets is called
                             a difference only when their ranges do not overlap ("within
                             noise" otherwise)
  --flush-shards H:P,...     external targets: FLUSHALL these shards between runs (default: try
                             FLUSHALL through the target)
  --no-flush                 never FLUSHALL
  --dry-run                  print the planned shardbench commands and exit

Output:
  --out DIR                  result directory (default bench-out/NAME-SCALE-TIMESTAMP)

Exit status: 0 all points ran or were skipped for a stated reason (e.g. the open-file limit),
1 a point failed or the servers could not start, 2 bad flags or scenario file, 130 Ctrl-C (the
partial report is written; every server started here is stopped).
)";
}

int runScenarioCommand(const std::vector<std::string>& args) {
  ScenarioFlags flags;
  std::string error;
  if (!parseFlags(args, &flags, &error)) {
    std::fprintf(stderr, "shardbench scenario: %s\n", error.c_str());
    return 2;
  }
  if (flags.help) {
    std::fputs(scenarioHelpText().c_str(), stdout);
    return 0;
  }
  Scenario scenario;
  if (!loadScenario(flags.file, &scenario, &error)) {
    std::fprintf(stderr, "shardbench scenario: %s\n", error.c_str());
    return 2;
  }
  const uint64_t open_files = raiseOpenFileLimit();
  // Servers this command starts listen on 127.0.0.1; --target ones may be anywhere.
  const bool loopback =
      std::all_of(flags.targets.begin(), flags.targets.end(),
                  [](const Target& t) { return t.endpoint.host.rfind("127.", 0) == 0; });
  ScenarioPlan plan;
  if (!planScenario(scenario, flags.scale, flags.vars, open_files, &plan, &error, localPortCount(),
                    loopback)) {
    std::fprintf(stderr, "shardbench scenario: %s: %s\n", flags.file.c_str(), error.c_str());
    return 2;
  }
  if (!flags.points.empty()) {
    std::vector<PlannedPoint> kept;
    for (const auto& label : flags.points) {
      auto it = std::find_if(plan.points.begin(), plan.points.end(),
                             [&](const PlannedPoint& p) { return p.label == label; });
      if (it == plan.points.end()) {
        std::string known;
        for (const auto& p : plan.points) {
          known += (known.empty() ? "" : ", ") + p.label;
        }
        std::fprintf(stderr, "shardbench scenario: no point '%s' at the %s scale (points: %s)\n",
                     label.c_str(), flags.scale.c_str(), known.c_str());
        return 2;
      }
      kept.push_back(*it);
    }
    plan.points = std::move(kept);
  }
  for (auto& p : plan.points) {
    for (auto& r : p.runs) {
      r.options.client_cpus = flags.client_cpus;
    }
  }
  CpuBudget cpu_budget;
  cpu_budget.proxy = flags.proxy_cpus;
  cpu_budget.shards = flags.shard_cpus;
  cpu_budget.client = flags.client_cpus;
  cpu_budget.available = allowedCpus();
  cpu_budget.servers_local = flags.targets.empty();
  if (plan.memory_estimate_bytes && flags.targets.empty()) {
    const double need_mb = static_cast<double>(*plan.memory_estimate_bytes) / 1048576.0;
    const double avail_mb = static_cast<double>(memAvailableKb()) / 1024.0;
    if (avail_mb > 0 && need_mb > 0.6 * avail_mb) {
      std::fprintf(stderr,
                   "shardbench scenario: the %s scale needs about %.0f MB of shard memory and "
                   "%.0f MB are available; use a smaller scale or --set to shrink it\n",
                   flags.scale.c_str(), need_mb, avail_mb);
      return 2;
    }
  }
  if (flags.dry_run) {
    std::printf("%s (%s scale): %zu points%s\n", scenario.name.c_str(), flags.scale.c_str(),
                plan.points.size(), scenario.stateful ? ", stateful (run in order)" : "");
    for (const auto& p : plan.points) {
      for (const auto& r : p.runs) {
        std::printf("  %s%s%s: %s\n", p.label.c_str(), r.name.empty() ? "" : " / ", r.name.c_str(),
                    commandLine(r, "HOST", 0).c_str());
      }
      if (!p.skip_reason.empty()) {
        std::printf("  %s: skipped: %s\n", p.label.c_str(), p.skip_reason.c_str());
      }
    }
    return 0;
  }

  installInterruptHandler();
  const auto started = std::chrono::steady_clock::now();
  std::string dir = flags.out_dir.empty()
                        ? "bench-out/" + scenario.name + "-" + flags.scale + "-" + timestamp()
                        : flags.out_dir;
  std::error_code ec;
  std::filesystem::create_directories(dir + "/logs", ec);
  if (ec) {
    std::fprintf(stderr, "shardbench scenario: cannot create %s: %s\n", dir.c_str(),
                 ec.message().c_str());
    return 1;
  }
  MachineInfo machine = machineInfo();
  LocalDeployment deployment;
  std::vector<Target> targets = flags.targets;
  std::string deployment_text;
  if (targets.empty()) {
    DeploymentSpec spec;
    spec.shards = flags.local_shards > 0 ? flags.local_shards : scenario.local_shards;
    spec.workers = flags.workers;
    spec.binaries = flags.binaries;
    spec.proxy_args = flags.proxy_args;
    spec.twemproxy = flags.twemproxy;
    spec.direct = flags.direct;
    spec.log_dir = std::filesystem::absolute(dir + "/logs").string();
    spec.proxy_cpus = flags.proxy_cpus;
    spec.shard_cpus = flags.shard_cpus;
    std::fprintf(stderr, "shardbench scenario: starting %d redis-server shards and shardproxy\n",
                 spec.shards);
    if (!deployment.start(spec, &error)) {
      std::fprintf(stderr, "shardbench scenario: %s\n", error.c_str());
      return 1;
    }
    targets = deployment.targets();
    deployment_text = deployment.description();
  }
  std::fprintf(stderr, "shardbench scenario: %s (%s scale), %zu points x %zu targets x %d -> %s\n",
               scenario.name.c_str(), flags.scale.c_str(), plan.points.size(), targets.size(),
               flags.repeat, dir.c_str());
  std::fprintf(stderr, "shardbench scenario: CPU budget: %s\n", cpu_budget.text().c_str());
  for (const auto& w : cpu_budget.warnings()) {
    std::fprintf(stderr, "shardbench scenario: warning: %s\n", w.c_str());
  }

  ScenarioExecution exec(flags, scenario, plan, targets);
  exec.run();
  deployment.stop();

  ScenarioRun run;
  run.scenario = &scenario;
  run.plan = &plan;
  run.targets = exec.targets();
  run.measurements = std::move(exec.measurements());
  run.repeat = flags.repeat;
  run.cpu_budget = cpu_budget;
  run.command_line = flags.command_line;
  run.deployment = deployment_text;
  run.machine = machine;
  run.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  run.interrupted = interruptRequested();
  run.warnings = std::move(exec.warnings());
  for (auto& w : deployment.logWarnings()) {
    run.warnings.push_back(std::move(w));
  }
  std::string markdown;
  if (!writeScenarioReport(run, dir, &markdown, &error)) {
    std::fprintf(stderr, "shardbench scenario: %s\n", error.c_str());
    return 1;
  }
  std::fputs(markdown.c_str(), stdout);
  std::fprintf(stderr, "shardbench scenario: wrote %s/report.md (%.0f s)\n", dir.c_str(),
               run.wall_s);
  if (run.interrupted) {
    std::fprintf(stderr, "shardbench scenario: interrupted; the report is partial\n");
    return 130;
  }
  for (const auto& m : run.measurements) {
    if (m.status == MeasureStatus::kFailed) {
      return 1;
    }
  }
  return 0;
}

}  // namespace sp::bench
