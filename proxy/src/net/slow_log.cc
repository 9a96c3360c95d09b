// SlowLog: a fixed ring per worker, merged by id for PROXY SLOWLOG.
#include "net/slow_log.h"

#include <algorithm>
#include <cstring>

namespace sp::net {

void SlowLogEntry::copy(char* dst, size_t size, std::string_view src) {
  const size_t n = std::min(size - 1, src.size());
  if (n > 0) {
    std::memcpy(dst, src.data(), n);
  }
  dst[n] = '\0';
}

void SlowLog::configure(uint32_t max_len) {
  std::lock_guard<std::mutex> lock(mu_);
  if (ring_.size() == max_len) {
    return;
  }
  // Keep the newest entries that still fit.
  std::vector<SlowLogEntry> kept;
  for (size_t i = 0; i < count_ && kept.size() < max_len; ++i) {
    kept.push_back(ring_[(next_ + ring_.size() - 1 - i) % ring_.size()]);
  }
  ring_.assign(max_len, SlowLogEntry{});
  count_ = kept.size();
  for (size_t i = 0; i < kept.size(); ++i) {
    ring_[kept.size() - 1 - i] = kept[i];
  }
  next_ = max_len == 0 ? 0 : count_ % max_len;
}

void SlowLog::record(const SlowLogEntry& entry) {
  std::lock_guard<std::mutex> lock(mu_);
  if (ring_.empty()) {
    return;
  }
  ring_[next_] = entry;
  next_ = (next_ + 1) % ring_.size();
  count_ = std::min(count_ + 1, ring_.size());
}

void SlowLog::newest(size_t limit, std::vector<SlowLogEntry>* out) const {
  std::lock_guard<std::mutex> lock(mu_);
  for (size_t i = 0; i < count_ && i < limit; ++i) {
    out->push_back(ring_[(next_ + ring_.size() - 1 - i) % ring_.size()]);
  }
}

size_t SlowLog::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return count_;
}

void SlowLog::reset() {
  std::lock_guard<std::mutex> lock(mu_);
  count_ = 0;
  next_ = 0;
}

std::vector<SlowLogEntry> mergeNewest(const std::vector<const SlowLog*>& logs, size_t limit) {
  std::vector<SlowLogEntry> all;
  for (const SlowLog* log : logs) {
    log->newest(limit, &all);
  }
  std::sort(all.begin(), all.end(),
            [](const SlowLogEntry& a, const SlowLogEntry& b) { return a.id > b.id; });
  if (all.size() > limit) {
    all.resize(limit);
  }
  return all;
}

}  // namespace sp::net
