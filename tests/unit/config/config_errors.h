// Helpers for asserting on lists of ConfigError in the config unit tests.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include "config/loader.h"

namespace sp::config::test {

inline std::string dump(const std::vector<ConfigError>& errors) {
  std::string out;
  for (const ConfigError& e : errors) {
    out += "  " + e.toString() + "\n";
  }
  return out.empty() ? "  (no errors)\n" : out;
}

// Passes when some error has exactly this path and a message containing the substring.
inline ::testing::AssertionResult hasError(const std::vector<ConfigError>& errors,
                                           std::string_view path, std::string_view substring) {
  for (const ConfigError& e : errors) {
    if (e.path == path && e.message.find(substring) != std::string::npos) {
      return ::testing::AssertionSuccess();
    }
  }
  return ::testing::AssertionFailure()
         << "no error '" << path << ": ..." << substring << "...' among:\n"
         << dump(errors);
}

inline size_t countPath(const std::vector<ConfigError>& errors, std::string_view path) {
  size_t n = 0;
  for (const ConfigError& e : errors) {
    n += e.path == path ? 1 : 0;
  }
  return n;
}

}  // namespace sp::config::test
