// Median, min–max and the overlap rule.
#include "spread.h"

#include <algorithm>
#include <cmath>

#include "markdown_table.h"

namespace sp::bench {

std::optional<Spread> spreadOf(std::vector<double> values) {
  values.erase(
      std::remove_if(values.begin(), values.end(), [](double v) { return !std::isfinite(v); }),
      values.end());
  if (values.empty()) {
    return std::nullopt;
  }
  Spread s;
  s.values = values;
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  s.median = n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
  s.min = values.front();
  s.max = values.back();
  return s;
}

bool rangesOverlap(const Spread& a, const Spread& b) { return a.min <= b.max && b.min <= a.max; }

Verdict compareSpreads(const Spread& a, const Spread& b) {
  if (!a.measured() || !b.measured()) {
    return Verdict::kUntested;
  }
  return rangesOverlap(a, b) ? Verdict::kWithinNoise : Verdict::kDifferent;
}

std::string formatSpread(const Spread& s, int decimals) {
  std::string text = formatValue(s.median, decimals);
  const std::string lo = formatValue(s.min, decimals);
  const std::string hi = formatValue(s.max, decimals);
  if (s.measured() && lo != hi) {
    text += " (" + lo + "\u2013" + hi + ")";
  }
  return text;
}

std::string formatSpread(const std::optional<Spread>& s, int decimals) {
  return s ? formatSpread(*s, decimals) : formatValue(std::nullopt, decimals);
}

}  // namespace sp::bench
