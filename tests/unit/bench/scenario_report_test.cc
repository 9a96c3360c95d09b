// Scenario result directories: quick runs say so in titles and chart file names, a chart titled
// after one column claims nothing about the table's other columns, and the "dashed: published"
// caption appears only on charts that draw a published series.
#include "scenario_report.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "scenario.h"
#include "scenario_plan.h"

namespace sp::bench {
namespace {

constexpr const char* kScenario = R"(
name: honest
title: Connections against one proxy
seed: {file: 004_seed.txt, section: "2. long connections"}
args: -t set,get -r 100
sweep:
  title: Connections
  args: -c {value}
  values: [1, 8]
scales:
  quick: {args: -n 100}
  full: {args: -n 1000}
tables:
  - title: SET requests per second
    row: SET
    metric: qps
    published:
      seed row: [10, 20]
  - title: Requests per second and proxy memory by open connections
    layout: rows
    items: sweep
    row: SET
    columns:
      - {title: QPS, metric: qps}
      - {title: proxy RSS (MB), metric: proxy_rss_mb}
    chart: {kind: line, column: 0}
  - title: Requests per second without a seed
    row: GET
    metric: qps
)";

std::string readFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The text of the chart's title (the bold line at the top).
std::string chartTitle(const std::string& svg) {
  const std::string open = "font-weight=\"bold\" fill=\"#222\">";
  const size_t at = svg.find(open);
  if (at == std::string::npos) {
    return "";
  }
  const size_t from = at + open.size();
  return svg.substr(from, svg.find("</text>", from) - from);
}

class ScenarioReportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = (std::filesystem::temp_directory_path() /
            ("sp_scenario_report_" + std::to_string(::getpid()) + "_" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name()))
               .string();
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    std::string error;
    ASSERT_TRUE(parseScenario(kScenario, "honest.yaml", &scenario_, &error)) << error;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // Writes the report of a run with no measurements at `scale`; returns report.md.
  std::string write(const std::string& scale) {
    std::string error;
    EXPECT_TRUE(planScenario(scenario_, scale, {}, 0, &plan_, &error)) << error;
    ScenarioRun run;
    run.scenario = &scenario_;
    run.plan = &plan_;
    Target target;
    target.name = "redis";
    run.targets.push_back(target);
    run.machine.nproc = 4;
    std::string md;
    EXPECT_TRUE(writeScenarioReport(run, dir_, &md, &error)) << error;
    return md;
  }

  std::vector<std::string> svgFiles() const {
    std::vector<std::string> out;
    for (const auto& e : std::filesystem::directory_iterator(dir_)) {
      if (e.path().extension() == ".svg") {
        out.push_back(e.path().filename().string());
      }
    }
    std::sort(out.begin(), out.end());
    return out;
  }

  Scenario scenario_;
  ScenarioPlan plan_;
  std::string dir_;
};

TEST_F(ScenarioReportTest, QuickRunSaysSoInTitlesAndFileNames) {
  const std::string md = write("quick");
  const std::string suffix = " (quick smoke test, not a measurement)";
  EXPECT_EQ(md.rfind("# Connections against one proxy" + suffix + "\n", 0), 0u) << md;
  EXPECT_NE(md.find("## SET requests per second" + suffix + "\n"), std::string::npos) << md;
  const auto files = svgFiles();
  ASSERT_EQ(files.size(), 3u);
  for (const auto& f : files) {
    EXPECT_TRUE(f.ends_with("-quick.svg")) << f;
    EXPECT_TRUE(chartTitle(readFile(dir_ + "/" + f)).ends_with(suffix)) << f;
  }
}

TEST_F(ScenarioReportTest, FullRunChartsClaimOnlyWhatTheyDraw) {
  write("full");
  const auto files = svgFiles();
  ASSERT_EQ(files.size(), 3u);
  for (const auto& f : files) {
    EXPECT_FALSE(f.ends_with("-quick.svg")) << f;
  }
  const std::string with_seed = readFile(dir_ + "/" + files[0]);  // 1-set-...
  EXPECT_NE(with_seed.find("dashed: published, other hardware and network (004_seed.txt)"),
            std::string::npos);
  EXPECT_NE(with_seed.find("stroke-dasharray"), std::string::npos);
  // The rows-layout chart draws QPS only: its title does not promise proxy memory.
  const std::string qps = readFile(dir_ + "/" + files[1]);  // 2-qps.svg
  EXPECT_EQ(chartTitle(qps), "QPS by connections") << qps.substr(0, 1200);
  // The table is named in the subtitle as the chart's source, not as what it draws.
  EXPECT_NE(qps.find("a column of the table \u201cRequests per second and proxy memory"),
            std::string::npos);
  // No published series: nothing about published numbers.
  const std::string no_seed = readFile(dir_ + "/" + files[2]);
  EXPECT_EQ(no_seed.find("published"), std::string::npos);
  EXPECT_EQ(no_seed.find("dashed"), std::string::npos);
}

}  // namespace
}  // namespace sp::bench
