// .hgrm output: HdrHistogram's percentile iteration (tick levels, repeated buckets, the final
// 100% row), the exact text of a small histogram, the footer, file names and the chart.
#include "hgrm_writer.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <sstream>

namespace sp::bench {
namespace {

// Four values of 1 ms and one of 3 ms. 1 ms lies in the bucket [999424, 1003519], 3 ms in
// [2998272, 3014655]; a row's value is the bucket's top, as HdrHistogram reports it.
LatencyHistogram small() {
  LatencyHistogram h;
  for (int i = 0; i < 4; ++i) {
    h.record(1000000);
  }
  h.record(3000000);
  return h;
}

TEST(HgrmWriterTest, ExactTextOfASmallHistogram) {
  // The 1 ms bucket holds 80% of the values, so it reports every level up to 80%; the 3 ms
  // bucket reports 82.5% (the next tick) and, once the count is exhausted, 100%. Mean is exact
  // (1.4 ms); StdDeviation from bucket middles 1001471 and 3006463 ns.
  EXPECT_EQ(hgrmText(small()),
            "       Value     Percentile TotalCount 1/(1-Percentile)\n"
            "\n"
            "       1.004 0.000000000000          4           1.00\n"
            "       1.004 0.100000000000          4           1.11\n"
            "       1.004 0.200000000000          4           1.25\n"
            "       1.004 0.300000000000          4           1.43\n"
            "       1.004 0.400000000000          4           1.67\n"
            "       1.004 0.500000000000          4           2.00\n"
            "       1.004 0.550000000000          4           2.22\n"
            "       1.004 0.600000000000          4           2.50\n"
            "       1.004 0.650000000000          4           2.86\n"
            "       1.004 0.700000000000          4           3.33\n"
            "       1.004 0.750000000000          4           4.00\n"
            "       1.004 0.775000000000          4           4.44\n"
            "       1.004 0.800000000000          4           5.00\n"
            "       3.015 0.825000000000          5           5.71\n"
            "       3.015 1.000000000000          5\n"
            "#[Mean    =        1.400, StdDeviation   =        0.802]\n"
            "#[Max     =        3.015, Total count    =            5]\n"
            "#[Buckets =           36, SubBuckets     =          256]\n");
}

TEST(HgrmWriterTest, EmptyHistogramHasHeaderAndFooterOnly) {
  EXPECT_EQ(hgrmText(LatencyHistogram()),
            "       Value     Percentile TotalCount 1/(1-Percentile)\n"
            "\n"
            "#[Mean    =        0.000, StdDeviation   =        0.000]\n"
            "#[Max     =        0.000, Total count    =            0]\n"
            "#[Buckets =           36, SubBuckets     =          256]\n");
}

TEST(HgrmWriterTest, LevelsFollowHdrHistogramsTicksPerHalfDistance) {
  LatencyHistogram h;
  for (uint64_t v = 1; v <= 100000; ++v) {
    h.record(v * 1000);
  }
  const std::vector<HgrmRow> rows = percentileDistribution(h);
  const double expected[] = {0,       10,     20,      30,       40,     50,       55,
                             60,      65,     70,      75,       77.5,   80,       82.5,
                             85,      87.5,   88.75,   90,       91.25,  92.5,     93.75,
                             94.375,  95,     95.625,  96.25,    96.875, 97.1875,  97.5,
                             97.8125, 98.125, 98.4375, 98.59375, 98.75,  98.90625, 99.0625};
  ASSERT_GT(rows.size(), std::size(expected));
  for (size_t i = 0; i < std::size(expected); ++i) {
    EXPECT_EQ(rows[i].percentile, expected[i]) << i;
  }
  // Monotone: values and counts never decrease, levels always increase; the last row is 100%
  // with every value, right after the row that exhausted the count.
  for (size_t i = 1; i < rows.size(); ++i) {
    EXPECT_GE(rows[i].value_ns, rows[i - 1].value_ns) << i;
    EXPECT_GE(rows[i].total_count, rows[i - 1].total_count) << i;
    EXPECT_GT(rows[i].percentile, rows[i - 1].percentile) << i;
  }
  EXPECT_EQ(rows.back().percentile, 100.0);
  EXPECT_EQ(rows.back().total_count, 100000u);
  EXPECT_EQ(rows[rows.size() - 2].total_count, 100000u);
  EXPECT_EQ(rows.back().value_ns,
            LatencyHistogram::bucketLow(LatencyHistogram::indexOf(1e8)) +
                LatencyHistogram::bucketWidth(LatencyHistogram::indexOf(1e8)) - 1);
  // Each row's count is the number of values up to the top of its bucket.
  for (const HgrmRow& r : rows) {
    EXPECT_EQ(r.total_count, std::min<uint64_t>(100000, r.value_ns / 1000)) << r.value_ns;
  }
}

TEST(HgrmWriterTest, TextRowsMatchTheIteration) {
  LatencyHistogram h;
  for (uint64_t v = 1; v <= 5000; ++v) {
    h.record(v * 997);
  }
  const std::vector<HgrmRow> rows = percentileDistribution(h);
  std::istringstream text(hgrmText(h));
  std::string line;
  std::getline(text, line);
  EXPECT_EQ(line, "       Value     Percentile TotalCount 1/(1-Percentile)");
  std::getline(text, line);
  EXPECT_EQ(line, "");
  for (const HgrmRow& r : rows) {
    ASSERT_TRUE(std::getline(text, line));
    char expected[128];
    if (r.percentile < 100) {
      std::snprintf(expected, sizeof(expected), "%12.3f %14.12f %10llu %14.2f",
                    static_cast<double>(r.value_ns) / 1e6, r.percentile / 100,
                    static_cast<unsigned long long>(r.total_count), 1 / (1 - r.percentile / 100));
    } else {
      std::snprintf(expected, sizeof(expected), "%12.3f %14.12f %10llu",
                    static_cast<double>(r.value_ns) / 1e6, 1.0,
                    static_cast<unsigned long long>(r.total_count));
    }
    EXPECT_EQ(line, expected);
  }
  ASSERT_TRUE(std::getline(text, line));
  EXPECT_TRUE(line.starts_with("#[Mean    = ")) << line;
  ASSERT_TRUE(std::getline(text, line));
  char max_line[128];
  std::snprintf(max_line, sizeof(max_line), "#[Max     = %12.3f, Total count    = %12d]",
                static_cast<double>(rows.back().value_ns) / 1e6, 5000);
  EXPECT_EQ(line, max_line);  // the 100% row's value, as HdrHistogram's getMaxValue
}

TEST(HgrmWriterTest, FileNamesFromRowNames) {
  EXPECT_EQ(hgrmFileName("/tmp/x", "SET"), "/tmp/x_SET.hgrm");
  EXPECT_EQ(hgrmFileName("run", "Gets"), "run_Gets.hgrm");
  EXPECT_EQ(hgrmFileName("run", "LPUSH (needed to benchmark LRANGE)"),
            "run_LPUSH_needed_to_benchmark_LRANGE.hgrm");
  EXPECT_EQ(hgrmFileName("run", "MSET (10 keys)"), "run_MSET_10_keys.hgrm");
  EXPECT_EQ(hgrmFileName("run", "SET#2"), "run_SET_2.hgrm");
  EXPECT_EQ(hgrmFileName("run", "/../"), "run_...hgrm");  // no path separator survives
  EXPECT_EQ(hgrmFileName("run", "(!)"), "run_ROW.hgrm");
}

TEST(HgrmWriterTest, ChartHasOneLinePerCommandRow) {
  PhaseResult phase;
  phase.totals_row = true;
  RowResult a;
  a.type = "Sets";
  a.stats.latency = small();
  RowResult b = a;
  b.type = "Gets";
  RowResult totals = a;
  totals.type = "Totals";
  phase.rows = {a, b, totals};
  const std::string svg = percentileChartSvg({phase}, "subtitle");
  EXPECT_TRUE(svg.starts_with("<svg") || svg.starts_with("<?xml")) << svg.substr(0, 40);
  EXPECT_NE(svg.find("Sets"), std::string::npos);
  EXPECT_NE(svg.find("Gets"), std::string::npos);
  EXPECT_EQ(svg.find("Totals"), std::string::npos);
  for (const char* label : {"90%", "99%", "99.9%", "99.99%", "99.999%"}) {
    EXPECT_NE(svg.find(std::string(">") + label + "<"), std::string::npos) << label;
  }
}

}  // namespace
}  // namespace sp::bench
