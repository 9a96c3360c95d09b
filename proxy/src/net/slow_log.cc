// SlowLog: a fixed ring per worker, numbered and merged by id for PROXY SLOWLOG.
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

std::vector<SlowLogEntry> mergeNewest(const std::vector<SlowLog*>& logs, size_t limit,
                                      SlowLogIds* ids) {
  // Readers are rare and brief: every log is held while its new entries are numbered (a
  // recording worker takes only its own log's mutex, so the fixed order cannot deadlock).
  std::lock_guard<std::mutex> numbering(ids->mu_);
  std::vector<std::unique_lock<std::mutex>> held;
  held.reserve(logs.size());
  std::vector<SlowLogEntry*> fresh;
  for (SlowLog* log : logs) {
    held.emplace_back(log->mu_);
    for (size_t i = 0; i < log->count_; ++i) {
      SlowLogEntry& e = log->nthNewest(i);
      if (e.id == 0) {
        fresh.push_back(&e);
      }
    }
  }
  std::sort(fresh.begin(), fresh.end(), [](const SlowLogEntry* a, const SlowLogEntry* b) {
    return a->recorded_ns < b->recorded_ns;
  });
  for (SlowLogEntry* e : fresh) {
    e->id = ++ids->last_;
  }
  // Within a log, a newer entry was numbered in the same read as an older one or a later read.
  std::vector<SlowLogEntry> all;
  for (SlowLog* log : logs) {
    for (size_t i = 0; i < log->count_ && i < limit; ++i) {
      all.push_back(log->nthNewest(i));
    }
  }
  std::sort(all.begin(), all.end(),
            [](const SlowLogEntry& a, const SlowLogEntry& b) { return a.id > b.id; });
  if (all.size() > limit) {
    all.resize(limit);
  }
  return all;
}

}  // namespace sp::net
