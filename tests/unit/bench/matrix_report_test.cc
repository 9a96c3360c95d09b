// The matrix result directory: a quick run says it is a smoke test in every title and in the
// names of its heat maps; a full run does not; the seed's heat maps are captioned as published.
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

}  // namespace
}  // namespace sp::bench
