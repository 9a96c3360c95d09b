// Percentile list parsing and the per-command percentile tables.
#include "percentile_table.h"

#include <algorithm>
#include <charconv>
#include <cmath>

#include "report.h"

namespace sp::bench {

bool parsePercentileList(std::string_view text, std::vector<double>* out, std::string* error) {
  const std::string whole(text);
  auto fail = [&](const std::string& entry, std::string_view why) {
    *error = "invalid value '" + whole + "' for --print-percentiles: " +
             (entry.empty() ? std::string("empty entry") : "'" + entry + "' " + std::string(why)) +
             "; expected comma-separated percentiles above 0 and at most 100, e.g. 50,99,99.9";
    return false;
  };
  std::vector<double> values;
  size_t start = 0;
  for (;;) {
    size_t comma = text.find(',', start);
    if (comma == std::string_view::npos) {
      comma = text.size();
    }
    const std::string entry(text.substr(start, comma - start));
    if (entry.empty()) {
      return fail(entry, "");
    }
    double v = 0;
    const char* end = entry.data() + entry.size();
    const auto res = std::from_chars(entry.data(), end, v, std::chars_format::fixed);
    if (res.ec != std::errc() || res.ptr != end || !std::isfinite(v)) {
      return fail(entry, "is not a number");
    }
    if (v <= 0 || v > 100) {
      return fail(entry, "is out of range");
    }
    values.push_back(v);
    if (comma == text.size()) {
      break;
    }
    start = comma + 1;
  }
  std::sort(values.begin(), values.end());
  values.erase(std::unique(values.begin(), values.end()), values.end());
  *out = std::move(values);
  return true;
}

std::string percentileLabel(double percent) {
  char buf[32];
  const auto res = std::to_chars(buf, buf + sizeof(buf), percent);
  return std::string(buf, res.ptr);
}

bool isCommandRow(const PhaseResult& phase, const RowResult& row) {
  return !(phase.totals_row && row.type == "Totals");
}

void printPercentileTables(FILE* out, const std::vector<PhaseResult>& phases,
                           const std::vector<double>& percents) {
  for (const PhaseResult& p : phases) {
    for (const RowResult& r : p.rows) {
      if (!isCommandRow(p, r)) {
        continue;
      }
      const LatencyHistogram& h = r.stats.latency;
      std::fprintf(out, "\n%s latency percentiles: %llu requests", r.type.c_str(),
                   static_cast<unsigned long long>(h.count()));
      if (h.count() == 0) {
        std::fprintf(out, ", no latencies\n");
        continue;
      }
      std::fprintf(out, ", max %.5f ms\n", toMs(static_cast<double>(h.max())));
      std::fprintf(out, "  %12s %15s\n", "Percentile", "Latency (ms)");
      for (double q : percents) {
        const std::string label = percentileLabel(q) + "%";
        std::fprintf(out, "  %12s %15.5f\n", label.c_str(),
                     toMs(static_cast<double>(h.percentile(q))));
      }
    }
  }
}

}  // namespace sp::bench
