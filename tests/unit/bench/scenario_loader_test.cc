// Scenario files: a minimal file of each layout, the errors (each with its YAML path, all at
// once), and every file in conf/scenarios loading and planning at both scales.
#include <gtest/gtest.h>

#include <filesystem>

#include "scenario.h"
#include "scenario_plan.h"

namespace sp::bench {
namespace {

constexpr const char* kSweep = R"(
name: sweep
title: A sweep
seed: {file: 000.txt, section: "1. connections"}
args: -t set,get -r 100
sweep:
  title: Connections
  args: -c {value}
  values: [1, 8, 64]
scales:
  quick: {values: [1, 64], args: -n 100}
  full: {args: -n 1000}
tables:
  - title: SET
    row: SET
    metric: qps
    published:
      seed row: [10, 20, 30]
      partial: [1, null, 3]
)";

Scenario parseOk(const std::string& text) {
  Scenario s;
  std::string error;
  EXPECT_TRUE(parseScenario(text, "test.yaml", &s, &error)) << error;
  return s;
}

std::string parseError(const std::string& text) {
  Scenario s;
  std::string error;
  EXPECT_FALSE(parseScenario(text, "test.yaml", &s, &error)) << "accepted";
  return error;
}

std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const size_t pos = text.find(from);
  EXPECT_NE(pos, std::string::npos) << from;
  if (pos != std::string::npos) {
    text.replace(pos, from.size(), to);
  }
  return text;
}

TEST(ScenarioLoaderTest, Sweep) {
  Scenario s = parseOk(kSweep);
  EXPECT_EQ(s.name, "sweep");
  EXPECT_EQ(s.seed_file, "000.txt");
  ASSERT_TRUE(s.has_sweep);
  ASSERT_EQ(s.points.size(), 3u);
  EXPECT_EQ(s.points[1].label, "8");
  EXPECT_EQ(s.points[1].vars.at("value"), "8");
  ASSERT_EQ(s.tables.size(), 1u);
  const TableSpec& t = s.tables[0];
  EXPECT_FALSE(t.rows_layout);
  EXPECT_EQ(t.row, "SET");
  EXPECT_EQ(t.metric, Metric::kQps);
  ASSERT_EQ(t.published.size(), 2u);
  EXPECT_EQ(t.published[0].name, "seed row");
  EXPECT_EQ(t.published[0].cells[0][2], 30);
  EXPECT_FALSE(t.published[1].cells[0][1].has_value());
  ASSERT_EQ(t.charts.size(), 1u);
  EXPECT_EQ(t.charts[0].kind, ChartSpec::Kind::kLine);
}

TEST(ScenarioLoaderTest, RowsLayoutWithConcurrentRuns) {
  Scenario s = parseOk(R"(
name: mix
title: Mix
seed: {file: 002.txt, section: method}
stateful: true
local_shards: 3
vars: {keys: 100}
points:
  - name: load
    args: --ratio 1:0 -n {keys}
  - name: read
    runs:
      - {name: a, args: --ratio 0:1 --test-time 1}
      - name: b
        args: --command 'hgetall __key__' --test-time 1
scales:
  quick: {vars: {keys: 10}}
  full:
tables:
  - title: Reads
    layout: rows
    items:
      - {label: A, point: read, row: a/Gets}
      - {label: B, point: read, row: b/HGETALL}
    columns:
      - {title: QPS, metric: qps}
      - {title: p99.99, metric: p9999_ms}
    charts: [{column: 1}]
    published:
      seed: [[100, 1.5], [200]]
)");
  EXPECT_TRUE(s.stateful);
  EXPECT_EQ(s.local_shards, 3);
  ASSERT_EQ(s.points.size(), 2u);
  ASSERT_EQ(s.points[1].runs.size(), 2u);
  EXPECT_EQ(s.points[1].runs[1].name, "b");
  const TableSpec& t = s.tables[0];
  EXPECT_TRUE(t.rows_layout);
  ASSERT_EQ(t.items.size(), 2u);
  EXPECT_EQ(t.items[1].row, "b/HGETALL");
  ASSERT_EQ(t.columns.size(), 2u);
  EXPECT_EQ(t.columns[1].metric, Metric::kP9999Ms);
  EXPECT_EQ(t.charts[0].kind, ChartSpec::Kind::kBar);
  EXPECT_EQ(t.charts[0].column, 1u);
  ASSERT_EQ(t.published[0].cells.size(), 2u);
  EXPECT_EQ(t.published[0].cells[0][1], 1.5);
  EXPECT_FALSE(t.published[0].cells[1][1].has_value());  // padded to the column count

  ScenarioPlan plan;
  std::string error;
  ASSERT_TRUE(planScenario(s, "quick", {}, 0, &plan, &error)) << error;
  EXPECT_EQ(plan.points[0].runs[0].options.requests_total, 10u);
  ASSERT_TRUE(planScenario(s, "full", {{"keys", "7"}}, 0, &plan, &error)) << error;
  EXPECT_EQ(plan.points[0].runs[0].options.requests_total, 7u);
  EXPECT_EQ(plan.points[1].runs.size(), 2u);
}

TEST(ScenarioLoaderTest, ErrorsNameTheirPathAndComeTogether) {
  std::string text = replaced(kSweep, "title: A sweep", "title: A sweep\ncolour: blue");
  text = replaced(text, "seed row: [10, 20, 30]", "seed row: [10, 20]");
  text = replaced(text, "metric: qps", "metric: speed");
  const std::string error = parseError(text);
  EXPECT_NE(error.find("test.yaml: colour: unknown key"), std::string::npos) << error;
  EXPECT_NE(error.find("tables[0].published.seed row: 2 values for 3 points"), std::string::npos)
      << error;
  EXPECT_NE(error.find("tables[0].metric: unknown metric 'speed'"), std::string::npos) << error;
}

TEST(ScenarioLoaderTest, MoreErrors) {
  EXPECT_NE(parseError(replaced(kSweep, "seed: {file: 000.txt, section: \"1. connections\"}", ""))
                .find("seed: missing"),
            std::string::npos);
  EXPECT_NE(parseError(replaced(kSweep, "quick: {values: [1, 64], args: -n 100}",
                                "quick: {values: [1, 65]}"))
                .find("scales.quick.values[1]: no point '65'"),
            std::string::npos);
  EXPECT_NE(parseError(replaced(kSweep, "  full: {args: -n 1000}\n", "")).find("scales.full"),
            std::string::npos);
  EXPECT_NE(parseError(replaced(kSweep, "values: [1, 8, 64]", "values: [1, 8, 8]"))
                .find("duplicate value '8'"),
            std::string::npos);
  EXPECT_NE(parseError("name: [unclosed").find("test.yaml"), std::string::npos);
}

TEST(ScenarioLoaderTest, PlanChecksFlagsAndRefusesHostFlags) {
  Scenario s = parseOk(replaced(kSweep, "args: -t set,get -r 100", "args: -t set,get -r 0"));
  ScenarioPlan plan;
  std::string error;
  EXPECT_FALSE(planScenario(s, "quick", {}, 0, &plan, &error));
  EXPECT_NE(error.find("point '1'"), std::string::npos) << error;
  EXPECT_NE(error.find("-r"), std::string::npos) << error;

  s = parseOk(replaced(kSweep, "args: -t set,get -r 100", "args: -t set,get -p 6379"));
  EXPECT_FALSE(planScenario(s, "quick", {}, 0, &plan, &error));
  EXPECT_NE(error.find("set by the scenario runner"), std::string::npos) << error;

  s = parseOk(kSweep);
  EXPECT_FALSE(planScenario(s, "huge", {}, 0, &plan, &error));
}

// kSweep with connection counts up to 40,000 that fit_open_files may skip, no published rows.
Scenario largeConnectionSweep() {
  Scenario s = parseOk(replaced(
      replaced(kSweep, "values: [1, 8, 64]", "values: [500, 2000, 40000]\n  fit_open_files: true"),
      "quick: {values: [1, 64], args: -n 100}", "quick: {args: -n 100}"));
  s.tables[0].published.clear();
  return s;
}

TEST(ScenarioLoaderTest, OpenFileLimitSkipsPointsAndAddsOneThatFits) {
  Scenario s = largeConnectionSweep();
  ScenarioPlan plan;
  std::string error;
  ASSERT_TRUE(planScenario(s, "quick", {}, 20000, &plan, &error)) << error;
  ASSERT_EQ(plan.points.size(), 4u);
  EXPECT_EQ(plan.points[0].label, "500");
  EXPECT_TRUE(plan.points[0].skip_reason.empty());
  EXPECT_EQ(plan.points[2].label, "19000");
  EXPECT_TRUE(plan.points[2].added_to_fit);
  EXPECT_EQ(plan.points[2].connections, 19000u);
  EXPECT_EQ(plan.points[3].label, "40000");
  EXPECT_NE(plan.points[3].skip_reason.find("RLIMIT_NOFILE"), std::string::npos);

  // Without a limit nothing is skipped or added.
  ASSERT_TRUE(planScenario(s, "quick", {}, 0, &plan, &error)) << error;
  EXPECT_EQ(plan.points.size(), 3u);
}

TEST(ScenarioLoaderTest, EphemeralPortRangeSkipsPointsAndAddsOneThatFits) {
  Scenario s = largeConnectionSweep();
  ScenarioPlan plan;
  std::string error;
  // Open files to spare, but 28,232 ports (Linux's default range 32768-60999).
  ASSERT_TRUE(planScenario(s, "quick", {}, 100000, &plan, &error, 28232)) << error;
  ASSERT_EQ(plan.points.size(), 4u);
  EXPECT_TRUE(plan.points[1].skip_reason.empty());
  EXPECT_EQ(plan.points[2].label, "28000");
  EXPECT_TRUE(plan.points[2].added_to_fit);
  EXPECT_EQ(plan.points[3].label, "40000");
  EXPECT_NE(plan.points[3].skip_reason.find("ip_local_port_range"), std::string::npos);
  EXPECT_NE(plan.points[3].skip_reason.find("28232"), std::string::npos);

  // Both limits: the smaller one decides the added point.
  ASSERT_TRUE(planScenario(s, "quick", {}, 20000, &plan, &error, 28232)) << error;
  ASSERT_EQ(plan.points.size(), 4u);
  EXPECT_EQ(plan.points[2].label, "19000");
  EXPECT_NE(plan.points[3].skip_reason.find("RLIMIT_NOFILE"), std::string::npos);

  // The port range alone (open files unchecked).
  ASSERT_TRUE(planScenario(s, "quick", {}, 0, &plan, &error, 28232)) << error;
  ASSERT_EQ(plan.points.size(), 4u);
  EXPECT_EQ(plan.points[2].label, "28000");
}

TEST(ScenarioLoaderTest, LoopbackTargetsSpreadLargePointsOverSourceAddresses) {
  Scenario s = largeConnectionSweep();
  ScenarioPlan plan;
  std::string error;
  // 28,232 ports, 90% of them per address: 40,000 connections need two addresses, 2,000 none.
  ASSERT_TRUE(planScenario(s, "quick", {}, 100000, &plan, &error, 28232, true)) << error;
  ASSERT_EQ(plan.points.size(), 3u);
  EXPECT_TRUE(plan.points[1].runs[0].options.source_addresses.empty());
  const PlannedPoint& big = plan.points[2];
  EXPECT_EQ(big.label, "40000");
  EXPECT_TRUE(big.skip_reason.empty()) << big.skip_reason;
  EXPECT_EQ(big.runs[0].options.source_addresses,
            (std::vector<std::string>{"127.0.0.1", "127.0.0.2"}));
  EXPECT_NE(
      commandLine(big.runs[0], "127.0.0.1", 7000).find("--source-address 127.0.0.1,127.0.0.2"),
      std::string::npos);

  // The open-file limit still skips what the proxy could not hold.
  ASSERT_TRUE(planScenario(s, "quick", {}, 20000, &plan, &error, 28232, true)) << error;
  ASSERT_EQ(plan.points.size(), 4u);
  EXPECT_EQ(plan.points[2].label, "19000");
  EXPECT_NE(plan.points[3].skip_reason.find("RLIMIT_NOFILE"), std::string::npos);
}

TEST(ScenarioLoaderTest, EveryShippedScenarioLoadsAndPlans) {
  const std::filesystem::path dir = std::filesystem::path(SP_SOURCE_DIR) / "conf" / "scenarios";
  size_t files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".yaml") {
      continue;
    }
    ++files;
    SCOPED_TRACE(entry.path().string());
    Scenario s;
    std::string error;
    ASSERT_TRUE(loadScenario(entry.path().string(), &s, &error)) << error;
    EXPECT_FALSE(s.seed_file.empty());
    EXPECT_FALSE(s.seed_section.empty());
    for (const char* scale : {"quick", "full"}) {
      ScenarioPlan plan;
      ASSERT_TRUE(planScenario(s, scale, {}, 20000, &plan, &error)) << scale << ": " << error;
      EXPECT_FALSE(plan.points.empty());
    }
    for (const auto& t : s.tables) {
      for (const auto& item : t.items) {
        EXPECT_NE(s.point(item.point), nullptr) << item.point;
      }
    }
  }
  EXPECT_GE(files, 9u);
}

}  // namespace
}  // namespace sp::bench
