// Scenario result directories: quick runs say so in titles and chart file names, a chart titled
// after one column claims nothing about the table's other columns, and the "dashed: published"
// caption appears only on charts that draw a published series. Repeated points show their
// min–max, and a ratio between targets whose ranges overlap says "within noise".
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

// A measured repetition of `point` against `target` with this SET rate.
Measurement setRep(const std::string& point, const std::string& target, int rep, double qps) {
  Measurement m;
  m.point = point;
  m.target = target;
  m.rep = rep;
  m.status = MeasureStatus::kOk;
  RowSummary set;
  set.name = "SET";
  set.ops = 100;
  set.qps = qps;
  m.rows.push_back(set);
  return m;
}

TEST_F(ScenarioReportTest, RepeatedPointsShowTheirSpreadAndRatiosAreTestedAgainstIt) {
  std::string error;
  ASSERT_TRUE(planScenario(scenario_, "full", {}, 0, &plan_, &error)) << error;
  ScenarioRun run;
  run.scenario = &scenario_;
  run.plan = &plan_;
  run.repeat = 2;
  for (const char* name : {"shardproxy", "twemproxy"}) {
    Target t;
    t.name = name;
    run.targets.push_back(t);
  }
  run.machine.nproc = 2;
  run.cpu_budget.proxy = {0};
  run.cpu_budget.shards = {1};
  run.cpu_budget.client = {1};
  run.cpu_budget.available = {0, 1};
  // Point 1: twemproxy's range overlaps shardproxy's. Point 8: apart.
  run.measurements = {setRep("1", "shardproxy", 0, 1000), setRep("1", "shardproxy", 1, 1200),
                      setRep("1", "twemproxy", 0, 1100),  setRep("1", "twemproxy", 1, 1300),
                      setRep("8", "shardproxy", 0, 2000), setRep("8", "shardproxy", 1, 2100),
                      setRep("8", "twemproxy", 0, 1000),  setRep("8", "twemproxy", 1, 1050)};
  std::string md;
  ASSERT_TRUE(writeScenarioReport(run, dir_, &md, &error)) << error;
  EXPECT_NE(
      md.find("| shardproxy (this machine) | 1100 (1000\u20131200) | 2050 (2000\u20132100) |"),
      std::string::npos)
      << md;
  EXPECT_NE(md.find("| twemproxy (this machine) | 1200 (1100\u20131300) (within noise, 1.09×) | "
                    "1025 (1000\u20131050) (0.50×) |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("2 repetitions (median)"), std::string::npos);
  EXPECT_NE(md.find("- **CPU budget**: proxy: CPU 0; shards: CPU 1; client: CPU 1\n"),
            std::string::npos);
  EXPECT_NE(md.find("- **warning**: the shards and the client share CPU 1"), std::string::npos);

  // The sweep's chart draws the ranges as whiskers and says so.
  const std::string svg = readFile(dir_ + "/1-set-qps.svg");
  EXPECT_NE(svg.find("whiskers: min\u2013max of the repetitions"), std::string::npos) << svg;
  EXPECT_NE(svg.find("<g class=\"range\""), std::string::npos);
  EXPECT_NE(svg.find("twemproxy (this machine) @ 8: min\u2013max 1000\u20131050"),
            std::string::npos);

  // results.json keeps every repetition's value next to the median and the range.
  const std::string json = readFile(dir_ + "/results.json");
  EXPECT_NE(json.find("\"spreads\": ["), std::string::npos);
  EXPECT_NE(json.find("\"median\": 1025.00000"), std::string::npos) << json;
  EXPECT_NE(json.find("\"text\": \"proxy: CPU 0; shards: CPU 1; client: CPU 1\""),
            std::string::npos);
}

TEST(RatioTextTest, WithinNoiseOnlyWhenTheRangesOverlap) {
  const Spread base = *spreadOf({100, 110});
  EXPECT_EQ(ratioText(*spreadOf({105, 130}), base), "within noise, 1.12×");
  EXPECT_EQ(ratioText(*spreadOf({111, 130}), base), "1.15×");
  EXPECT_EQ(ratioText(*spreadOf({50}), base), "0.48×");  // one repetition: untested
}

}  // namespace
}  // namespace sp::bench
