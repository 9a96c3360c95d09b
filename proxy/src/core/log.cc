// Log level parsing and the per-worker log rate limiter.
#include "core/log.h"

#include "core/clock.h"

namespace sp {

bool setLogLevel(std::string_view level) {
  auto lvl = spdlog::level::from_str(std::string(level));
  if (lvl == spdlog::level::off && level != "off") {
    return false;
  }
  spdlog::set_level(lvl);
  return true;
}

bool LogLimiter::allow() {
  uint64_t now_ms = monoMicros() / 1000;
  if (now_ms - window_start_ms_ >= 1000) {
    window_start_ms_ = now_ms;
    in_window_ = 0;
  }
  if (in_window_ < per_second_) {
    ++in_window_;
    return true;
  }
  ++suppressed_;
  return false;
}

}  // namespace sp
