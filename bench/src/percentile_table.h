// PercentileTable: --print-percentiles. Parses the list of percentiles and prints, after a run,
// one table per command row with each percentile's latency, read from the row's own latency
// histogram (the same one the main table reads, so the numbers agree with it).
#pragma once

#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "command_stats.h"

namespace sp::bench {

// "50,90,99,99.9,99.99" -> {50, 90, 99, 99.9, 99.99}, sorted, duplicates dropped. Each entry is a
// plain decimal number above 0 and at most 100 (100 is the exact max). False with a one-line
// message naming the bad entry.
bool parsePercentileList(std::string_view text, std::vector<double>* out, std::string* error);

// The shortest text that reads back as `percent`: 50 -> "50", 99.9 -> "99.9".
std::string percentileLabel(double percent);

// The rows that get a table (and an .hgrm file): every command row, not the Totals row.
bool isCommandRow(const PhaseResult& phase, const RowResult& row);

// One table per command row of every phase:
//
//   SET latency percentiles: 100000 requests, max 5.18580 ms
//     Percentile    Latency (ms)
//            50%         0.63283
//
// Latencies are bucket middles clamped to the exact min and max (LatencyHistogram::percentile).
void printPercentileTables(FILE* out, const std::vector<PhaseResult>& phases,
                           const std::vector<double>& percents);

}  // namespace sp::bench
