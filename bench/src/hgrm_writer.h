// HgrmWriter: --hdr-file-prefix. Writes a latency histogram as HdrHistogram's percentile
// distribution text (the .hgrm files of Java's outputPercentileDistribution, which
// memtier_benchmark's --hdr-file-prefix and HdrHistogram's plotter read), plus a percentile chart.
//
// LatencyHistogram has HdrHistogram's bucket layout (unit 1 ns, 256 sub-buckets, i.e. two
// significant digits, 36 buckets up to 2^43 ns), so rows are produced the way HdrHistogram's
// PercentileIterator produces them: a row's value is the top of its bucket (HdrHistogram's
// "highest equivalent value"), and the percentile levels step in ticks that halve with every
// half of the remaining distance to 100%.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "command_stats.h"
#include "latency_histogram.h"

namespace sp::bench {

// HdrHistogram's default: 5 ticks per half distance (0, 10, ..., 50, 55, ..., 75, 77.5, ...).
constexpr int kHgrmTicksPerHalfDistance = 5;

struct HgrmRow {
  uint64_t value_ns = 0;     // top of the bucket the level was reached in
  double percentile = 0;     // the level iterated to, 0..100
  uint64_t total_count = 0;  // values in this bucket and below
};

// The percentile iteration of HdrHistogram's PercentileIterator: the first row at level 0, the
// last at level 100 (after the count is exhausted). Empty for an empty histogram.
std::vector<HgrmRow> percentileDistribution(
    const LatencyHistogram& h, int ticks_per_half_distance = kHgrmTicksPerHalfDistance);

// The whole .hgrm text, values in milliseconds with 3 decimals: header, rows, and the
// #[Mean/StdDeviation], #[Max/Total count], #[Buckets/SubBuckets] footer. Mean is the exact mean,
// StdDeviation uses bucket middles, Max is the top of the max's bucket (as HdrHistogram reports
// it, equal to the 100% row).
std::string hgrmText(const LatencyHistogram& h,
                     int ticks_per_half_distance = kHgrmTicksPerHalfDistance);

// "PREFIX_<ROW>.hgrm", the row name with every run of characters other than letters, digits,
// '-' and '.' replaced by one '_' ("LPUSH (needed to benchmark LRANGE)" -> "LPUSH_needed_to_
// benchmark_LRANGE").
std::string hgrmFileName(std::string_view prefix, std::string_view row);

// An SVG line chart of latency by percentile, one line per command row: x at 0%, 90%, 99%,
// 99.9%, 99.99% and 99.999%, evenly spaced, i.e. a log scale of 1/(1-p).
std::string percentileChartSvg(const std::vector<PhaseResult>& phases, std::string_view subtitle);

// Writes PREFIX_<ROW>.hgrm for every command row of every phase (rows with no latencies are
// skipped) and PREFIX_percentiles.svg. The paths written go to *written. False with a message
// when a file cannot be written.
bool writeHdrFiles(std::string_view prefix, const std::vector<PhaseResult>& phases,
                   std::string_view subtitle, std::vector<std::string>* written,
                   std::string* error);

}  // namespace sp::bench
