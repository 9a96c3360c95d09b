// Measurements: metric lookup by row, per-point readings, failed runs, medians and spreads.
#include "measurement.h"

#include <gtest/gtest.h>

namespace sp::bench {
namespace {

Measurement make(double set_qps, uint64_t hits, uint64_t misses) {
  Measurement m;
  m.status = MeasureStatus::kOk;
  m.connections = 100;
  RowSummary set;
  set.name = "SET";
  set.ops = 1000;
  set.qps = set_qps;
  set.avg_ns = 250000;
  set.p99_ns = 2e6;
  set.p9999_ns = 5e6;
  m.rows.push_back(set);
  RowSummary get;
  get.name = "GET";
  get.has_hits = true;
  get.ops = hits + misses;
  get.hits = hits;
  get.misses = misses;
  get.qps = 2 * set_qps;
  m.rows.push_back(get);
  return m;
}

TEST(MeasurementTest, RowMetrics) {
  const Measurement m = make(1000, 3, 1);
  EXPECT_EQ(metricValue(m, "SET", Metric::kQps), 1000);
  EXPECT_EQ(metricValue(m, "GET", Metric::kQps), 2000);
  EXPECT_DOUBLE_EQ(*metricValue(m, "SET", Metric::kAvgMs), 0.25);
  EXPECT_DOUBLE_EQ(*metricValue(m, "SET", Metric::kAvgUs), 250);
  EXPECT_DOUBLE_EQ(*metricValue(m, "SET", Metric::kP99Ms), 2);
  EXPECT_DOUBLE_EQ(*metricValue(m, "SET", Metric::kP9999Ms), 5);
  EXPECT_DOUBLE_EQ(*metricValue(m, "GET", Metric::kHitRate), 0.75);
  EXPECT_FALSE(metricValue(m, "SET", Metric::kHitRate).has_value());
  EXPECT_FALSE(metricValue(m, "HGETALL", Metric::kQps).has_value());
}

TEST(MeasurementTest, PointMetrics) {
  Measurement m = make(1000, 0, 0);
  EXPECT_FALSE(metricValue(m, "", Metric::kRssPerConnKb).has_value());
  m.proxy_rss_kb_before = 10000;
  m.proxy_rss_kb_peak = 10000 + 100 * 4.5;
  m.connected_clients_peak = 100;
  m.shard_memory_bytes = 3 * 1048576.0;
  EXPECT_DOUBLE_EQ(*metricValue(m, "ignored", Metric::kRssPerConnKb), 4.5);
  EXPECT_DOUBLE_EQ(*metricValue(m, "", Metric::kProxyRssMb), 10450 / 1024.0);
  EXPECT_EQ(metricValue(m, "", Metric::kConnectedClients), 100);
  EXPECT_EQ(metricValue(m, "", Metric::kShardMemoryMb), 3);
}

TEST(MeasurementTest, FailedMeasurementsHaveNoValues) {
  Measurement m = make(1000, 0, 0);
  m.status = MeasureStatus::kFailed;
  EXPECT_FALSE(metricValue(m, "SET", Metric::kQps).has_value());
}

TEST(MeasurementTest, MedianOverRepetitions) {
  const Measurement a = make(100, 0, 0);
  const Measurement b = make(300, 0, 0);
  const Measurement c = make(200, 0, 0);
  Measurement failed = make(999, 0, 0);
  failed.status = MeasureStatus::kFailed;
  EXPECT_EQ(medianValue({&a, &b, &c}, "SET", Metric::kQps), 200);
  EXPECT_EQ(medianValue({&a, &b}, "SET", Metric::kQps), 200);
  EXPECT_EQ(medianValue({&a, &failed}, "SET", Metric::kQps), 100);
  EXPECT_FALSE(medianValue({&failed}, "SET", Metric::kQps).has_value());
  EXPECT_FALSE(medianValue({}, "SET", Metric::kQps).has_value());
}

TEST(MeasurementTest, SpreadOverRepetitionsKeepsEverySuccessfulValue) {
  const Measurement a = make(100, 0, 0);
  const Measurement b = make(300, 0, 0);
  const Measurement c = make(200, 0, 0);
  Measurement failed = make(999, 0, 0);
  failed.status = MeasureStatus::kFailed;
  const auto s = spreadValue({&a, &failed, &b, &c}, "SET", Metric::kQps);
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->values, (std::vector<double>{100, 300, 200}));
  EXPECT_EQ(s->median, 200);
  EXPECT_EQ(s->min, 100);
  EXPECT_EQ(s->max, 300);
  EXPECT_EQ(spreadValue({&a, &b}, "GET", Metric::kQps)->max, 600);
  EXPECT_FALSE(spreadValue({&failed}, "SET", Metric::kQps).has_value());
}

}  // namespace
}  // namespace sp::bench
