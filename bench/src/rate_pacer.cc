// Intended-send-time arithmetic for --rate.
#include "rate_pacer.h"

#include <cmath>

namespace sp::bench {

RatePacer::RatePacer(double rate, uint32_t connections, uint64_t start_ns)
    : period_ns_(rate > 0 ? 1e9 / rate : 0),
      conns_(connections > 0 ? connections : 1),
      start_ns_(start_ns) {}

uint64_t RatePacer::slotsDue(uint64_t now) const {
  if (now < start_ns_) {
    return 0;
  }
  const double k = std::floor(static_cast<double>(now - start_ns_) / period_ns_);
  uint64_t due = static_cast<uint64_t>(k) + 1;
  // Guard against rounding: slot `due` must be in the future, slot `due - 1` not.
  while (due > 0 && slotTime(due - 1) > now) {
    --due;
  }
  while (slotTime(due) <= now) {
    ++due;
  }
  return due;
}

uint64_t RatePacer::dueCount(uint32_t c, uint64_t now) const {
  // Slot k belongs to connection k mod C; count slots < slotsDue(now) congruent to c.
  const uint64_t slots = slotsDue(now);
  const auto conns = static_cast<uint64_t>(conns_);
  if (slots <= c) {
    return 0;
  }
  return (slots - 1 - c) / conns + 1;
}

}  // namespace sp::bench
