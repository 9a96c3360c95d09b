// --print-percentiles: the list parser (order, duplicates, every kind of bad entry), the flag,
// the percentiles of a known histogram and the printed tables, byte for byte.
#include "percentile_table.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>

#include "options.h"
#include "result_json.h"

namespace sp::bench {
namespace {

std::vector<double> parsed(const std::string& text) {
  std::vector<double> out;
  std::string error;
  EXPECT_TRUE(parsePercentileList(text, &out, &error)) << text << ": " << error;
  return out;
}

TEST(PercentileListTest, ParsesSortsAndDropsDuplicates) {
  EXPECT_EQ(parsed("50,90,99,99.9,99.99"), (std::vector<double>{50, 90, 99, 99.9, 99.99}));
  EXPECT_EQ(parsed("99.9,50,99,50"), (std::vector<double>{50, 99, 99.9}));
  EXPECT_EQ(parsed("100"), (std::vector<double>{100}));
  EXPECT_EQ(parsed("0.001,99.9999"), (std::vector<double>{0.001, 99.9999}));
  EXPECT_EQ(parsed("050.50"), (std::vector<double>{50.5}));
}

TEST(PercentileListTest, RejectsMalformedEntriesNamingThem) {
  const std::pair<const char*, const char*> cases[] = {
      {"", "empty entry"},
      {"50,", "empty entry"},
      {",50", "empty entry"},
      {"50,,90", "empty entry"},
      {"abc", "'abc' is not a number"},
      {"50,p99", "'p99' is not a number"},
      {"50;90", "'50;90' is not a number"},
      {" 50", "' 50' is not a number"},
      {"50%", "'50%' is not a number"},
      {"1e2", "'1e2' is not a number"},
      {"nan", "'nan' is not a number"},
      {"inf", "'inf' is not a number"},
      {"+50", "'+50' is not a number"},
      {"0", "'0' is out of range"},
      {"0.0", "'0.0' is out of range"},
      {"-1", "'-1' is out of range"},
      {"100.0001", "'100.0001' is out of range"},
      {"50,101", "'101' is out of range"},
  };
  for (const auto& [text, why] : cases) {
    std::vector<double> out{1.0};
    std::string error;
    EXPECT_FALSE(parsePercentileList(text, &out, &error)) << text;
    EXPECT_NE(error.find("for --print-percentiles"), std::string::npos) << error;
    EXPECT_NE(error.find(why), std::string::npos) << text << " -> " << error;
    EXPECT_EQ(out, std::vector<double>{1.0}) << "output touched on error";
  }
}

TEST(PercentileListTest, FlagsParseAndReject) {
  Options o;
  std::string error;
  ASSERT_TRUE(
      parseOptions({"--print-percentiles", "99,50", "--hdr-file-prefix=/tmp/run"}, &o, &error))
      << error;
  EXPECT_EQ(o.print_percentiles, (std::vector<double>{50, 99}));
  EXPECT_EQ(o.hdr_file_prefix, "/tmp/run");

  Options defaults;
  ASSERT_TRUE(parseOptions({}, &defaults, &error));
  EXPECT_TRUE(defaults.print_percentiles.empty());
  EXPECT_TRUE(defaults.hdr_file_prefix.empty());

  EXPECT_FALSE(parseOptions({"--print-percentiles=50,x"}, &o, &error));
  EXPECT_EQ(error,
            "invalid value '50,x' for --print-percentiles: 'x' is not a number; expected "
            "comma-separated percentiles above 0 and at most 100, e.g. 50,99,99.9");
  EXPECT_FALSE(parseOptions({"--print-percentiles"}, &o, &error));
  EXPECT_EQ(error, "missing value for --print-percentiles");
  EXPECT_FALSE(parseOptions({"--hdr-file-prefix="}, &o, &error));
  EXPECT_EQ(error, "empty prefix for --hdr-file-prefix");
}

TEST(PercentileListTest, Labels) {
  EXPECT_EQ(percentileLabel(50), "50");
  EXPECT_EQ(percentileLabel(99.9), "99.9");
  EXPECT_EQ(percentileLabel(99.99), "99.99");
  EXPECT_EQ(percentileLabel(0.001), "0.001");
  EXPECT_EQ(percentileLabel(100), "100");
}

// 900 values of 1 ms and 100 of 5 ms: a percentile is the middle of its bucket (1 ms lies in
// [999424, 1003520), 5 ms in [4980736, 5013504)) clamped to the exact min and max.
LatencyHistogram knownHistogram() {
  LatencyHistogram h;
  for (int i = 0; i < 900; ++i) {
    h.record(1000000);
  }
  for (int i = 0; i < 100; ++i) {
    h.record(5000000);
  }
  return h;
}

TEST(PercentileTableTest, PercentilesOfAKnownHistogram) {
  const LatencyHistogram h = knownHistogram();
  EXPECT_EQ(h.percentile(50), 1001471u);
  EXPECT_EQ(h.percentile(90), 1001471u);    // rank 900: still the 1 ms bucket
  EXPECT_EQ(h.percentile(90.1), 4997119u);  // rank 901: the 5 ms bucket
  EXPECT_EQ(h.percentile(99.9), 4997119u);
  EXPECT_EQ(h.percentile(100), 5000000u);  // the exact max
}

std::string printed(const std::vector<PhaseResult>& phases, const std::vector<double>& percents) {
  char* buf = nullptr;
  size_t size = 0;
  FILE* f = open_memstream(&buf, &size);
  printPercentileTables(f, phases, percents);
  std::fclose(f);
  std::string out(buf, size);
  std::free(buf);
  return out;
}

TEST(PercentileTableTest, OneTablePerCommandRowWithoutTotals) {
  PhaseResult phase;
  phase.name = "ALL STATS";
  phase.totals_row = true;
  RowResult sets;
  sets.type = "Sets";
  sets.stats.latency = knownHistogram();
  RowResult gets;
  gets.type = "Gets";  // no replies
  RowResult totals;
  totals.type = "Totals";
  totals.stats.latency = knownHistogram();
  phase.rows = {sets, gets, totals};

  EXPECT_EQ(printed({phase}, {50, 90.1, 99.9, 100}),
            "\n"
            "Sets latency percentiles: 1000 requests, max 5.00000 ms\n"
            "    Percentile    Latency (ms)\n"
            "           50%         1.00147\n"
            "         90.1%         4.99712\n"
            "         99.9%         4.99712\n"
            "          100%         5.00000\n"
            "\n"
            "Gets latency percentiles: 0 requests, no latencies\n");
}

TEST(PercentileTableTest, JsonRowsCarryThePercentilesAndStillReadBack) {
  RunRecord run;
  run.target = "127.0.0.1:6379";
  PhaseResult phase;
  phase.name = "SET";
  RowResult row;
  row.type = "SET";
  row.stats.latency = knownHistogram();
  row.stats.ops = 1000;
  phase.rows = {row};
  run.phases = {phase};
  run.percentiles = {50, 99.9, 100};
  const std::string text = toJson(run);
  EXPECT_NE(text.find(R"("percentiles_ms": {"50": 1.00147, "99.9": 4.99712, "100": 5.00000})"),
            std::string::npos)
      << text;
  RunRecord back;
  std::string error;
  ASSERT_TRUE(fromJson(text, &back, &error)) << error;
  EXPECT_EQ(back.phases[0].rows[0].stats.latency.percentile(50), 1001471u);

  run.percentiles.clear();
  EXPECT_EQ(toJson(run).find("percentiles_ms"), std::string::npos);
}

}  // namespace
}  // namespace sp::bench
