// KeyspacePoller: INFO keyspace from every shard on a background thread, with hiredis.
#include "net/keyspace_poller.h"

#include <hiredis/hiredis.h>

#include <charconv>
#include <ctime>
#include <map>

namespace sp::net {
namespace {

constexpr timeval kConnectTimeout{0, 300 * 1000};
constexpr timeval kCommandTimeout{0, 500 * 1000};

bool parseField(std::string_view text, std::string_view key, uint64_t* out) {
  const size_t at = text.find(key);
  if (at == std::string_view::npos) {
    return false;
  }
  const char* begin = text.data() + at + key.size();
  const char* end = text.data() + text.size();
  return std::from_chars(begin, end, *out).ec == std::errc();
}

ShardKeyspace poll(const route::ShardAddress& shard) {
  ShardKeyspace out;
  out.shard = shard.name;
  redisContext* c = redisConnectWithTimeout(shard.host.c_str(), shard.port, kConnectTimeout);
  if (c == nullptr || c->err != 0) {
    if (c != nullptr) {
      redisFree(c);
    }
    return out;
  }
  redisSetTimeout(c, kCommandTimeout);
  if (!shard.password.empty()) {
    auto* auth = static_cast<redisReply*>(
        shard.username.empty()
            ? redisCommand(c, "AUTH %b", shard.password.data(), shard.password.size())
            : redisCommand(c, "AUTH %b %b", shard.username.data(), shard.username.size(),
                           shard.password.data(), shard.password.size()));
    const bool ok = auth != nullptr && auth->type != REDIS_REPLY_ERROR;
    if (auth != nullptr) {
      freeReplyObject(auth);
    }
    if (!ok) {
      redisFree(c);
      return out;
    }
  }
  auto* reply = static_cast<redisReply*>(redisCommand(c, "INFO keyspace"));
  if (reply != nullptr && reply->type == REDIS_REPLY_STRING) {
    out.ok = true;
    out.dbs = parseKeyspace(std::string_view(reply->str, reply->len));
  }
  if (reply != nullptr) {
    freeReplyObject(reply);
  }
  redisFree(c);
  return out;
}

}  // namespace

uint64_t ShardKeyspace::keys() const {
  uint64_t n = 0;
  for (const DbKeys& d : dbs) {
    n += d.keys;
  }
  return n;
}

std::vector<DbKeys> parseKeyspace(std::string_view info) {
  std::vector<DbKeys> out;
  size_t start = 0;
  while (start < info.size()) {
    size_t end = info.find('\n', start);
    if (end == std::string_view::npos) {
      end = info.size();
    }
    std::string_view line = info.substr(start, end - start);
    start = end + 1;
    if (!line.empty() && line.back() == '\r') {
      line.remove_suffix(1);
    }
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

KeyspacePoller::KeyspacePoller(KeyspaceCache& cache, std::function<route::TopologyPtr()> topology,
                               std::chrono::milliseconds interval)
    : cache_(cache), topology_(std::move(topology)), interval_(interval) {}

KeyspacePoller::~KeyspacePoller() { stop(); }

void KeyspacePoller::start() {
  thread_ = std::thread([this] { run(); });
}

void KeyspacePoller::stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) {
    thread_.join();
  }
}

void KeyspacePoller::run() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stopping_) {
    lock.unlock();
    pollOnce();
    lock.lock();
    wake_.wait_for(lock, interval_, [this] { return stopping_; });
  }
}

void KeyspacePoller::pollOnce() {
  const route::TopologyPtr topology = topology_();
  if (topology == nullptr) {
    return;
  }
  std::vector<ShardKeyspace> shards;
  for (const route::ShardAddress& shard : topology->shards()) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (stopping_) {
        return;
      }
    }
    shards.push_back(poll(shard));
  }
  cache_.store(std::move(shards), static_cast<uint64_t>(std::time(nullptr)));
}

}  // namespace sp::net
