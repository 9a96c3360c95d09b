// INFO's baseline (CONFIG RESETSTAT) and rate samples.
#include "net/info_counters.h"

#include <iterator>
#include <utility>

namespace sp::net {

void InfoBaseline::reset(InfoCounters now) {
  std::lock_guard<std::mutex> lock(mu_);
  base_ = std::move(now);
}

InfoCounters InfoBaseline::since(InfoCounters now) const {
  std::lock_guard<std::mutex> lock(mu_);
  const InfoCounters& b = base_;
  auto less = [](uint64_t& v, uint64_t base) { v = v >= base ? v - base : 0; };
  for (auto [field, base] : {std::pair{&now.accepted, b.accepted},
                             {&now.rejected, b.rejected},
                             {&now.commands, b.commands},
                             {&now.local, b.local},
                             {&now.split, b.split},
                             {&now.refused, b.refused},
                             {&now.perr_client, b.perr_client},
                             {&now.perr_backend, b.perr_backend},
                             {&now.out_limit, b.out_limit},
                             {&now.paused, b.paused},
                             {&now.in, b.in},
                             {&now.sent, b.sent},
                             {&now.slow, b.slow},
                             {&now.auth_failures, b.auth_failures},
                             {&now.errors, b.errors},
                             {&now.reads, b.reads},
                             {&now.writes, b.writes},
                             {&now.ring_writes, b.ring_writes},
                             {&now.ring_submits, b.ring_submits},
                             {&now.ring_reads, b.ring_reads}}) {
    less(*field, base);
  }
  for (size_t i = 0; i < now.by_command.size() && i < b.by_command.size(); ++i) {
    InfoCounters::Command& t = now.by_command[i];
    less(t.calls, b.by_command[i].calls);
    less(t.usec, b.by_command[i].usec);
    less(t.failed, b.by_command[i].failed);
    for (size_t k = 0; k < t.buckets.size(); ++k) {
      less(t.buckets[k], b.by_command[i].buckets[k]);
    }
  }
  for (auto it = now.by_code.begin(); it != now.by_code.end();) {
    if (const auto old = b.by_code.find(it->first); old != b.by_code.end()) {
      less(it->second, old->second);
    }
    it = it->second == 0 ? now.by_code.erase(it) : std::next(it);
  }
  return now;
}

RateSampler::Sample RateSampler::base(const Sample& now) {
  constexpr uint64_t kWindowUs = 2000000;  // rates over about the last two seconds
  constexpr uint64_t kMinGapUs = 100000;   // one sample per 100 ms at most
  std::lock_guard<std::mutex> lock(mu_);
  // Keep the samples of the window and the latest one before it.
  size_t drop = 0;
  while (drop + 1 < samples_.size() && now.micros >= samples_[drop + 1].micros + kWindowUs) {
    ++drop;
  }
  samples_.erase(samples_.begin(), samples_.begin() + static_cast<long>(drop));
  const Sample base = samples_.empty() ? now : samples_.front();
  if (samples_.empty() || now.micros >= samples_.back().micros + kMinGapUs) {
    samples_.push_back(now);
  }
  return base;
}

}  // namespace sp::net
