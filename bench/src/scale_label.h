// How a result's scale shows in what it writes: a quick run is a smoke test (does every piece
// start, connect and report?), not a measurement, so every table title, chart title and output
// file name of one says so, and tools/bench-report-publish.py refuses to publish it.
#pragma once

#include <string>

namespace sp::bench {

inline constexpr const char* kQuickTitleSuffix = " (quick smoke test, not a measurement)";

inline bool isQuickScale(const std::string& scale) { return scale == "quick"; }

// "SET requests per second" -> "SET requests per second (quick smoke test, not a measurement)".
inline std::string scaleTitle(const std::string& title, const std::string& scale) {
  return isQuickScale(scale) ? title + kQuickTitleSuffix : title;
}

// "matrix-set.svg" -> "matrix-set-quick.svg" (the suffix goes before the extension).
inline std::string scaleFileName(const std::string& name, const std::string& scale) {
  if (!isQuickScale(scale)) {
    return name;
  }
  const size_t dot = name.rfind('.');
  return dot == std::string::npos ? name + "-quick"
                                  : name.substr(0, dot) + "-quick" + name.substr(dot);
}

}  // namespace sp::bench
