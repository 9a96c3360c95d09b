// SlowLog: the proxy-side slow log of one worker. A request whose parse-to-reply time reaches
// slowlog.threshold_us is recorded with its command, shard, duration and client; PROXY SLOWLOG
// GET merges the workers' logs newest first (ids are proxy-wide), so the newest slowlog.max_len
// entries overall are always kept. Entries are fixed-size and the ring is allocated when
// configured, so recording never allocates; the mutex is taken only to record a slow request or
// to read the log, never on the ordinary request path. An entry is numbered when it is first
// read, not when it is recorded: under overload every request is slow, and a proxy-wide counter
// bumped per slow request would be a cache line every worker writes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string_view>
#include <vector>

namespace sp::net {

struct SlowLogEntry {
  uint64_t id = 0;            // proxy-wide, increasing; 0 until a reader first sees the entry
  uint64_t recorded_ns = 0;   // steady clock when recorded: orders the workers' new entries
  uint64_t unix_time = 0;     // seconds, when the reply completed
  uint64_t duration_us = 0;   // parse of the request -> its reply
  char command[40] = {};      // "GET", "CLIENT ID" (truncated to fit)
  char shard[48] = {};        // the shard's name, "split:<n>" for a split request, "-" for none
  char client[48] = {};       // "ip:port" of the client ("" when it had gone)
  char client_name[48] = {};  // CLIENT SETNAME

  static void copy(char* dst, size_t size, std::string_view src);  // truncating, NUL-terminated
};

class SlowLogIds;

class SlowLog {
 public:
  // Keeps the newest max_len entries from now on (0: records nothing); of those already recorded,
  // the newest that still fit stay, as redis-server trims its slow log to a new slowlog-max-len.
  void configure(uint32_t max_len);
  void record(const SlowLogEntry& entry);
  // Appends up to `limit` of the newest entries, newest first.
  void newest(size_t limit, std::vector<SlowLogEntry>* out) const;
  size_t size() const;
  void reset();

 private:
  friend std::vector<SlowLogEntry> mergeNewest(const std::vector<SlowLog*>& logs, size_t limit,
                                               SlowLogIds* ids);
  SlowLogEntry& nthNewest(size_t i) { return ring_[(next_ + ring_.size() - 1 - i) % ring_.size()]; }

  mutable std::mutex mu_;
  std::vector<SlowLogEntry> ring_;
  size_t next_ = 0;   // where the next entry goes
  size_t count_ = 0;  // entries held (<= ring_.size())
};

// The numbering of every worker's slow log entries (one per proxy).
class SlowLogIds {
 private:
  friend std::vector<SlowLogEntry> mergeNewest(const std::vector<SlowLog*>& logs, size_t limit,
                                               SlowLogIds* ids);
  std::mutex mu_;
  uint64_t last_ = 0;
};

// PROXY SLOWLOG over every worker's log: the newest `limit` entries, newest first. Entries not
// read before are numbered first, in the order they were recorded and after every id given
// before, so a poller that asks for entries newer than the last id it saw misses none.
std::vector<SlowLogEntry> mergeNewest(const std::vector<SlowLog*>& logs, size_t limit,
                                      SlowLogIds* ids);

}  // namespace sp::net
