// The matrix result directory: a quick run says it is a smoke test in every title and in the
// names of its heat maps; a full run does not; the seed's heat maps are captioned as published.
// Repeated cells show their min–max, a best cell is named only when no other range overlaps its
// own, and the CPU budget is stated with its shared-CPU warnings.
#include "matrix_report.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace sp::bench {
namespace {

std::string readFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

class MatrixReportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = (std::filesystem::temp_directory_path() /
            ("sp_matrix_report_" + std::to_string(::getpid()) + "_" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name()))
               .string();
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // One 2-shard x 1-worker cell with one measured repetition.
  static MatrixRun run(const std::string& scale) {
    MatrixRun r;
    r.scale = scale;
    r.shards = {2};
    r.workers = {1};
    r.machine.nproc = 4;
    r.load_args = "-t set,get";
    r.command_line = "shardbench matrix --scale " + scale;
    MatrixCell cell;
    cell.shards = 2;
    cell.workers = 1;
    Measurement m;
    m.status = MeasureStatus::kOk;
    RowSummary set;
    set.name = "SET";
    set.qps = 1000;
    RowSummary get = set;
    get.name = "GET";
    m.rows = {set, get};
    cell.reps.push_back(m);
    r.cells = {{cell}};
    return r;
  }

  std::string dir_;
};

TEST_F(MatrixReportTest, QuickRunSaysSoInTitlesAndFileNames) {
  std::string md;
  std::string error;
  ASSERT_TRUE(writeMatrixReport(run("quick"), dir_, &md, &error)) << error;
  const std::string suffix = "(quick smoke test, not a measurement)";
  EXPECT_EQ(md.rfind("# Proxy workers × shards: SET and GET requests per second " + suffix, 0), 0u)
      << md.substr(0, 200);
  EXPECT_NE(md.find("## SET requests per second (Hiệu năng Set) " + suffix), std::string::npos);
  EXPECT_NE(md.find("## GET requests per second (Hiệu năng Get) " + suffix), std::string::npos);
  EXPECT_NE(md.find("](matrix-set-quick.svg)"), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/matrix-set.svg"));
  const std::string svg = readFile(dir_ + "/matrix-set-quick.svg");
  EXPECT_NE(svg.find("SET requests per second: shards × proxy workers (this machine) " + suffix),
            std::string::npos);
  EXPECT_NE(readFile(dir_ + "/matrix-get-quick.svg").find(suffix), std::string::npos);
  EXPECT_NE(readFile(dir_ + "/results.json").find("\"scale\": \"quick\""), std::string::npos)
      << readFile(dir_ + "/results.json").substr(0, 300);
}

TEST_F(MatrixReportTest, FullRunIsNotCalledQuick) {
  std::string md;
  std::string error;
  ASSERT_TRUE(writeMatrixReport(run("full"), dir_, &md, &error)) << error;
  EXPECT_EQ(md.find("quick"), std::string::npos);
  EXPECT_TRUE(std::filesystem::exists(dir_ + "/matrix-set.svg"));
  EXPECT_TRUE(std::filesystem::exists(dir_ + "/matrix-get.svg"));
  EXPECT_EQ(readFile(dir_ + "/matrix-set.svg").find("quick"), std::string::npos);
  // Our heat map has no published numbers and says nothing about them; the seed's says whose.
  EXPECT_EQ(readFile(dir_ + "/matrix-set.svg").find("published"), std::string::npos);
  EXPECT_NE(readFile(dir_ + "/seed-set.svg").find("published, other hardware and network"),
            std::string::npos);
}

// One measured repetition of a cell with these SET and GET rates.
Measurement rep(double set_qps, double get_qps) {
  Measurement m;
  m.status = MeasureStatus::kOk;
  RowSummary set;
  set.name = "SET";
  set.qps = set_qps;
  RowSummary get = set;
  get.name = "GET";
  get.qps = get_qps;
  m.rows = {set, get};
  return m;
}

// Three cells of 2 shards (1, 2 and 4 workers) with three repetitions each: SET's best cell
// (4 workers) is within noise of 2 workers and clearly ahead of 1; GET's best is ahead of all.
MatrixRun repeatedRun() {
  MatrixRun r;
  r.scale = "full";
  r.repeat = 3;
  r.shards = {2};
  r.workers = {1, 2, 4};
  r.machine.nproc = 4;
  r.load_args = "-t set,get";
  r.command_line = "shardbench matrix --scale full";
  r.cpu_budget.proxy = {0};
  r.cpu_budget.shards = {1};
  r.cpu_budget.client = {1};
  r.cpu_budget.available = {0, 1};
  const double set[3][3] = {{100, 90, 110}, {200, 180, 230}, {210, 220, 190}};
  const double get[3][3] = {{100, 101, 102}, {200, 201, 202}, {300, 310, 290}};
  r.cells.resize(1);
  for (int c = 0; c < 3; ++c) {
    MatrixCell cell;
    cell.shards = 2;
    cell.workers = r.workers[static_cast<size_t>(c)];
    for (int k = 0; k < 3; ++k) {
      cell.reps.push_back(rep(set[c][k], get[c][k]));
      cell.reps.back().rep = k;
    }
    r.cells[0].push_back(cell);
  }
  return r;
}

TEST_F(MatrixReportTest, RepeatedCellsShowTheirSpreadAndNoUnearnedWinner) {
  const MatrixRun r = repeatedRun();
  std::string md;
  std::string error;
  ASSERT_TRUE(writeMatrixReport(r, dir_, &md, &error)) << error;
  EXPECT_NE(md.find("| Proxy workers | 1 | 2 † | 4 † |"), std::string::npos) << md;
  EXPECT_NE(md.find("more proxy workers than the proxy's CPUs (1, --proxy-cpus)"),
            std::string::npos);
  // Median (min–max) in the tables.
  EXPECT_NE(md.find("| 2 shards | 100 (90\u2013110) | 200 (180\u2013230) (seed 217244) | 210 "
                    "(190\u2013220) (seed 386701) |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("- **repetitions**: 3 per cell"), std::string::npos) << md;
  // SET: 4 workers has the highest median but 2 workers' range overlaps it.
  EXPECT_NE(md.find("highest SET median: 210 (190\u2013220) requests/s at 2 shards \u00d7 4 "
                    "workers; within noise of 2\u00d72"),
            std::string::npos)
      << md;
  EXPECT_EQ(md.find("best SET"), std::string::npos) << md;
  EXPECT_NE(md.find("best GET: 300 (290\u2013310) requests/s at 2 shards \u00d7 4 workers, ahead "
                    "of every other cell"),
            std::string::npos)
      << md;
  // The CPU budget and its warning.
  EXPECT_NE(md.find("- **CPU budget**: proxy: CPU 0; shards: CPU 1; client: CPU 1\n"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("- **warning**: the shards and the client share CPU 1"), std::string::npos);

  // Heat maps: the range under each value, the best cell and those within noise of it marked.
  const std::string set_svg = readFile(dir_ + "/matrix-set.svg");
  EXPECT_NE(set_svg.find(">190\u2013220</text>"), std::string::npos) << set_svg;
  // 2 and 4 workers have more workers than the proxy's one CPU (--proxy-cpus 0).
  EXPECT_NE(set_svg.find(">best, † &gt; proxy CPUs</text>"), std::string::npos);
  EXPECT_NE(set_svg.find(">\u2248 best, † &gt; proxy CPUs</text>"), std::string::npos);
  EXPECT_NE(set_svg.find("under a value: min\u2013max of the repetitions"), std::string::npos);
  const std::string get_svg = readFile(dir_ + "/matrix-get.svg");
  EXPECT_EQ(get_svg.find("\u2248 best"), std::string::npos) << "nothing overlaps GET's best";

  // JSON: every repetition's value, the median and the min–max, and the CPU budget.
  const std::string json = readFile(dir_ + "/results.json");
  EXPECT_NE(json.find("\"repeat\": 3"), std::string::npos) << json.substr(0, 600);
  EXPECT_NE(json.find("\"set_qps_min\": 190.00"), std::string::npos);
  EXPECT_NE(json.find("\"set_qps_max\": 220.00"), std::string::npos);
  for (const char* v : {"\"set_qps\": 210.00", "\"set_qps\": 220.00", "\"set_qps\": 190.00"}) {
    EXPECT_NE(json.find(v), std::string::npos) << v;
  }
  EXPECT_NE(json.find("\"the shards and the client share CPU 1\""), std::string::npos);
  EXPECT_NE(readFile(dir_ + "/results.csv").find(",190.00,220.00,290.00,310.00,3,"),
            std::string::npos)
      << readFile(dir_ + "/results.csv");
}

TEST_F(MatrixReportTest, BestCellRules) {
  MatrixRun r = repeatedRun();
  BestCell set = bestCell(r, "SET");
  ASSERT_NE(set.cell, nullptr);
  EXPECT_EQ(set.cell->workers, 4);
  EXPECT_TRUE(set.tested);
  ASSERT_EQ(set.within_noise.size(), 1u);
  EXPECT_EQ(set.within_noise[0]->workers, 2);
  const BestCell get = bestCell(r, "GET");
  EXPECT_TRUE(get.tested);
  EXPECT_TRUE(get.within_noise.empty());
  // One repetition anywhere: the highest cell is not called the best.
  r.cells[0][0].reps.resize(1);
  set = bestCell(r, "SET");
  EXPECT_FALSE(set.tested);
  EXPECT_NE(bestCellText(set, "SET").find("highest SET: 210 (190\u2013220) requests/s"),
            std::string::npos)
      << bestCellText(set, "SET");
  EXPECT_NE(bestCellText(set, "SET").find("no cell is called better than another"),
            std::string::npos);
}

TEST_F(MatrixReportTest, UnpinnedRunSaysSo) {
  MatrixRun r = run("full");
  r.cpu_budget.available = {0, 1};
  std::string md;
  std::string error;
  ASSERT_TRUE(writeMatrixReport(r, dir_, &md, &error)) << error;
  EXPECT_NE(md.find("- **CPU budget**: unpinned: the proxy, the shards and the client share "
                    "CPUs 0,1\n"),
            std::string::npos)
      << md;
  EXPECT_EQ(md.find("**warning**"), std::string::npos);
  EXPECT_NE(md.find("- **repetitions**: 1 per cell: no min\u2013max spread"), std::string::npos);
  EXPECT_NE(readFile(dir_ + "/results.json").find("\"client\": \"unpinned\""), std::string::npos);
}

}  // namespace
}  // namespace sp::bench
