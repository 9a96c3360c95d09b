// SlowLog: the proxy-side slow log of one worker. A request whose parse-to-reply time reaches
// slowlog.threshold_us is recorded with its command, shard, duration and client; PROXY SLOWLOG
// GET merges the workers' logs newest first (ids are proxy-wide), so the newest slowlog.max_len
// entries overall are always kept. Entries are fixed-size and the ring is allocated when
// configured, so recording never allocates; the mutex is taken only to record a slow request or
// to read the log, never on the ordinary request path.
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string_view>
#include <vector>

namespace sp::net {

struct SlowLogEntry {
  uint64_t id = 0;            // proxy-wide, increasing
  uint64_t unix_time = 0;     // seconds, when the reply completed
  uint64_t duration_us = 0;   // parse of the request -> its reply
  char command[40] = {};      // "GET", "CLIENT ID" (truncated to fit)
  char shard[48] = {};        // the shard's name, "split:<n>" for a split request, "-" for none
  char client[48] = {};       // "ip:port" of the client ("" when it had gone)
  char client_name[48] = {};  // CLIENT SETNAME

  static void copy(char* dst, size_t size, std::string_view src);  // truncating, NUL-terminated
};

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
  mutable std::mutex mu_;
  std::vector<SlowLogEntry> ring_;
  size_t next_ = 0;   // where the next entry goes
  size_t count_ = 0;  // entries held (<= ring_.size())
};

// PROXY SLOWLOG over every worker's log: the newest `limit` entries, newest first.
std::vector<SlowLogEntry> mergeNewest(const std::vector<const SlowLog*>& logs, size_t limit);

}  // namespace sp::net
