// Flags, server life cycle and the cell loop of `shardbench matrix`.
#include "matrix_command.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>

#include "command_template.h"
#include "cpu_budget.h"
#include "interrupt.h"
#include "machine_info.h"
#include "matrix_report.h"
#include "options.h"
#include "point_executor.h"
#include "scale_label.h"
#include "target.h"

namespace sp::bench {
namespace {

struct MatrixFlags {
  std::vector<int> shards = {2, 4, 8, 16};
  std::vector<int> workers = {1, 2, 4, 8};
  bool shards_given = false;
  bool workers_given = false;
  std::string scale = "quick";
  uint64_t requests = 0;  // 0: from the scale
  double time_limit = 0;  // 0: from the scale
  int connections = 960;
  int threads = 0;  // 0: from nproc
  int data_size = 256;
  int key_space = 10000;
  int pipeline = 1;
  std::string tests = "set,get";
  int repeat = 0;  // 0: from the scale
  CpuList proxy_cpus;
  CpuList shard_cpus;
  CpuList client_cpus;
  std::vector<std::pair<std::string, Endpoint>> proxies;  // "SxW" label (or "") -> address
  ServerBinaries binaries;
  std::vector<std::string> proxy_args;
  std::string out_dir;
  bool print_report = false;  // also print report.md (about 170 columns wide) on stdout
  bool help = false;
  std::string command_line;
};

bool parseIntList(const std::string& v, const std::string& flag, int lo, int hi,
                  std::vector<int>* out, std::string* error) {
  out->clear();
  size_t start = 0;
  while (start <= v.size()) {
    size_t comma = v.find(',', start);
    if (comma == std::string::npos) {
      comma = v.size();
    }
    const std::string part = v.substr(start, comma - start);
    char* end = nullptr;
    const long n = std::strtol(part.c_str(), &end, 10);
    if (part.empty() || *end != '\0' || n < lo || n > hi) {
      *error = "invalid value '" + v + "' for " + flag + ": expected integers from " +
               std::to_string(lo) + " to " + std::to_string(hi) + ", comma-separated";
      return false;
    }
    out->push_back(static_cast<int>(n));
    start = comma + 1;
  }
  return !out->empty();
}

bool parseOne(const std::string& v, const std::string& flag, long lo, long hi, long* out,
              std::string* error) {
  char* end = nullptr;
  const long n = std::strtol(v.c_str(), &end, 10);
  if (v.empty() || *end != '\0' || n < lo || n > hi) {
    *error = "invalid value '" + v + "' for " + flag + ": expected an integer from " +
             std::to_string(lo) + " to " + std::to_string(hi);
    return false;
  }
  *out = n;
  return true;
}

bool parseFlags(const std::vector<std::string>& args, MatrixFlags* f, std::string* error) {
  f->command_line = "shardbench matrix";
  for (const auto& a : args) {
    f->command_line += " " + a;
  }
  for (size_t i = 0; i < args.size(); ++i) {
    std::string name = args[i];
    std::string value;
    bool has_value = false;
    if (name.rfind("--", 0) == 0 && name.find('=') != std::string::npos) {
      value = name.substr(name.find('=') + 1);
      name = name.substr(0, name.find('='));
      has_value = true;
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
    long n = 0;
    if (name == "--help" || name == "-h") {
      f->help = true;
    } else if (name == "--shards") {
      if (!take() || !parseIntList(value, name, 1, 64, &f->shards, error)) {
        return false;
      }
      f->shards_given = true;
    } else if (name == "--workers") {
      if (!take() || !parseIntList(value, name, 1, 1024, &f->workers, error)) {
        return false;
      }
      f->workers_given = true;
    } else if (name == "--scale") {
      if (!take()) {
        return false;
      }
      if (value != "quick" && value != "full") {
        *error = "invalid value '" + value + "' for --scale: expected quick or full";
        return false;
      }
      f->scale = value;
    } else if (name == "-n") {
      if (!take() || !parseOne(value, name, 1, 1L << 40, &n, error)) {
        return false;
      }
      f->requests = static_cast<uint64_t>(n);
    } else if (name == "--time-limit") {
      if (!take() || !parseOne(value, name, 1, 86400, &n, error)) {
        return false;
      }
      f->time_limit = static_cast<double>(n);
    } else if (name == "-c") {
      if (!take() || !parseOne(value, name, 1, 1000000, &n, error)) {
        return false;
      }
      f->connections = static_cast<int>(n);
    } else if (name == "--threads") {
      if (!take() || !parseOne(value, name, 1, 1024, &n, error)) {
        return false;
      }
      f->threads = static_cast<int>(n);
    } else if (name == "-d") {
      if (!take() || !parseOne(value, name, 1, 512 << 20, &n, error)) {
        return false;
      }
      f->data_size = static_cast<int>(n);
    } else if (name == "-r") {
      if (!take() || !parseOne(value, name, 1, 1L << 40, &n, error)) {
        return false;
      }
      f->key_space = static_cast<int>(n);
    } else if (name == "-P") {
      if (!take() || !parseOne(value, name, 1, 100000, &n, error)) {
        return false;
      }
      f->pipeline = static_cast<int>(n);
    } else if (name == "-t") {
      if (!take()) {
        return false;
      }
      f->tests = value;
    } else if (name == "--repeat") {
      if (!take() || !parseOne(value, name, 1, 100, &n, error)) {
        return false;
      }
      f->repeat = static_cast<int>(n);
    } else if (name == "--proxy-cpus" || name == "--shard-cpus" || name == "--client-cpus") {
      CpuList* cpus = name == "--proxy-cpus"   ? &f->proxy_cpus
                      : name == "--shard-cpus" ? &f->shard_cpus
                                               : &f->client_cpus;
      if (!take() || !parseCpuFlag(name, value, allowedCpus(), cpus, error)) {
        return false;
      }
    } else if (name == "--proxy") {
      if (!take()) {
        return false;
      }
      std::string label;
      std::string address = value;
      const size_t eq = value.find('=');
      if (eq != std::string::npos) {
        label = value.substr(0, eq);
        address = value.substr(eq + 1);
      }
      Endpoint ep;
      if (!parseEndpoint(address, &ep, error)) {
        *error = "--proxy: " + *error;
        return false;
      }
      f->proxies.emplace_back(label, ep);
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
    } else if (name == "--proxy-args") {
      if (!take() || !CommandTemplate::split(value, &f->proxy_args, error)) {
        return false;
      }
    } else if (name == "--print-report") {
      f->print_report = true;
    } else if (name == "--out") {
      if (!take()) {
        return false;
      }
      f->out_dir = value;
    } else if (isTlsFlag(name)) {
      *error = name +
               " applies to the run command only (shardbench --tls -h HOST -p PORT ...): matrix "
               "starts its own shards and proxy without TLS, and its setup connections "
               "(FLUSHALL, INFO) have no TLS";
      return false;
    } else {
      *error = "unknown flag '" + name + "' (see shardbench matrix --help)";
      return false;
    }
  }
  if (!f->proxies.empty() && (!f->proxy_cpus.empty() || !f->shard_cpus.empty())) {
    *error =
        "--proxy measures proxies that already run: --proxy-cpus and --shard-cpus pin only "
        "servers shardbench starts (--client-cpus still applies)";
    return false;
  }
  if (f->binaries.shardproxy.empty()) {
    f->binaries.shardproxy = defaultProxyBinary();
  }
  return true;
}

// --proxy labels: "4x8" (4 shards, 8 workers). An unlabelled proxy takes the single --shards
// and --workers values.
bool proxyCells(MatrixFlags& f, std::vector<std::pair<int, int>>* coords, std::string* error) {
  std::vector<int> shards;
  std::vector<int> workers;
  for (const auto& [label, ep] : f.proxies) {
    int s = 0;
    int w = 0;
    if (label.empty()) {
      if (!f.shards_given || !f.workers_given || f.shards.size() != 1 || f.workers.size() != 1) {
        *error =
            "--proxy HOST:PORT needs one --shards and one --workers value (the proxy's own), "
            "or label each proxy as SHARDSxWORKERS=HOST:PORT";
        return false;
      }
      s = f.shards[0];
      w = f.workers[0];
    } else if (std::sscanf(label.c_str(), "%dx%d", &s, &w) != 2 || s < 1 || w < 1) {
      *error = "--proxy label '" + label + "': expected SHARDSxWORKERS such as 4x8";
      return false;
    }
    coords->emplace_back(s, w);
    if (std::find(shards.begin(), shards.end(), s) == shards.end()) {
      shards.push_back(s);
    }
    if (std::find(workers.begin(), workers.end(), w) == workers.end()) {
      workers.push_back(w);
    }
  }
  std::sort(shards.begin(), shards.end());
  std::sort(workers.begin(), workers.end());
  f.shards = shards;
  f.workers = workers;
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

std::string cellLabel(const MatrixCell& cell) {
  return std::to_string(cell.shards) + "x" + std::to_string(cell.workers);
}

Measurement failedCell(const std::string& label, const std::string& message, int rep) {
  Measurement m;
  m.point = label;
  m.target = "shardproxy";
  m.rep = rep;
  m.status = MeasureStatus::kFailed;
  m.message = message;
  return m;
}

void reportCell(size_t done, size_t total, const MatrixCell& cell, const Measurement& m) {
  if (m.status == MeasureStatus::kOk) {
    std::fprintf(stderr, "[%zu/%zu] %d shards x %d workers: SET %.0f/s, GET %.0f/s (%.1f s)\n",
                 done, total, cell.shards, cell.workers,
                 metricValue(m, "SET", Metric::kQps).value_or(0),
                 metricValue(m, "GET", Metric::kQps).value_or(0), m.wall_s);
  } else {
    std::fprintf(stderr, "[%zu/%zu] %d shards x %d workers: failed: %s\n", done, total, cell.shards,
                 cell.workers, m.message.substr(0, 300).c_str());
  }
}

// The few lines the terminal gets after the progress lines: how many cells ran, the CPU budget,
// the best SET and GET cells (or which cells are within noise of them), and whether this was a
// measurement at all.
void printSummary(const MatrixRun& run) {
  size_t ok = 0;
  size_t failed = 0;
  size_t not_run = 0;
  for (const auto& row : run.cells) {
    for (const auto& cell : row) {
      if (cell.reps.empty()) {
        ++not_run;
        continue;
      }
      const bool any_ok = std::any_of(cell.reps.begin(), cell.reps.end(),
                                      [](const auto& m) { return m.status == MeasureStatus::kOk; });
      ++(any_ok ? ok : failed);
    }
  }
  std::printf(
      "shardbench matrix (%s scale%s): %zu cells measured, %zu failed, %zu not run in %.0f s\n",
      run.scale.c_str(), isQuickScale(run.scale) ? ", a smoke test, not a measurement" : "", ok,
      failed, not_run, run.wall_s);
  std::printf("  %d repetition%s per cell; CPU budget: %s\n", run.repeat,
              run.repeat == 1 ? "" : "s", run.cpu_budget.text().c_str());
  for (const auto& w : run.cpu_budget.warnings()) {
    std::printf("  warning: %s\n", w.c_str());
  }
  for (const char* op : {"SET", "GET"}) {
    const BestCell best = bestCell(run, op);
    if (best.cell != nullptr) {
      std::printf("  %s\n", bestCellText(best, op).c_str());
    }
  }
}

}  // namespace

std::string matrixHelpText() {
  return R"(Usage: shardbench matrix [FLAGS]

The proxy table of 000_c339298947676b8e.txt: rows = shard counts, columns = proxy worker counts,
cells = SET and GET requests per second of `-t set,get -d 256 -r 10000` with many connections.
For every cell it starts the redis-server shards (once per row, FLUSHALL between cells) and the
shardproxy of this build with that many workers on free loopback ports, and stops everything at
the end (also on Ctrl-C). Worker counts above nproc (or above the --proxy-cpus count) still run;
those cells are marked. A cell
whose proxy does not start (or dies) is reported as failed with the reason.

Matrix:
  --shards LIST          shard counts (default 2,4,8,16)
  --workers LIST         proxy worker counts (default 1,2,4,8)
  --scale quick|full     quick (default): -n 20000, 5 s per test, 1 repetition, a smoke test
                         (not published); full: -n 1000000, 12 s per test, 3 repetitions
  --repeat N             run each cell N times (default from --scale): tables show the median
                         and the min-max range, heat maps the range under the median; a cell is
                         called better than another only when their ranges do not overlap
  --proxy [SxW=]H:P      measure a proxy that is already running instead (repeatable; label
                         it with its shard and worker counts, e.g. 4x8=10.0.0.5:6380)

Load of every cell (shardbench flags; defaults follow the seed, sized for this machine):
  -n N                   requests per test (default from --scale)
  --time-limit SECS      end a test after SECS seconds (default from --scale)
  -c N                   connections (default 960, as the seed)
  --threads N            client threads (default: half the CPUs, at least 1; with
                         --client-cpus, one per CPU in the list)
  -d BYTES               value size (default 256)
  -r N                   key space (default 10000)
  -P N                   pipeline (default 1)
  -t LIST                tests (default set,get)

CPU pinning (LIST: CPU numbers and ranges, e.g. 0, 1-3 or 0,2; default: unpinned):
  --proxy-cpus LIST      run every shardproxy on these CPUs
  --shard-cpus LIST      run the redis-server shards on these CPUs
  --client-cpus LIST     run shardbench's client threads on these CPUs
                         The report states each part's CPUs ("proxy: CPU 0; shards: CPU 1;
                         client: CPU 1") and warns when two parts may share a CPU.

Servers:
  --proxy-bin PATH       shardproxy (default: proxy/shardproxy of this build tree)
  --redis-server-bin P   default /usr/bin/redis-server
  --proxy-args 'ARGS'    extra shardproxy flags (a bad one makes every cell fail, as it should)

Output:
  --out DIR              result directory (default bench-out/matrix-SCALE-TIMESTAMP)
  --print-report         also print the full report (report.md, about 170 columns) on stdout

The terminal gets one progress line per cell, then a short summary and the path of report.md;
the tables, heat maps and result files are in DIR. A quick run is a smoke test, not a
measurement: its titles and chart file names say so, and tools/bench-report.sh does not
publish it.

Exit status: 0 every cell measured, 1 a cell failed, 2 bad flags, 130 interrupted.
)";
}

int runMatrixCommand(const std::vector<std::string>& args) {
  MatrixFlags f;
  std::string error;
  if (!parseFlags(args, &f, &error)) {
    std::fprintf(stderr, "shardbench matrix: %s\n", error.c_str());
    return 2;
  }
  if (f.help) {
    std::fputs(matrixHelpText().c_str(), stdout);
    return 0;
  }
  std::vector<std::pair<int, int>> proxy_coords;
  const bool external = !f.proxies.empty();
  if (external && !proxyCells(f, &proxy_coords, &error)) {
    std::fprintf(stderr, "shardbench matrix: %s\n", error.c_str());
    return 2;
  }
  const unsigned nproc = onlineCpus();
  if (f.threads == 0) {
    f.threads = f.client_cpus.empty() ? std::max(1, static_cast<int>(nproc / 2))
                                      : static_cast<int>(f.client_cpus.size());
  }
  if (f.requests == 0) {
    f.requests = f.scale == "full" ? 1000000 : 20000;
  }
  if (f.time_limit == 0) {
    f.time_limit = f.scale == "full" ? 12 : 5;
  }
  if (f.repeat == 0) {
    f.repeat = f.scale == "full" ? 3 : 1;
  }
  if (f.connections < f.threads) {
    f.threads = f.connections;
  }
  std::vector<std::string> load = {"-t",
                                   f.tests,
                                   "-d",
                                   std::to_string(f.data_size),
                                   "-r",
                                   std::to_string(f.key_space),
                                   "-c",
                                   std::to_string(f.connections),
                                   "--threads",
                                   std::to_string(f.threads),
                                   "-n",
                                   std::to_string(f.requests),
                                   "--time-limit",
                                   std::to_string(static_cast<int>(f.time_limit)),
                                   "-P",
                                   std::to_string(f.pipeline),
                                   "--connect-timeout",
                                   "30000"};
  PlannedRun run;
  {
    std::vector<std::string> check = load;
    check.insert(check.end(), {"-h", "127.0.0.1", "-p", "1", "--no-progress"});
    if (!parseOptions(check, &run.options, &error)) {
      std::fprintf(stderr, "shardbench matrix: load flags: %s\n", error.c_str());
      return 2;
    }
    run.args = load;
    run.options.client_cpus = f.client_cpus;
  }
  std::string load_text;
  for (const auto& a : load) {
    load_text += (load_text.empty() ? "" : " ") + a;
  }
  raiseOpenFileLimit();
  installInterruptHandler();

  const std::string dir =
      f.out_dir.empty() ? "bench-out/matrix-" + f.scale + "-" + timestamp() : f.out_dir;
  std::error_code ec;
  std::filesystem::create_directories(dir + "/logs", ec);
  if (ec) {
    std::fprintf(stderr, "shardbench matrix: cannot create %s: %s\n", dir.c_str(),
                 ec.message().c_str());
    return 1;
  }
  const std::string log_dir = std::filesystem::absolute(dir + "/logs").string();

  MatrixRun result;
  result.shards = f.shards;
  result.workers = f.workers;
  result.scale = f.scale;
  result.load_args = load_text;
  result.command_line = f.command_line;
  result.machine = machineInfo();
  result.external = external;
  result.repeat = f.repeat;
  result.cpu_budget.proxy = f.proxy_cpus;
  result.cpu_budget.shards = f.shard_cpus;
  result.cpu_budget.client = f.client_cpus;
  result.cpu_budget.available = allowedCpus();
  result.cpu_budget.servers_local = !external;
  result.cells.resize(f.shards.size());
  for (size_t r = 0; r < f.shards.size(); ++r) {
    for (int w : f.workers) {
      MatrixCell cell;
      cell.shards = f.shards[r];
      cell.workers = w;
      result.cells[r].push_back(cell);
    }
  }
  std::string shard_list;
  for (int x : f.shards) {
    shard_list += (shard_list.empty() ? "" : ",") + std::to_string(x);
  }
  std::string worker_list;
  const unsigned proxy_cpus =
      f.proxy_cpus.empty() ? nproc : static_cast<unsigned>(f.proxy_cpus.size());
  for (int x : f.workers) {
    worker_list += (worker_list.empty() ? "" : ",") + std::to_string(x);
    if (static_cast<unsigned>(x) > proxy_cpus) {
      worker_list += f.proxy_cpus.empty() ? "(>nproc)" : "(>proxy CPUs)";
    }
  }
  std::fprintf(stderr,
               "shardbench matrix: shards %s x workers %s, nproc %u; every cell: shardbench %s "
               "-> %s\n",
               shard_list.c_str(), worker_list.c_str(), nproc, load_text.c_str(), dir.c_str());
  std::fprintf(stderr, "shardbench matrix: %d repetition%s per cell; CPU budget: %s\n", f.repeat,
               f.repeat == 1 ? "" : "s", result.cpu_budget.text().c_str());
  for (const auto& w : result.cpu_budget.warnings()) {
    std::fprintf(stderr, "shardbench matrix: warning: %s\n", w.c_str());
  }

  const auto started = std::chrono::steady_clock::now();
  const size_t total = (external ? proxy_coords.size() : f.shards.size() * f.workers.size()) *
                       static_cast<size_t>(f.repeat);
  size_t done = 0;
  ExecuteOptions exec_options;
  auto measureCell = [&](MatrixCell& cell, const Target& target) {
    for (int rep = 0; rep < f.repeat && !interruptRequested(); ++rep) {
      PlannedPoint point;
      point.label = cellLabel(cell);
      point.runs.push_back(run);
      point.connections = static_cast<uint64_t>(f.connections);
      if (!target.flush.empty()) {
        std::string flush_error;
        if (!flushAll(target.flush, &flush_error)) {
          cell.reps.push_back(failedCell(point.label, "FLUSHALL failed: " + flush_error, rep));
          reportCell(++done, total, cell, cell.reps.back());
          continue;
        }
      }
      Measurement m = executePoint(point, target, rep, exec_options);
      reportCell(++done, total, cell, m);
      cell.reps.push_back(std::move(m));
    }
  };

  if (external) {
    for (size_t i = 0; i < f.proxies.size() && !interruptRequested(); ++i) {
      const auto [s, w] = proxy_coords[i];
      for (size_t r = 0; r < f.shards.size(); ++r) {
        for (size_t c = 0; c < f.workers.size(); ++c) {
          MatrixCell& cell = result.cells[r][c];
          if (cell.shards == s && cell.workers == w) {
            Target target;
            target.name = "shardproxy";
            target.endpoint = f.proxies[i].second;
            cell.address = target.endpoint.text();
            measureCell(cell, target);
          }
        }
      }
    }
    result.deployment = "proxies already running (--proxy)";
  } else {
    const std::vector<std::string> proxy_args = [&] {
      std::vector<std::string> a = defaultProxyArgs(f.binaries.shardproxy);
      a.insert(a.end(), f.proxy_args.begin(), f.proxy_args.end());
      return a;
    }();
    result.deployment = "redis-server shards (" + versionOf(f.binaries.redis_server) +
                        ") and shardproxy (" + f.binaries.shardproxy +
                        ") started per cell on loopback; shards flushed between cells";
    for (size_t r = 0; r < f.shards.size() && !interruptRequested(); ++r) {
      std::vector<std::unique_ptr<LocalServer>> shards;
      std::string shard_error;
      for (int i = 0; i < f.shards[r] && shard_error.empty(); ++i) {
        auto s = startRedis(f.binaries.redis_server,
                            "r" + std::to_string(f.shards[r]) + "-shard" + std::to_string(i),
                            log_dir, &shard_error, f.shard_cpus);
        if (s != nullptr) {
          shards.push_back(std::move(s));
        }
      }
      std::vector<Endpoint> endpoints;
      for (const auto& s : shards) {
        endpoints.push_back(s->endpoint());
      }
      for (size_t c = 0; c < f.workers.size() && !interruptRequested(); ++c) {
        MatrixCell& cell = result.cells[r][c];
        if (!shard_error.empty()) {
          for (int rep = 0; rep < f.repeat; ++rep) {
            cell.reps.push_back(failedCell(cellLabel(cell), shard_error, rep));
            reportCell(++done, total, cell, cell.reps.back());
          }
          continue;
        }
        std::string proxy_error;
        auto proxy =
            f.binaries.shardproxy.empty()
                ? nullptr
                : startProxy(
                      f.binaries.shardproxy,
                      "proxy-" + std::to_string(cell.shards) + "x" + std::to_string(cell.workers),
                      endpoints, cell.workers, proxy_args, log_dir, &proxy_error, f.proxy_cpus);
        if (proxy == nullptr) {
          if (f.binaries.shardproxy.empty()) {
            proxy_error = "no shardproxy binary: build the shardproxy target or pass --proxy-bin";
          }
          for (int rep = 0; rep < f.repeat; ++rep) {
            cell.reps.push_back(failedCell(cellLabel(cell), proxy_error, rep));
            reportCell(++done, total, cell, cell.reps.back());
          }
          continue;
        }
        Target target;
        target.name = "shardproxy";
        target.endpoint = proxy->endpoint();
        target.pid = proxy->pid();
        target.process = &proxy->process();
        target.flush = endpoints;
        target.local = true;
        cell.address = target.endpoint.text();
        measureCell(cell, target);
        proxy->stop();
        if (auto warning = logWarningSummary(log_dir, proxy->name())) {
          result.warnings.push_back(std::move(*warning));
        }
      }
      for (auto& s : shards) {
        s->stop();
      }
    }
  }
  result.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  result.interrupted = interruptRequested();
  std::string markdown;
  if (!writeMatrixReport(result, dir, &markdown, &error)) {
    std::fprintf(stderr, "shardbench matrix: %s\n", error.c_str());
    return 1;
  }
  if (f.print_report) {
    std::fputs(markdown.c_str(), stdout);
  }
  printSummary(result);
  std::printf("report: %s/report.md\n", dir.c_str());
  if (result.interrupted) {
    std::fprintf(stderr, "shardbench matrix: interrupted; the report is partial\n");
    return 130;
  }
  for (const auto& row : result.cells) {
    for (const auto& cell : row) {
      for (const auto& m : cell.reps) {
        if (m.status != MeasureStatus::kOk) {
          return 1;
        }
      }
    }
  }
  return 0;
}

}  // namespace sp::bench
