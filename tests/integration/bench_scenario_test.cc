// shardbench scenario end to end: every shipped scenario file runs at its smallest size against a
// real redis-server; the Codis long-connection scenario really holds 2,000 client connections on
// a real shardproxy (seen in the proxy's INFO while it runs); side-by-side runs against
// shardproxy, twemproxy and one shard, or targets given as repeated --target flags, alternate
// between repetitions and show ratios; an unreachable target is a failed point; and the publishing
// script turns result directories into docs/benchmarks.md and the README's block.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "integration/harness.h"

namespace sp::test {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

struct CliRun {
  int exit_code = -1;  // -1: killed by a signal or hung
  std::string log;
};

std::string readFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

CliRun runCommand(const std::string& log, const std::vector<std::string>& argv,
                  std::chrono::seconds timeout) {
  Process p(argv, log);
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (p.alive() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(milliseconds(10));
  }
  CliRun r;
  if (p.alive()) {
    p.stop(SIGKILL);
    r.log = p.log() + "\n[test: shardbench hung and was killed]";
    return r;
  }
  const int st = p.exitStatus();
  r.exit_code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  r.log = p.log();
  return r;
}

CliRun runScenario(const std::string& log, std::vector<std::string> args,
                   std::chrono::seconds timeout = seconds(90)) {
  std::vector<std::string> argv = {SP_SHARDBENCH_BIN, "scenario"};
  argv.insert(argv.end(), args.begin(), args.end());
  return runCommand(log, argv, timeout);
}

// python3 (Debian's) checks: SVGs are well-formed XML; prints "svgs N" and one line per
// measurement: "point|target|rep|status|row=qps,row=qps,...|connected_clients".
std::string checkResults(const std::string& dir) {
  const std::string script = dir + "/check.py";
  std::ofstream(script) << R"(import glob, json, sys
import xml.etree.ElementTree as ET
d = sys.argv[1]
svgs = sorted(glob.glob(d + "/*.svg"))
for s in svgs:
    assert ET.parse(s).getroot().tag.endswith("svg"), s
print("svgs", len(svgs))
r = json.load(open(d + "/results.json"))
for m in r["measurements"]:
    rows = ",".join("%s=%d" % (x["row"], x["qps"]) for x in m["rows"])
    print("|".join([m["point"], m["target"], str(m["rep"]), m["status"], rows,
                    str(m["connected_clients_peak"]), m["message"][:200]]))
)";
  return commandOutput("/usr/bin/python3 " + script + " " + dir + " 2>&1");
}

// The proxy's connected_clients peak of the checkResults line that starts with `prefix`
// (-1 when there is none).
double connectedClientsPeak(const std::string& check, const std::string& prefix) {
  const size_t at = check.find(prefix);
  if (at == std::string::npos) {
    return -1;
  }
  const std::string line = check.substr(at, check.find('\n', at) - at);
  const size_t last = line.rfind('|');
  const size_t prev = line.rfind('|', last - 1);
  return std::stod(line.substr(prev + 1, last - prev - 1));
}

// The first point of the quick scale (from --dry-run); "" for stateful scenarios, whose points
// build on each other and all run.
std::string smallestPoint(const std::string& file, const std::string& log) {
  CliRun r = runScenario(log, {file, "--dry-run"}, seconds(30));
  EXPECT_EQ(r.exit_code, 0) << r.log;
  if (r.log.find("stateful") != std::string::npos) {
    return "";
  }
  const size_t nl = r.log.find('\n');
  const size_t end = r.log.find(": shardbench ", nl);
  if (nl == std::string::npos || end == std::string::npos) {
    ADD_FAILURE() << r.log;
    return "";
  }
  return r.log.substr(nl + 3, end - nl - 3);  // the line starts with two spaces
}

// Every line of `order` appears in `check`, in that order.
void expectInOrder(const std::string& check, const std::vector<std::string>& order) {
  size_t pos = 0;
  for (const auto& o : order) {
    const size_t at = check.find(o, pos);
    ASSERT_NE(at, std::string::npos) << o << "\n" << check;
    pos = at + 1;
  }
}

TEST(BenchScenarioTest, EveryScenarioRunsAtItsSmallestSizeAgainstRedis) {
  RedisServer redis;
  TempDir dir;
  std::vector<std::string> files;
  for (const auto& e :
       std::filesystem::directory_iterator(std::string(SP_SOURCE_DIR) + "/conf/scenarios")) {
    if (e.path().extension() == ".yaml") {
      files.push_back(e.path().string());
    }
  }
  std::sort(files.begin(), files.end());
  ASSERT_GE(files.size(), 9u);
  for (const auto& file : files) {
    SCOPED_TRACE(file);
    const std::string name = std::filesystem::path(file).stem().string();
    const std::string out = dir.path() + "/" + name;
    const std::string point = smallestPoint(file, out + ".dry.log");
    std::vector<std::string> args = {file, "--target", "redis=" + redis.address(), "--out", out};
    if (!point.empty()) {
      args.insert(args.end(), {"--points", point});
    }
    CliRun r = runScenario(out + ".log", args);
    ASSERT_EQ(r.exit_code, 0) << r.log;
    const std::string check = checkResults(out);
    EXPECT_EQ(check.find("|failed|"), std::string::npos) << check;
    EXPECT_NE(check.find("|redis|1|ok|"), std::string::npos) << check;
    EXPECT_EQ(check.find("=0,"), std::string::npos) << check;  // every row moved requests
    EXPECT_EQ(check.find("svgs 0"), std::string::npos) << check;
    const std::string report = readFile(out + "/report.md");
    EXPECT_NE(report.find("Reproduces `0"), std::string::npos);
    EXPECT_NE(report.find("| redis (this machine) |"), std::string::npos) << report;
    if (readFile(file).find("published:") != std::string::npos) {
      EXPECT_NE(report.find("| seed: "), std::string::npos) << report;
    }
    EXPECT_TRUE(std::filesystem::exists(out + "/results.csv"));
  }
}

TEST(BenchScenarioTest, CodisScenarioHoldsTwoThousandConnectionsOnTheProxy) {
  auto shards = startShards(2);
  ProxyProcess proxy(shardList(shards), 2);
  TempDir dir;
  const std::string out = dir.path() + "/codis";
  std::atomic<bool> done{false};
  std::atomic<long> peak{0};
  std::thread poll([&] {
    Client c(proxy.port());
    while (!done.load()) {
      const std::string info = c.cmd({"INFO", "clients"});
      const size_t at = info.find("connected_clients:");
      if (at != std::string::npos) {
        // Our own polling connection is one of them.
        const long n = std::stol(info.substr(at + 18)) - 1;
        peak.store(std::max(peak.load(), n));
      }
      std::this_thread::sleep_for(milliseconds(50));
    }
  });
  CliRun r = runScenario(
      out + ".log",
      {std::string(SP_SOURCE_DIR) + "/conf/scenarios/codis-long-connections.yaml", "--target",
       "shardproxy=127.0.0.1:" + std::to_string(proxy.port()), "--points", "2000", "--out", out});
  done.store(true);
  poll.join();
  ASSERT_EQ(r.exit_code, 0) << r.log;
  EXPECT_GE(peak.load(), 2000) << "the proxy never saw 2000 clients at once";
  const std::string check = checkResults(out);
  EXPECT_NE(check.find("2000|shardproxy|1|ok|"), std::string::npos) << check;
  // shardbench's own reading of the same INFO field.
  EXPECT_GE(connectedClientsPeak(check, "2000|shardproxy|1|ok|"), 2000) << check;
  EXPECT_NE(readFile(out + "/report.md").find("| 2000 |"), std::string::npos);
}

// More connections than one client address has ephemeral ports: in a network namespace of our
// own whose port range holds 1,000 ports, the 2,000-connection point binds its connections to
// 127.0.0.1..3 (--source-address) and runs, where it used to be skipped. The same path carries
// 40,000 connections over the default range of 28,232 ports.
TEST(BenchScenarioTest, ConnectionsBeyondThePortRangeSpreadOverLoopbackAddresses) {
  if (std::system("/usr/bin/unshare -n true 2>/dev/null") != 0) {
    GTEST_SKIP() << "cannot create a network namespace here (unshare -n)";
  }
  TempDir dir;
  const std::string out = dir.path() + "/ports";
  const std::string script =
      "ip link set lo up && echo '40000 40999' > /proc/sys/net/ipv4/ip_local_port_range && "
      "exec \"$0\" scenario \"$1\" --local-shards 2 --workers 2 --points 2000 --proxy-bin \"$2\" "
      "--out \"$3\"";
  CliRun r = runCommand(out + ".log",
                        {"/usr/bin/unshare", "-n", "/bin/sh", "-c", script, SP_SHARDBENCH_BIN,
                         std::string(SP_SOURCE_DIR) + "/conf/scenarios/codis-long-connections.yaml",
                         SP_SHARDPROXY_BIN, out},
                        seconds(90));
  ASSERT_EQ(r.exit_code, 0) << r.log;
  const std::string check = checkResults(out);
  EXPECT_NE(check.find("2000|shardproxy|1|ok|"), std::string::npos) << check;
  EXPECT_EQ(check.find("|skipped|"), std::string::npos) << check;
  const std::string report = readFile(out + "/report.md");
  EXPECT_NE(report.find("-c 2000 --test-time 3 --source-address 127.0.0.1,127.0.0.2,127.0.0.3"),
            std::string::npos)
      << report;
  EXPECT_GE(connectedClientsPeak(check, "2000|shardproxy|1|ok|"), 2000) << check;
}

TEST(BenchScenarioTest, SideBySideAlternatesTargetsAndShowsRatios) {
  TempDir dir;
  const std::string out = dir.path() + "/sbs";
  CliRun r = runScenario(
      out + ".log", {std::string(SP_SOURCE_DIR) + "/conf/scenarios/kuaijie-data-sizes.yaml",
                     "--local-shards", "2", "--with-twemproxy", "--with-direct", "--points", "512",
                     "--repeat", "2", "--proxy-bin", SP_SHARDPROXY_BIN, "--out", out});
  ASSERT_EQ(r.exit_code, 0) << r.log;
  const std::string check = checkResults(out);
  // Repetition 1 runs shardproxy, twemproxy, redis-server; repetition 2 starts one later.
  const std::vector<std::string> order = {"512|shardproxy|1|ok|",   "512|twemproxy|1|ok|",
                                          "512|redis-server|1|ok|", "512|twemproxy|2|ok|",
                                          "512|redis-server|2|ok|", "512|shardproxy|2|ok|"};
  expectInOrder(check, order);
  const std::string report = readFile(out + "/report.md");
  EXPECT_NE(report.find("ratios are to shardproxy"), std::string::npos) << report;
  EXPECT_NE(report.find("| twemproxy (this machine) |"), std::string::npos) << report;
  EXPECT_NE(report.find("×)"), std::string::npos) << report;
  EXPECT_NE(report.find("2 repetitions (median)"), std::string::npos);
}

TEST(BenchScenarioTest, RepeatedTargetFlagsAlternateAndShowRatiosToTheFirst) {
  RedisServer first;
  RedisServer second;
  TempDir dir;
  const std::string out = dir.path() + "/targets";
  CliRun r =
      runScenario(out + ".log",
                  {std::string(SP_SOURCE_DIR) + "/conf/scenarios/kuaijie-data-sizes.yaml",
                   "--target", "first=" + first.address(), "--target", "second=" + second.address(),
                   "--points", "512", "--repeat", "2", "--out", out});
  ASSERT_EQ(r.exit_code, 0) << r.log;
  const std::string check = checkResults(out);
  const std::vector<std::string> order = {"512|first|1|ok|", "512|second|1|ok|", "512|second|2|ok|",
                                          "512|first|2|ok|"};
  expectInOrder(check, order);
  const std::string report = readFile(out + "/report.md");
  EXPECT_NE(report.find("ratios are to first"), std::string::npos) << report;
  EXPECT_NE(report.find("| first (this machine) |"), std::string::npos) << report;
  EXPECT_NE(report.find("| second (this machine) |"), std::string::npos) << report;
  EXPECT_NE(report.find("×)"), std::string::npos) << report;
  // Both servers really took the load (10,000 keys at most, flushed before each run).
  for (RedisServer* s : {&first, &second}) {
    EXPECT_NE(Client(s->port()).cmd({"DBSIZE"}), "(integer) 0");
  }
}

// tools/bench-report-publish.py (the last step of tools/bench-report.sh) turns result
// directories into docs/benchmarks.md, its charts and the README block between the markers,
// leaving the rest of the README as it was. The run here is a quick one: --allow-quick previews
// the layout (test_bench_report_honesty.py checks that quick results are refused without it).
TEST(BenchScenarioTest, OneCommandRegeneratesTheDocsAndTheReadmeBlock) {
  RedisServer redis;
  TempDir dir;
  const std::string results = dir.path() + "/results";
  CliRun r = runScenario(
      dir.path() + "/run.log",
      {std::string(SP_SOURCE_DIR) + "/conf/scenarios/kuaijie-pipeline.yaml", "--target",
       "redis=" + redis.address(), "--points", "16", "--out", results + "/kuaijie-pipeline"});
  ASSERT_EQ(r.exit_code, 0) << r.log;
  const std::string readme = dir.path() + "/README.md";
  std::ofstream(readme) << "# title\n\nbefore\n<!-- bench:begin -->\nstale\n<!-- bench:end -->\n"
                           "after\n";
  const std::string docs = dir.path() + "/docs/benchmarks.md";
  const std::string log =
      commandOutput("cd " + std::string(SP_SOURCE_DIR) +
                    " && /usr/bin/python3 tools/bench-report-publish.py --allow-quick --results " +
                    results + " --docs " + docs + " --charts " + dir.path() +
                    "/docs/benchmarks --readme " + readme + " 2>&1");
  EXPECT_NE(log.find("wrote"), std::string::npos) << log;
  const std::string page = readFile(docs);
  EXPECT_NE(page.find("## Connections 1..800 with -P 100"), std::string::npos) << page;
  EXPECT_NE(page.find("| redis (this machine) |"), std::string::npos) << page;
  EXPECT_NE(page.find("| seed: "), std::string::npos) << page;
  EXPECT_NE(page.find("](benchmarks/kuaijie-pipeline/"), std::string::npos) << page;
  EXPECT_NE(page.find("Not in this result set: matrix"), std::string::npos) << page;
  EXPECT_TRUE(std::filesystem::exists(dir.path() + "/docs/benchmarks/kuaijie-pipeline"));
  const std::string text = readFile(readme);
  EXPECT_EQ(text.find("stale"), std::string::npos) << text;
  EXPECT_EQ(text.rfind("# title\n\nbefore\n<!-- bench:begin -->\n", 0), 0u) << text;
  EXPECT_NE(text.find("docs/benchmarks.md#"), std::string::npos) << text;
  EXPECT_NE(text.find("<!-- bench:end -->\nafter\n"), std::string::npos) << text;
}

TEST(BenchScenarioTest, AnUnreachableTargetIsAFailedPoint) {
  TempDir dir;
  const std::string out = dir.path() + "/down";
  CliRun r = runScenario(out + ".log",
                         {std::string(SP_SOURCE_DIR) + "/conf/scenarios/kuaijie-connections.yaml",
                          "--target", "nobody=127.0.0.1:" + std::to_string(freePort()), "--points",
                          "16", "--no-flush", "--out", out},
                         seconds(60));
  EXPECT_EQ(r.exit_code, 1) << r.log;
  EXPECT_NE(checkResults(out).find("16|nobody|1|failed|"), std::string::npos);
  EXPECT_NE(readFile(out + "/report.md").find("failed [1]"), std::string::npos);
}

}  // namespace
}  // namespace sp::test
