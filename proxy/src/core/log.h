// Logging setup and a rate limiter for log lines caused by bad input (at most N per second).
#pragma once

#include <cstdint>
#include <string_view>

#include <spdlog/spdlog.h>

namespace sp {

// Sets the global spdlog level from a config name ("info", "debug", ...). False if unknown.
bool setLogLevel(std::string_view level);

// Allows `per_second` events per one-second window; used per worker, so it needs no locking.
class LogLimiter {
 public:
  explicit LogLimiter(uint32_t per_second = 10) : per_second_(per_second) {}
  bool allow();
  uint64_t suppressed() const { return suppressed_; }

 private:
  uint32_t per_second_;
  uint64_t window_start_ms_ = 0;
  uint32_t in_window_ = 0;
  uint64_t suppressed_ = 0;
};

}  // namespace sp
