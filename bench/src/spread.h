// Spread: what the repetitions of one measurement say together — every value, their median and
// their min–max range — and the rule every report uses before it calls two results different:
// their min–max ranges must not overlap. A single repetition has no spread, so a comparison
// with one is untested rather than a difference (this machine is shared and noisy).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace sp::bench {

struct Spread {
  std::vector<double> values;  // in repetition order
  double median = 0;
  double min = 0;
  double max = 0;

  size_t count() const { return values.size(); }
  // At least two repetitions: the min–max range says something about the noise.
  bool measured() const { return values.size() >= 2; }
};

// The spread of `values` (in repetition order); nullopt when there are none.
std::optional<Spread> spreadOf(std::vector<double> values);

// Whether [a.min, a.max] and [b.min, b.max] share a point.
bool rangesOverlap(const Spread& a, const Spread& b);

enum class Verdict {
  kDifferent,    // both measured, ranges apart
  kWithinNoise,  // both measured, ranges overlap
  kUntested,     // one side has a single repetition: no spread to test against
};

Verdict compareSpreads(const Spread& a, const Spread& b);

// "123456 (118000–130100)" with `decimals` decimals; just the median when the range is a point
// (one repetition, or all equal).
std::string formatSpread(const Spread& s, int decimals);
// As formatSpread, "—" when absent.
std::string formatSpread(const std::optional<Spread>& s, int decimals);

}  // namespace sp::bench
