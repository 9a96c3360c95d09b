// FamilySet: families by name, samples appended in order.
#include "metrics/family_set.h"

#include "core/assert.h"

namespace sp::metrics {
namespace {

prometheus::MetricType toPrometheus(Type type) {
  switch (type) {
    case Type::kCounter:
      return prometheus::MetricType::Counter;
    case Type::kGauge:
      return prometheus::MetricType::Gauge;
    case Type::kHistogram:
      return prometheus::MetricType::Histogram;
  }
  return prometheus::MetricType::Untyped;
}

template <typename Labels>
prometheus::ClientMetric metricWithLabels(const Labels& labels) {
  prometheus::ClientMetric metric;
  for (const Label& l : labels) {
    metric.label.push_back({std::string(l.first), std::string(l.second)});
  }
  return metric;
}

template <typename Labels>
void addSample(prometheus::MetricFamily& f, const Labels& labels, double value) {
  prometheus::ClientMetric metric = metricWithLabels(labels);
  if (f.type == prometheus::MetricType::Counter) {
    metric.counter.value = value;
  } else {
    metric.gauge.value = value;
  }
  f.metric.push_back(std::move(metric));
}

}  // namespace

prometheus::MetricFamily& FamilySet::family(std::string_view name, std::string_view help,
                                            Type type) {
  auto it = index_.find(std::string(name));
  if (it != index_.end()) {
    prometheus::MetricFamily& f = families_[it->second];
    SP_ASSERT(f.type == toPrometheus(type));
    return f;
  }
  index_.emplace(std::string(name), families_.size());
  prometheus::MetricFamily f;
  f.name = std::string(name);
  f.help = std::string(help);
  f.type = toPrometheus(type);
  families_.push_back(std::move(f));
  return families_.back();
}

void FamilySet::add(std::string_view name, std::string_view help, Type type,
                    std::initializer_list<Label> labels, double value) {
  addSample(family(name, help, type), labels, value);
}

void FamilySet::add(std::string_view name, std::string_view help, Type type,
                    const std::vector<Label>& labels, double value) {
  addSample(family(name, help, type), labels, value);
}

void FamilySet::addHistogram(std::string_view name, std::string_view help,
                             std::initializer_list<Label> labels, const HistogramTotals& totals) {
  prometheus::MetricFamily& f = family(name, help, Type::kHistogram);
  prometheus::ClientMetric metric = metricWithLabels(labels);
  uint64_t cumulative = 0;
  for (size_t i = 0; i < kLatencyBoundsUs.size(); ++i) {
    cumulative += totals.buckets[i];
    metric.histogram.bucket.push_back({cumulative, static_cast<double>(kLatencyBoundsUs[i]) / 1e6});
  }
  cumulative += totals.buckets[kLatencyBoundsUs.size()];
  // The text serializer writes the +Inf bucket from sample_count.
  metric.histogram.sample_count = cumulative;
  metric.histogram.sample_sum = static_cast<double>(totals.sum_us) / 1e6;
  f.metric.push_back(std::move(metric));
}

}  // namespace sp::metrics
