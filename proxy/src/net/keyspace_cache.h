// The shards' INFO as last polled (control/keyspace_poller.h polls it in the background): each
// shard's fields and keyspace lines, parsed, and the cache the workers, INFO and the metrics
// scrape read. The figures are as old as the last poll.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace sp::net {

struct DbKeys {
  uint32_t db = 0;
  uint64_t keys = 0;
  uint64_t expires = 0;
  uint64_t avg_ttl = 0;
};

// One "key:value" line of an INFO reply, with the section it came under ("memory", ...).
struct InfoField {
  std::string section;  // lowercase, as "# Memory" names it
  std::string key;
  std::string value;
};

// "# Section" headers and "key:value" lines of an INFO reply, in order; other lines are ignored.
std::vector<InfoField> parseInfo(std::string_view info);

struct ShardKeyspace {
  std::string shard;  // its name
  bool ok = false;    // the last poll got an answer
  std::vector<DbKeys> dbs;
  std::vector<InfoField> info;  // every field of its INFO
  uint64_t keys() const;
  // The value of INFO field `key` ("" when absent); number(): as an unsigned integer.
  std::string_view field(std::string_view key) const;
  bool number(std::string_view key, uint64_t* out) const;
};

// "db0:keys=3,expires=1,avg_ttl=100" lines of an INFO keyspace reply; other lines are ignored.
std::vector<DbKeys> parseKeyspace(std::string_view info);

class KeyspaceCache {
 public:
  void store(std::vector<ShardKeyspace> shards, uint64_t unix_time);
  std::vector<ShardKeyspace> snapshot() const;
  uint64_t refreshedAt() const;  // unix seconds of the last poll, 0 = none yet
  // The first shard's redis_version as last polled ("" before any shard has answered): the
  // version INFO and HELLO report, as the server the clients' commands run on.
  std::string serverVersion() const;
  // "dbN:keys=..,expires=..,avg_ttl=.." summed over the shards (avg_ttl weighted by expires),
  // CRLF-terminated, as INFO keyspace prints them.
  std::string infoLines() const;

 private:
  mutable std::mutex mu_;
  std::vector<ShardKeyspace> shards_;
  uint64_t refreshed_unix_ = 0;
};

}  // namespace sp::net
