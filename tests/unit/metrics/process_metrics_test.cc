// The standard process families (metrics/process_metrics.cc): one unlabelled sample each, CPU time
// as a counter and the rest as gauges with the official client libraries' help texts;
// process_open_fds counts exactly the descriptors the process holds (not the one it reads them
// through) and process_max_fds is the soft RLIMIT_NOFILE.
#include "metrics/process_metrics.h"

#include <sys/resource.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <map>
#include <string>

namespace sp::metrics {
namespace {

struct Sample {
  prometheus::MetricType type;
  std::string help;
  size_t samples = 0;
  size_t labels = 0;
  double value = 0;
};

std::map<std::string, Sample> scrape() {
  FamilySet set;
  collectProcessMetrics(&set);
  std::map<std::string, Sample> out;
  for (const prometheus::MetricFamily& f : set.families()) {
    Sample s{f.type, f.help, f.metric.size(), 0, 0};
    if (!f.metric.empty()) {
      s.labels = f.metric[0].label.size();
      s.value = f.type == prometheus::MetricType::Counter ? f.metric[0].counter.value
                                                          : f.metric[0].gauge.value;
    }
    out[f.name] = s;
  }
  return out;
}

TEST(ProcessMetricsTest, EachFamilyHasOneUnlabelledSampleOfItsType) {
  const std::map<std::string, Sample> got = scrape();
  const std::map<std::string, std::pair<prometheus::MetricType, std::string>> expected = {
      {"process_cpu_seconds_total",
       {prometheus::MetricType::Counter, "Total user and system CPU time spent in seconds."}},
      {"process_start_time_seconds",
       {prometheus::MetricType::Gauge, "Start time of the process since unix epoch in seconds."}},
      {"process_virtual_memory_bytes",
       {prometheus::MetricType::Gauge, "Virtual memory size in bytes."}},
      {"process_resident_memory_bytes",
       {prometheus::MetricType::Gauge, "Resident memory size in bytes."}},
      {"process_open_fds", {prometheus::MetricType::Gauge, "Number of open file descriptors."}},
      {"process_max_fds",
       {prometheus::MetricType::Gauge, "Maximum number of open file descriptors."}},
  };
  ASSERT_EQ(got.size(), expected.size());
  for (const auto& [name, want] : expected) {
    ASSERT_EQ(got.count(name), 1u) << name;
    const Sample& s = got.at(name);
    EXPECT_EQ(s.type, want.first) << name;
    EXPECT_EQ(s.help, want.second) << name;
    EXPECT_EQ(s.samples, 1u) << name;
    EXPECT_EQ(s.labels, 0u) << name;
  }
}

TEST(ProcessMetricsTest, OpenFdsCountsExactlyTheDescriptorsHeld) {
  const double before = scrape().at("process_open_fds").value;
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  const int third = ::dup(fds[0]);
  ASSERT_GE(third, 0);
  const double during = scrape().at("process_open_fds").value;
  ::close(fds[0]);
  ::close(fds[1]);
  ::close(third);
  EXPECT_EQ(during, before + 3);
  EXPECT_EQ(scrape().at("process_open_fds").value, before);
}

TEST(ProcessMetricsTest, MaxFdsIsTheSoftOpenFilesLimit) {
  rlimit limit{};
  ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &limit), 0);
  if (limit.rlim_cur == RLIM_INFINITY) {
    EXPECT_EQ(scrape().count("process_max_fds"), 0u);  // "unlimited": not exported
    return;
  }
  EXPECT_EQ(scrape().at("process_max_fds").value, static_cast<double>(limit.rlim_cur));
}

TEST(ProcessMetricsTest, ResidentMemoryIsAWholeNumberOfPagesBelowVirtualMemory) {
  const std::map<std::string, Sample> got = scrape();
  const double rss = got.at("process_resident_memory_bytes").value;
  const double page = static_cast<double>(::sysconf(_SC_PAGESIZE));
  EXPECT_GT(rss, 0);
  EXPECT_EQ(rss / page, static_cast<double>(static_cast<uint64_t>(rss / page)));
  EXPECT_LT(rss, got.at("process_virtual_memory_bytes").value);
}

}  // namespace
}  // namespace sp::metrics
