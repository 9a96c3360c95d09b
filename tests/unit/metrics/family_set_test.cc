// Tests FamilySet and the text it serializes to: one family per name whatever the number of rows
// that feed it, cumulative histogram buckets in seconds with +Inf, process metrics present, and
// (when promtool is installed) the text passes `promtool check metrics`.
#include "metrics/family_set.h"

#include <gtest/gtest.h>
#include <prometheus/text_serializer.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "metrics/process_metrics.h"

namespace sp::metrics {
namespace {

std::string serialize(const FamilySet& set) {
  return prometheus::TextSerializer().Serialize(set.families());
}

TEST(FamilySetTest, RowsWithTheSameNameShareOneFamily) {
  FamilySet set;
  set.add("shardproxy_backend_errors_total", "Backend failures by kind", Type::kCounter,
          {{"shard", "s0"}, {"kind", "connection"}}, 3);
  set.add("shardproxy_backend_errors_total", "ignored: the first help wins", Type::kCounter,
          {{"shard", "s0"}, {"kind", "timeout"}}, 1);
  set.add("shardproxy_workers", "Worker threads", Type::kGauge, {}, 2);
  ASSERT_EQ(set.families().size(), 2u);
  EXPECT_EQ(set.families()[0].metric.size(), 2u);
  const std::string text = serialize(set);
  EXPECT_NE(text.find("# HELP shardproxy_backend_errors_total Backend failures by kind\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("# TYPE shardproxy_backend_errors_total counter\n"), std::string::npos);
  EXPECT_NE(text.find("shardproxy_backend_errors_total{shard=\"s0\",kind=\"timeout\"} 1"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("shardproxy_workers 2"), std::string::npos) << text;
}

TEST(FamilySetTest, HistogramIsCumulativeInSeconds) {
  HistogramTotals totals;
  totals.buckets[0] = 2;                        // <= 25 us
  totals.buckets[2] = 3;                        // <= 100 us
  totals.buckets[kLatencyBoundsUs.size()] = 1;  // +Inf
  totals.sum_us = 1500000;
  FamilySet set;
  set.addHistogram("shardproxy_request_duration_seconds", "Request duration", {{"class", "read"}},
                   totals);
  const std::string text = serialize(set);
  EXPECT_NE(
      text.find("shardproxy_request_duration_seconds_bucket{class=\"read\",le=\"2.5e-05\"} 2"),
      std::string::npos)
      << text;
  EXPECT_NE(text.find("shardproxy_request_duration_seconds_bucket{class=\"read\",le=\"5e-05\"} 2"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("shardproxy_request_duration_seconds_bucket{class=\"read\",le=\"0.0001\"} 5"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("shardproxy_request_duration_seconds_bucket{class=\"read\",le=\"10\"} 5"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("shardproxy_request_duration_seconds_bucket{class=\"read\",le=\"+Inf\"} 6"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("shardproxy_request_duration_seconds_count{class=\"read\"} 6"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("shardproxy_request_duration_seconds_sum{class=\"read\"} 1.5"),
            std::string::npos)
      << text;
}

TEST(ProcessMetricsTest, ReportsTheStandardProcessFamilies) {
  FamilySet set;
  collectProcessMetrics(&set);
  const std::string text = serialize(set);
  for (const char* name : {"process_cpu_seconds_total", "process_resident_memory_bytes",
                           "process_virtual_memory_bytes", "process_open_fds", "process_max_fds",
                           "process_start_time_seconds"}) {
    EXPECT_NE(text.find(std::string("# TYPE ") + name), std::string::npos) << name << "\n" << text;
  }
  for (const auto& f : set.families()) {
    if (f.name == "process_resident_memory_bytes") {
      ASSERT_EQ(f.metric.size(), 1u);
      EXPECT_GT(f.metric[0].gauge.value, 1e5);
    }
    if (f.name == "process_open_fds") {
      EXPECT_GE(f.metric[0].gauge.value, 3);  // stdin, stdout, stderr at least
    }
  }
}

TEST(FamilySetTest, TextPassesPromtool) {
  if (access("/usr/bin/promtool", X_OK) != 0) {
    GTEST_SKIP() << "promtool (Debian package prometheus) is not installed";
  }
  FamilySet set;
  set.add("shardproxy_requests_total", "Requests by class and result", Type::kCounter,
          {{"class", "read"}, {"result", "ok"}}, 7);
  set.add("shardproxy_backend_up", "1 when a connection to the shard is up", Type::kGauge,
          {{"shard", "s0"}}, 1);
  HistogramTotals totals;
  totals.buckets[3] = 4;
  totals.sum_us = 800;
  set.addHistogram("shardproxy_request_duration_seconds", "Request duration", {{"class", "read"}},
                   totals);
  collectProcessMetrics(&set);
  char path[] = "/tmp/sp-metrics-XXXXXX";
  const int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  close(fd);
  {
    std::ofstream out(path);
    out << serialize(set);
  }
  const std::string command = std::string("/usr/bin/promtool check metrics < ") + path + " 2>&1";
  FILE* p = popen(command.c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string output;
  char buf[512];
  size_t n = 0;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) {
    output.append(buf, n);
  }
  const int status = pclose(p);
  unlink(path);
  EXPECT_EQ(status, 0) << output;
  EXPECT_EQ(output, "") << output;
}

}  // namespace
}  // namespace sp::metrics
