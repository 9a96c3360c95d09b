// Measurement: what one point of a scenario (or one cell of the matrix) measured against one
// target in one repetition: the rows of its shardbench runs boiled down to numbers, the
// per-point readings (proxy RSS, INFO connected_clients, shard memory), its status, and the raw
// run records for the result directory. Tables read values out of it by row name and metric;
// repetitions are combined by the median and shown with their min–max range (spread.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "metric.h"
#include "result_json.h"
#include "spread.h"

namespace sp::bench {

struct RowSummary {
  std::string name;  // "SET", "Gets", "Totals"; "run/ROW" for points with several runs
  bool has_hits = false;
  uint64_t ops = 0;
  uint64_t hits = 0;
  uint64_t misses = 0;
  uint64_t errors = 0;
  double qps = 0;
  double kb_per_sec = 0;
  double avg_ns = 0;
  double p50_ns = 0;
  double p90_ns = 0;
  double p99_ns = 0;
  double p999_ns = 0;
  double p9999_ns = 0;
  double max_ns = 0;
};

RowSummary summarizeRow(const RowResult& row, std::string name);

enum class MeasureStatus : uint8_t { kOk, kFailed, kSkipped, kNotRun };
std::string_view statusName(MeasureStatus status);

struct Measurement {
  std::string point;
  std::string target;
  int rep = 0;
  MeasureStatus status = MeasureStatus::kNotRun;
  std::string message;  // why it failed or was skipped
  double wall_s = 0;
  uint64_t connections = 0;
  std::vector<RowSummary> rows;
  std::optional<double> connected_clients_peak;
  std::optional<double> proxy_rss_kb_before;
  std::optional<double> proxy_rss_kb_peak;
  std::optional<double> shard_memory_bytes;
  std::vector<std::string> commands;                       // shardbench command lines
  std::vector<std::pair<std::string, RunRecord>> records;  // per run (name "" for a single run)

  const RowSummary* row(std::string_view name) const;
};

// A metric of a row (or of the point, for per-point metrics); nullopt when not measured.
std::optional<double> metricValue(const Measurement& m, std::string_view row, Metric metric);

// The median over the repetitions that succeeded; nullopt when none has the value.
std::optional<double> medianValue(const std::vector<const Measurement*>& reps, std::string_view row,
                                  Metric metric);

// Every successful repetition's value with their median and min–max; nullopt when none has it.
std::optional<Spread> spreadValue(const std::vector<const Measurement*>& reps, std::string_view row,
                                  Metric metric);

}  // namespace sp::bench
