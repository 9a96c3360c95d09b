// RatePacer: the schedule of intended send times under --rate. A thread's share of the rate is a
// regular sequence of slots (slot k at start + k * period) dealt round-robin to its connections,
// so connection c sends its i-th request at start + (c + i * C) * period. Latency is measured
// from these times, not from when the request actually left, so a stall shows up in the
// percentiles (no coordinated omission).
#pragma once

#include <cstdint>

namespace sp::bench {

class RatePacer {
 public:
  RatePacer() = default;
  // `rate` requests/s for this thread, `connections` connections, schedule starting at start_ns.
  RatePacer(double rate, uint32_t connections, uint64_t start_ns);

  bool enabled() const { return period_ns_ > 0; }
  uint64_t start() const { return start_ns_; }
  double periodNs() const { return period_ns_; }

  // Intended send time of request `i` of connection `c`.
  uint64_t intendedTime(uint32_t c, uint64_t i) const {
    return start_ns_ + static_cast<uint64_t>(
                           (static_cast<double>(c) + static_cast<double>(i) * conns_) * period_ns_);
  }

  // How many requests of connection `c` are due at `now` (intended time <= now).
  uint64_t dueCount(uint32_t c, uint64_t now) const;

  // Slots (over all connections) due at `now`, and the time of slot `k`.
  uint64_t slotsDue(uint64_t now) const;
  uint64_t slotTime(uint64_t k) const {
    return start_ns_ + static_cast<uint64_t>(static_cast<double>(k) * period_ns_);
  }

 private:
  double period_ns_ = 0;
  double conns_ = 1;
  uint64_t start_ns_ = 0;
};

}  // namespace sp::bench
