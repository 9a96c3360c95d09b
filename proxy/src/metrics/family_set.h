// FamilySet: the metric families of one scrape, built by the collectors. A family is created the
// first time its name is used and samples are appended to it, so metrics that share a name (one
// per label value, declared as separate catalogue rows) land in one family. Families keep the
// order in which they were first used.
#pragma once

#include <prometheus/metric_family.h>

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "metrics/latency_histogram.h"

namespace sp::metrics {

enum class Type : uint8_t { kCounter, kGauge, kHistogram };

using Label = std::pair<std::string_view, std::string_view>;

class FamilySet {
 public:
  // Appends one sample to the family `name` (created with `help` and `type` on first use).
  void add(std::string_view name, std::string_view help, Type type,
           std::initializer_list<Label> labels, double value);
  void add(std::string_view name, std::string_view help, Type type,
           const std::vector<Label>& labels, double value);
  // A histogram sample from per-bucket counts in microseconds; exported in seconds.
  void addHistogram(std::string_view name, std::string_view help,
                    std::initializer_list<Label> labels, const HistogramTotals& totals);

  std::vector<prometheus::MetricFamily> take() { return std::move(families_); }
  const std::vector<prometheus::MetricFamily>& families() const { return families_; }

 private:
  prometheus::MetricFamily& family(std::string_view name, std::string_view help, Type type);

  std::vector<prometheus::MetricFamily> families_;
  std::unordered_map<std::string, size_t> index_;
};

}  // namespace sp::metrics
