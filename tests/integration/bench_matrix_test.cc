// shardbench matrix end to end: real redis-server shards and the real shardproxy started by
// shardbench itself for every cell. A 2x2 matrix yields a complete table, JSON and heat maps; a
// cell whose proxy cannot start is reported as failed (never as 0 QPS or a gap); cells with more
// workers than CPUs run and are marked; Ctrl-C writes a partial report; and nothing shardbench
// started outlives it. --proxy measures a proxy that is already running and leaves it running.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
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

// Waits for a shardbench child; past `timeout` it is killed and counts as hung.
CliRun finish(Process& p, std::chrono::steady_clock::time_point deadline) {
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

CliRun runMatrix(const std::string& out, std::vector<std::string> args,
                 std::chrono::seconds timeout = seconds(90)) {
  std::vector<std::string> argv = {SP_SHARDBENCH_BIN, "matrix",         "--out", out,
                                   "--proxy-bin",     SP_SHARDPROXY_BIN};
  argv.insert(argv.end(), args.begin(), args.end());
  Process p(argv, out + ".log");
  return finish(p, std::chrono::steady_clock::now() + timeout);
}

// Processes that still hold a file under `dir` open (a server shardbench started logs there).
std::vector<std::string> holdersOf(const std::string& dir) {
  std::vector<std::string> out;
  const std::string prefix = std::filesystem::canonical(dir).string();
  std::error_code ec;
  for (const auto& proc : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string pid = proc.path().filename().string();
    if (pid.find_first_not_of("0123456789") != std::string::npos) {
      continue;
    }
    for (const char* fd : {"1", "2"}) {
      std::error_code e;
      const auto target = std::filesystem::read_symlink(proc.path() / "fd" / fd, e);
      if (!e && target.string().rfind(prefix, 0) == 0) {
        out.push_back(pid + " (" + target.string() + ")");
      }
    }
  }
  return out;
}

// Checks files with python3 (Debian's): every SVG is well-formed XML, results.json parses, and
// prints one line per matrix cell: "shards workers status set_qps get_qps oversubscribed".
std::string checkResults(const std::string& dir) {
  const std::string script = dir + "/check.py";
  std::ofstream(script) << R"(import glob, json, sys
import xml.etree.ElementTree as ET
d = sys.argv[1]
svgs = sorted(glob.glob(d + "/*.svg"))
for s in svgs:
    root = ET.parse(s).getroot()
    assert root.tag.endswith("svg"), s
print("svgs", len(svgs))
r = json.load(open(d + "/results.json"))
for c in r["cells"]:
    print(c["shards"], c["workers"], c["status"], c["set_qps"], c["get_qps"],
          int(c["oversubscribed"]), c["message"][:200].replace("\n", " "))
)";
  return commandOutput("/usr/bin/python3 " + script + " " + dir + " 2>&1");
}

TEST(BenchMatrixTest, TwoByTwoGivesACompleteTableAndCharts) {
  TempDir dir;
  const std::string out = dir.path() + "/m";
  CliRun r = runMatrix(
      out, {"--shards", "2,4", "--workers", "1,2", "-n", "3000", "-c", "50", "--time-limit", "3"});
  ASSERT_EQ(r.exit_code, 0) << r.log;
  const std::string report = readFile(out + "/report.md");
  EXPECT_NE(report.find("| Proxy workers | 1 | 2 |"), std::string::npos) << report;
  EXPECT_NE(report.find("nproc here is"), std::string::npos);
  EXPECT_NE(report.find("## Seed: SET requests per second"), std::string::npos);
  // The seed's number beside ours where it ran the same cell (2 shards, 2 proxy cores).
  EXPECT_NE(report.find(" (seed 217244) |\n| 4 shards |"), std::string::npos) << report;
  EXPECT_NE(report.find(" (seed 188469) |\n| 4 shards |"), std::string::npos) << report;
  EXPECT_EQ(report.find("failed"), std::string::npos) << report;
  const std::string check = checkResults(out);
  EXPECT_NE(check.find("svgs 4"), std::string::npos) << check;
  for (const char* cell : {"2 1 ok ", "2 2 ok ", "4 1 ok ", "4 2 ok "}) {
    EXPECT_NE(check.find(cell), std::string::npos) << cell << "\n" << check;
  }
  EXPECT_EQ(check.find("None"), std::string::npos) << check;  // every cell has both numbers
  EXPECT_TRUE(std::filesystem::exists(out + "/results.csv"));
  EXPECT_TRUE(std::filesystem::exists(out + "/runs/4shards-2workers-r1.json"));
  EXPECT_TRUE(holdersOf(out).empty()) << holdersOf(out).front();
}

TEST(BenchMatrixTest, CellsWithMoreWorkersThanCpusRunAndAreMarked) {
  TempDir dir;
  const std::string out = dir.path() + "/m";
  const unsigned over = std::thread::hardware_concurrency() + 1;
  CliRun r = runMatrix(out, {"--shards", "2", "--workers", std::to_string(over), "-n", "2000", "-c",
                             "20", "--time-limit", "3"});
  ASSERT_EQ(r.exit_code, 0) << r.log;
  const std::string report = readFile(out + "/report.md");
  EXPECT_NE(report.find("| Proxy workers | " + std::to_string(over) + " † |"), std::string::npos)
      << report;
  EXPECT_NE(checkResults(out).find("2 " + std::to_string(over) + " ok "), std::string::npos);
}

TEST(BenchMatrixTest, AProxyThatDoesNotStartIsAFailedCell) {
  TempDir dir;
  const std::string out = dir.path() + "/m";
  // A flag the proxy rejects: it exits with status 2 in every cell.
  CliRun r = runMatrix(out, {"--shards", "2", "--workers", "1,2", "-n", "1000", "-c", "10",
                             "--proxy-args", "--no-such-flag"});
  EXPECT_EQ(r.exit_code, 1) << r.log;
  const std::string report = readFile(out + "/report.md");
  EXPECT_NE(report.find("| 2 shards | failed [1] | failed [2] |"), std::string::npos) << report;
  EXPECT_NE(report.find("exited with status 2"), std::string::npos) << report;
  const std::string check = checkResults(out);
  EXPECT_NE(check.find("2 1 failed None None"), std::string::npos) << check;
  EXPECT_NE(check.find("2 2 failed None None"), std::string::npos) << check;
  EXPECT_TRUE(holdersOf(out).empty());

  // A proxy binary that does not exist.
  const std::string out2 = dir.path() + "/m2";
  std::vector<std::string> argv = {SP_SHARDBENCH_BIN,
                                   "matrix",
                                   "--out",
                                   out2,
                                   "--shards",
                                   "2",
                                   "--workers",
                                   "1",
                                   "-n",
                                   "1000",
                                   "--proxy-bin",
                                   dir.path() + "/no-such-shardproxy"};
  Process p(argv, out2 + ".log");
  r = finish(p, std::chrono::steady_clock::now() + seconds(60));
  EXPECT_EQ(r.exit_code, 1) << r.log;
  EXPECT_NE(readFile(out2 + "/report.md").find("cannot execute"), std::string::npos);
  EXPECT_NE(checkResults(out2).find("2 1 failed None None"), std::string::npos);
}

TEST(BenchMatrixTest, ProxyFlagMeasuresAProxyThatIsAlreadyRunning) {
  auto shards = startShards(2);
  ProxyProcess proxy(shardList(shards), 1);
  TempDir dir;
  const std::string address = "127.0.0.1:" + std::to_string(proxy.port());
  const std::vector<std::string> load = {"-n", "2000", "-c", "20", "--time-limit", "3"};

  // Labelled with its shard and worker counts.
  const std::string out = dir.path() + "/m";
  std::vector<std::string> args = {"--proxy", "2x1=" + address};
  args.insert(args.end(), load.begin(), load.end());
  CliRun r = runMatrix(out, args);
  ASSERT_EQ(r.exit_code, 0) << r.log;
  const std::string report = readFile(out + "/report.md");
  EXPECT_NE(report.find("proxies already running (--proxy)"), std::string::npos) << report;
  EXPECT_NE(report.find("| Proxy workers | 1 |"), std::string::npos) << report;
  EXPECT_NE(report.find(address), std::string::npos) << report;
  EXPECT_NE(checkResults(out).find("2 1 ok "), std::string::npos);
  // The load went through that proxy into its shards, and shardbench left the proxy running.
  EXPECT_TRUE(proxy.process().alive());
  EXPECT_EQ(Client(proxy.port()).cmd({"PING"}), "PONG");
  long keys = 0;
  for (const auto& s : shards) {
    keys += std::stol(Client(s->port()).cmd({"DBSIZE"}).substr(10));  // "(integer) N"
  }
  EXPECT_GT(keys, 0);
  EXPECT_TRUE(std::filesystem::is_empty(out + "/logs"));  // it started no server of its own

  // Unlabelled: the single --shards and --workers values say what it is.
  const std::string out2 = dir.path() + "/m2";
  args = {"--proxy", address, "--shards", "2", "--workers", "1"};
  args.insert(args.end(), load.begin(), load.end());
  r = runMatrix(out2, args);
  ASSERT_EQ(r.exit_code, 0) << r.log;
  EXPECT_NE(checkResults(out2).find("2 1 ok "), std::string::npos);

  // Unlabelled without them is a usage error.
  args = {"--proxy", address};
  args.insert(args.end(), load.begin(), load.end());
  r = runMatrix(dir.path() + "/m3", args);
  EXPECT_EQ(r.exit_code, 2) << r.log;
  EXPECT_NE(r.log.find("SHARDSxWORKERS"), std::string::npos) << r.log;
}

TEST(BenchMatrixTest, CtrlCStopsEverythingAndWritesAPartialReport) {
  TempDir dir;
  const std::string out = dir.path() + "/m";
  std::vector<std::string> argv = {SP_SHARDBENCH_BIN,
                                   "matrix",
                                   "--out",
                                   out,
                                   "--proxy-bin",
                                   SP_SHARDPROXY_BIN,
                                   "--shards",
                                   "2,4",
                                   "--workers",
                                   "1,2",
                                   "-n",
                                   "100000000",
                                   "-c",
                                   "50",
                                   "--time-limit",
                                   "60"};
  Process p(argv, out + ".log");
  // Wait until the first cell's load is running (its proxy log exists, then a moment).
  const auto deadline = std::chrono::steady_clock::now() + seconds(30);
  while (std::chrono::steady_clock::now() < deadline &&
         !std::filesystem::exists(out + "/logs/proxy-2x1.log")) {
    std::this_thread::sleep_for(milliseconds(20));
  }
  std::this_thread::sleep_for(milliseconds(1500));
  const auto interrupted_at = std::chrono::steady_clock::now();
  p.signal(SIGINT);
  CliRun r = finish(p, std::chrono::steady_clock::now() + seconds(30));
  EXPECT_EQ(r.exit_code, 130) << r.log;
  EXPECT_LT(std::chrono::steady_clock::now() - interrupted_at, seconds(15));
  const std::string report = readFile(out + "/report.md");
  EXPECT_NE(report.find("(interrupted)"), std::string::npos) << report;
  EXPECT_NE(report.find("not run"), std::string::npos) << report;
  const auto holders = holdersOf(out);
  EXPECT_TRUE(holders.empty()) << holders.front();
}

}  // namespace
}  // namespace sp::test
