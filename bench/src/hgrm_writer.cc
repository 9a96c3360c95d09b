// HdrHistogram percentile distribution text, file naming and the percentile chart.
#include "hgrm_writer.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <set>

#include "percentile_table.h"
#include "svg_chart.h"

namespace sp::bench {
namespace {

constexpr double kNsPerMs = 1e6;

// HdrHistogram's bucket count and sub-bucket count for LatencyHistogram's layout: bucket 0 holds
// the values below 256 one by one, every later bucket the upper half of 256 sub-buckets.
constexpr uint64_t kHdrSubBuckets = 2 * LatencyHistogram::kSubBuckets;
constexpr uint64_t kHdrBuckets = LatencyHistogram::kBucketCount / LatencyHistogram::kSubBuckets - 1;

// HdrHistogram's highest equivalent value; the top bucket also holds every larger value.
uint64_t bucketTop(const LatencyHistogram& h, size_t index) {
  const uint64_t top =
      LatencyHistogram::bucketLow(index) + LatencyHistogram::bucketWidth(index) - 1;
  return index + 1 == LatencyHistogram::kBucketCount ? std::max(top, h.max()) : top;
}

// PercentileIterator.incrementIterationLevel: the tick size for the current half distance.
double nextLevel(double level, int ticks_per_half_distance) {
  const auto halvings = static_cast<int64_t>(std::log(100.0 / (100.0 - level)) / std::log(2.0));
  const auto ticks = static_cast<int64_t>(ticks_per_half_distance) *
                     static_cast<int64_t>(std::pow(2.0, static_cast<double>(halvings + 1)));
  return level + 100.0 / static_cast<double>(ticks);
}

}  // namespace

std::vector<HgrmRow> percentileDistribution(const LatencyHistogram& h,
                                            int ticks_per_half_distance) {
  std::vector<HgrmRow> rows;
  const uint64_t total = h.count();
  if (total == 0 || ticks_per_half_distance < 1) {
    return rows;
  }
  const std::vector<uint64_t>& counts = h.buckets();
  double level = 0;
  bool reached_last = false;
  size_t index = 0;
  uint64_t count_to_index = 0;
  bool fresh = true;  // the bucket at `index` has not been added to count_to_index yet
  for (;;) {
    // hasNext: more counts to walk, or the one extra step to 100%.
    if (count_to_index >= total) {
      if (reached_last) {
        break;
      }
      level = 100.0;
      reached_last = true;
    }
    // next: walk the buckets until one reaches the level (a bucket can report several levels).
    bool found = false;
    while (index < counts.size()) {
      if (fresh) {
        count_to_index += counts[index];
        fresh = false;
      }
      const double reached =
          100.0 * static_cast<double>(count_to_index) / static_cast<double>(total);
      if (counts[index] != 0 && reached >= level) {
        rows.push_back({bucketTop(h, index), level, count_to_index});
        if (level < 100.0) {
          level = nextLevel(level, ticks_per_half_distance);
        }
        found = true;
        break;
      }
      ++index;
      fresh = true;
    }
    if (!found) {
      break;  // counts that do not add up to count(); nothing more to report
    }
  }
  return rows;
}

std::string hgrmText(const LatencyHistogram& h, int ticks_per_half_distance) {
  std::string out;
  char line[160];
  std::snprintf(line, sizeof(line), "%12s %14s %10s %14s\n\n", "Value", "Percentile", "TotalCount",
                "1/(1-Percentile)");
  out += line;
  for (const HgrmRow& r : percentileDistribution(h, ticks_per_half_distance)) {
    const double value = static_cast<double>(r.value_ns) / kNsPerMs;
    const double p = r.percentile / 100.0;
    const auto total = static_cast<unsigned long long>(r.total_count);
    if (r.percentile != 100.0) {
      std::snprintf(line, sizeof(line), "%12.3f %2.12f %10llu %14.2f\n", value, p, total,
                    1.0 / (1.0 - p));
    } else {
      std::snprintf(line, sizeof(line), "%12.3f %2.12f %10llu\n", value, p, total);
    }
    out += line;
  }
  double stddev = 0;
  uint64_t max_top = 0;
  if (h.count() > 0) {
    const double mean = h.mean();
    double squares = 0;
    const std::vector<uint64_t>& counts = h.buckets();
    for (size_t i = 0; i < counts.size(); ++i) {
      if (counts[i] != 0) {
        const double d = static_cast<double>(LatencyHistogram::bucketMiddle(i)) - mean;
        squares += d * d * static_cast<double>(counts[i]);
      }
    }
    stddev = std::sqrt(squares / static_cast<double>(h.count()));
    max_top = bucketTop(h, LatencyHistogram::indexOf(h.max()));
  }
  std::snprintf(line, sizeof(line), "#[Mean    = %12.3f, StdDeviation   = %12.3f]\n",
                h.mean() / kNsPerMs, stddev / kNsPerMs);
  out += line;
  std::snprintf(line, sizeof(line), "#[Max     = %12.3f, Total count    = %12llu]\n",
                static_cast<double>(max_top) / kNsPerMs,
                static_cast<unsigned long long>(h.count()));
  out += line;
  std::snprintf(line, sizeof(line), "#[Buckets = %12llu, SubBuckets     = %12llu]\n",
                static_cast<unsigned long long>(kHdrBuckets),
                static_cast<unsigned long long>(kHdrSubBuckets));
  out += line;
  return out;
}

std::string hgrmFileName(std::string_view prefix, std::string_view row) {
  std::string name;
  bool gap = false;
  for (char c : row) {
    const bool keep = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                      c == '-' || c == '.';
    if (!keep) {
      gap = true;
      continue;
    }
    if (gap && !name.empty()) {
      name += '_';
    }
    gap = false;
    name += c;
  }
  if (name.empty()) {
    name = "ROW";
  }
  return std::string(prefix) + "_" + name + ".hgrm";
}

std::string percentileChartSvg(const std::vector<PhaseResult>& phases, std::string_view subtitle) {
  static constexpr double kLevels[] = {0, 90, 99, 99.9, 99.99, 99.999};
  ChartData chart;
  chart.title = "Latency by percentile";
  chart.subtitle = std::string(subtitle);
  chart.x_title = "percentile (log scale of 1/(1-p))";
  chart.y_title = "latency (ms)";
  for (double q : kLevels) {
    chart.x_labels.push_back(percentileLabel(q) + "%");
  }
  for (const PhaseResult& p : phases) {
    for (const RowResult& r : p.rows) {
      const LatencyHistogram& h = r.stats.latency;
      if (!isCommandRow(p, r) || h.count() == 0) {
        continue;
      }
      ChartSeries series;
      series.name = r.type;
      for (double q : kLevels) {
        series.values.emplace_back(static_cast<double>(h.percentile(q)) / kNsPerMs);
      }
      chart.series.push_back(std::move(series));
    }
  }
  return lineChartSvg(chart);
}

bool writeHdrFiles(std::string_view prefix, const std::vector<PhaseResult>& phases,
                   std::string_view subtitle, std::vector<std::string>* written,
                   std::string* error) {
  auto writeFile = [&](const std::string& path, const std::string& text) {
    FILE* f = std::fopen(path.c_str(), "w");
    const bool ok = f != nullptr && std::fwrite(text.data(), 1, text.size(), f) == text.size();
    const int saved = errno;
    if (f != nullptr && std::fclose(f) != 0 && ok) {
      *error = "cannot write " + path + ": " + std::strerror(errno);
      return false;
    }
    if (!ok) {
      *error = "cannot write " + path + ": " + std::strerror(saved);
      return false;
    }
    written->push_back(path);
    return true;
  };
  std::set<std::string> used;
  for (const PhaseResult& p : phases) {
    for (const RowResult& r : p.rows) {
      if (!isCommandRow(p, r) || r.stats.latency.count() == 0) {
        continue;
      }
      std::string path = hgrmFileName(prefix, r.type);
      for (int n = 2; used.count(path) > 0; ++n) {
        path = hgrmFileName(prefix, r.type + "_" + std::to_string(n));
      }
      used.insert(path);
      if (!writeFile(path, hgrmText(r.stats.latency))) {
        return false;
      }
    }
  }
  return writeFile(std::string(prefix) + "_percentiles.svg", percentileChartSvg(phases, subtitle));
}

}  // namespace sp::bench
