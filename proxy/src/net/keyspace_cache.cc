// The shards' INFO as last polled: parsing and the cache (net/keyspace_cache.h).
#include "net/keyspace_cache.h"

#include <charconv>
#include <map>

namespace sp::net {
namespace {

bool parseField(std::string_view text, std::string_view key, uint64_t* out) {
  const size_t at = text.find(key);
  if (at == std::string_view::npos) {
    return false;
  }
  const char* begin = text.data() + at + key.size();
  const char* end = text.data() + text.size();
  return std::from_chars(begin, end, *out).ec == std::errc();
}

}  // namespace

uint64_t ShardKeyspace::keys() const {
  uint64_t n = 0;
  for (const DbKeys& d : dbs) {
    n += d.keys;
  }
  return n;
}

std::string_view ShardKeyspace::field(std::string_view key) const {
  for (const InfoField& f : info) {
    if (f.key == key) {
      return f.value;
    }
  }
  return {};
}

bool ShardKeyspace::number(std::string_view key, uint64_t* out) const {
  const std::string_view v = field(key);
  const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), *out);
  return !v.empty() && ec == std::errc() && end == v.data() + v.size();
}

namespace {

// The next line of an INFO text from *start (without its CR LF); false past the end.
bool nextInfoLine(std::string_view info, size_t* start, std::string_view* line) {
  if (*start >= info.size()) {
    return false;
  }
  size_t end = info.find('\n', *start);
  if (end == std::string_view::npos) {
    end = info.size();
  }
  *line = info.substr(*start, end - *start);
  *start = end + 1;
  if (!line->empty() && line->back() == '\r') {
    line->remove_suffix(1);
  }
  return true;
}

}  // namespace

std::vector<InfoField> parseInfo(std::string_view info) {
  std::vector<InfoField> out;
  std::string section;
  size_t start = 0;
  for (std::string_view line; nextInfoLine(info, &start, &line);) {
    if (line.starts_with("# ")) {
      section.clear();
      for (char c : line.substr(2)) {
        section.push_back(static_cast<char>(c >= 'A' && c <= 'Z' ? c + 32 : c));
      }
      continue;
    }
    const size_t colon = line.find(':');
    if (line.empty() || colon == std::string_view::npos || colon == 0) {
      continue;
    }
    out.push_back(
        {section, std::string(line.substr(0, colon)), std::string(line.substr(colon + 1))});
  }
  return out;
}

std::vector<DbKeys> parseKeyspace(std::string_view info) {
  std::vector<DbKeys> out;
  size_t start = 0;
  for (std::string_view line; nextInfoLine(info, &start, &line);) {
    if (!line.starts_with("db")) {
      continue;
    }
    const size_t colon = line.find(':');
    if (colon == std::string_view::npos) {
      continue;
    }
    DbKeys db;
    if (std::from_chars(line.data() + 2, line.data() + colon, db.db).ec != std::errc()) {
      continue;
    }
    const std::string_view fields = line.substr(colon + 1);
    if (!parseField(fields, "keys=", &db.keys)) {
      continue;
    }
    parseField(fields, "expires=", &db.expires);
    parseField(fields, "avg_ttl=", &db.avg_ttl);
    out.push_back(db);
  }
  return out;
}

void KeyspaceCache::store(std::vector<ShardKeyspace> shards, uint64_t unix_time) {
  std::lock_guard<std::mutex> lock(mu_);
  shards_ = std::move(shards);
  refreshed_unix_ = unix_time;
}

std::vector<ShardKeyspace> KeyspaceCache::snapshot() const {
  std::lock_guard<std::mutex> lock(mu_);
  return shards_;
}

std::string KeyspaceCache::serverVersion() const {
  std::lock_guard<std::mutex> lock(mu_);
  for (const ShardKeyspace& shard : shards_) {
    if (shard.ok) {
      return std::string(shard.field("redis_version"));
    }
  }
  return {};
}

uint64_t KeyspaceCache::refreshedAt() const {
  std::lock_guard<std::mutex> lock(mu_);
  return refreshed_unix_;
}

std::string KeyspaceCache::infoLines() const {
  struct Sum {
    uint64_t keys = 0;
    uint64_t expires = 0;
    double ttl_weighted = 0;
  };
  std::map<uint32_t, Sum> sums;
  for (const ShardKeyspace& shard : snapshot()) {
    for (const DbKeys& d : shard.dbs) {
      Sum& s = sums[d.db];
      s.keys += d.keys;
      s.expires += d.expires;
      s.ttl_weighted += static_cast<double>(d.avg_ttl) * static_cast<double>(d.expires);
    }
  }
  std::string out;
  for (const auto& [db, s] : sums) {
    const uint64_t avg_ttl =
        s.expires == 0 ? 0 : static_cast<uint64_t>(s.ttl_weighted / static_cast<double>(s.expires));
    out += "db" + std::to_string(db) + ":keys=" + std::to_string(s.keys) +
           ",expires=" + std::to_string(s.expires) + ",avg_ttl=" + std::to_string(avg_ttl) + "\r\n";
  }
  return out;
}

}  // namespace sp::net
