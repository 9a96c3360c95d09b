// KeyspacePoller: INFO from every shard on a background thread, with a BlockingClient; and the
// rules that combine the shards' fields into the proxy's INFO memory, persistence and stats
// figures.
#include "control/keyspace_poller.h"

#include <hiredis/hiredis.h>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <ctime>
#include <iterator>
#include <map>

#include "route/blocking_client.h"

namespace sp::control {

using net::InfoField;
using net::KeyspaceCache;
using net::ShardKeyspace;

namespace {

constexpr std::chrono::milliseconds kConnectTimeout{300};
constexpr std::chrono::milliseconds kCommandTimeout{500};

ShardKeyspace poll(const route::ShardAddress& shard,
                   const std::shared_ptr<const tls::TlsContext>& tls) {
  ShardKeyspace out;
  out.shard = shard.name;
  route::BlockingClient c(route::BlockingClient::Options{kConnectTimeout, kCommandTimeout, tls});
  if (shard.isUnixSocket() ? !c.connectUnix(shard.host) : !c.connect(shard.host, shard.port)) {
    return out;
  }
  if (!shard.password.empty()) {
    const route::Reply auth = shard.username.empty()
                                  ? c.command({"AUTH", shard.password})
                                  : c.command({"AUTH", shard.username, shard.password});
    if (auth == nullptr || auth->type == REDIS_REPLY_ERROR) {
      return out;
    }
  }
  // The default sections (INFO without arguments, as every Redis version takes it): a few KB.
  const route::Reply reply = c.command({"INFO"});
  if (reply != nullptr && reply->type == REDIS_REPLY_STRING) {
    out.ok = true;
    const std::string_view text(reply->str, reply->len);
    out.dbs = net::parseKeyspace(text);
    out.info = net::parseInfo(text);
  }
  return out;
}

std::string fixed(double v, const char* format = "%.2f") {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

bool parseInt(std::string_view v, int64_t* out) {
  const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), *out);
  return !v.empty() && ec == std::errc() && end == v.data() + v.size();
}

bool parseDouble(std::string_view v, double* out) {
  const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), *out);
  return !v.empty() && ec == std::errc() && end == v.data() + v.size();
}

// How a shard field becomes the proxy's. The default is kSum for integers and kFirst for any other
// value; the fields listed in kShardRules below are the exceptions.
enum class Rule : uint8_t {
  kSum,    // counters and memory sizes: the shards' total
  kMax,    // peaks, durations, flags ("in progress", "loading"): the largest (integers or decimals)
  kMin,    // rdb_last_save_time: the oldest, as LASTSAVE answers
  kFirst,  // settings and names (maxmemory_policy, mem_allocator): the first shard's
  kWorst,  // *_status: "ok" only when every shard says ok
  kHuman,  // *_human: recomputed from the aggregated byte count
  kRatio,  // ratios and percentages: recomputed from the aggregated sizes
  kLimit,  // maxmemory: the shards' total, 0 (no limit) when any shard has none
};

struct ShardRule {
  std::string_view key;
  Rule rule;
};

constexpr ShardRule kShardRules[] = {
    // server
    {"hz", Rule::kFirst},
    {"configured_hz", Rule::kFirst},
    // memory
    {"total_system_memory", Rule::kMax},
    {"number_of_cached_scripts", Rule::kMax},  // scripts and functions are loaded on every shard
    {"number_of_functions", Rule::kMax},
    {"number_of_libraries", Rule::kMax},
    {"active_defrag_running", Rule::kMax},
    {"maxmemory", Rule::kLimit},
    {"maxmemory_policy", Rule::kFirst},
    {"mem_allocator", Rule::kFirst},
    {"used_memory_peak_perc", Rule::kRatio},
    {"used_memory_dataset_perc", Rule::kRatio},
    {"allocator_frag_ratio", Rule::kRatio},
    {"allocator_rss_ratio", Rule::kRatio},
    {"rss_overhead_ratio", Rule::kRatio},
    {"mem_fragmentation_ratio", Rule::kRatio},
    // persistence
    {"loading", Rule::kMax},
    {"async_loading", Rule::kMax},
    {"current_cow_peak", Rule::kMax},
    {"current_cow_size", Rule::kMax},
    {"current_cow_size_age", Rule::kMax},
    {"current_fork_perc", Rule::kMax},
    {"rdb_bgsave_in_progress", Rule::kMax},
    {"rdb_last_save_time", Rule::kMin},
    {"rdb_last_bgsave_status", Rule::kWorst},
    {"rdb_last_bgsave_time_sec", Rule::kMax},
    {"rdb_current_bgsave_time_sec", Rule::kMax},
    {"rdb_last_cow_size", Rule::kMax},
    {"aof_enabled", Rule::kMax},
    {"aof_rewrite_in_progress", Rule::kMax},
    {"aof_rewrite_scheduled", Rule::kMax},
    {"aof_last_rewrite_time_sec", Rule::kMax},
    {"aof_current_rewrite_time_sec", Rule::kMax},
    {"aof_last_bgrewrite_status", Rule::kWorst},
    {"aof_last_write_status", Rule::kWorst},
    {"aof_last_cow_size", Rule::kMax},
    {"module_fork_in_progress", Rule::kMax},
    {"module_fork_last_cow_size", Rule::kMax},
    // stats
    {"expired_stale_perc", Rule::kMax},
    {"current_eviction_exceeded_time", Rule::kMax},
    {"pubsub_patterns", Rule::kMax},  // a pattern is subscribed on every shard
    {"latest_fork_usec", Rule::kMax},
    {"current_active_defrag_time", Rule::kMax},
    {"instantaneous_input_repl_kbps", Rule::kSum},
    {"instantaneous_output_repl_kbps", Rule::kSum},
};

Rule ruleFor(std::string_view key, const std::vector<std::string_view>& values) {
  if (key.ends_with("_human")) {
    return Rule::kHuman;
  }
  for (const ShardRule& r : kShardRules) {
    if (r.key == key) {
      return r.rule;
    }
  }
  int64_t v = 0;
  for (std::string_view s : values) {
    if (!parseInt(s, &v)) {
      return Rule::kFirst;
    }
  }
  return Rule::kSum;
}

// One field over the shards that answered the last poll: its value from each, in shard order.
struct ShardColumn {
  std::string key;
  std::vector<std::string_view> values;
};

// The fields of `section` (every shard's, in the order they first appear).
std::vector<ShardColumn> shardColumns(const std::vector<ShardKeyspace>& shards,
                                      std::string_view section) {
  std::vector<ShardColumn> out;
  for (const ShardKeyspace& shard : shards) {
    if (!shard.ok) {
      continue;
    }
    for (const InfoField& f : shard.info) {
      if (f.section != section) {
        continue;
      }
      auto at = std::find_if(out.begin(), out.end(),
                             [&](const ShardColumn& c) { return c.key == f.key; });
      if (at == out.end()) {
        out.push_back({f.key, {}});
        at = out.end() - 1;
      }
      at->values.push_back(f.value);
    }
  }
  return out;
}

std::string combine(Rule rule, const std::vector<std::string_view>& values) {
  switch (rule) {
    case Rule::kSum:
    case Rule::kMax:
    case Rule::kMin: {
      int64_t acc = 0;
      bool ints = true;
      for (size_t i = 0; i < values.size() && ints; ++i) {
        int64_t v = 0;
        ints = parseInt(values[i], &v);
        acc = i == 0               ? v
              : rule == Rule::kSum ? acc + v
              : rule == Rule::kMax ? std::max(acc, v)
                                   : std::min(acc, v);
      }
      if (ints) {
        return std::to_string(acc);
      }
      double d = 0;
      for (size_t i = 0; i < values.size(); ++i) {
        double v = 0;
        if (!parseDouble(values[i], &v)) {
          return std::string(values.front());
        }
        d = i == 0               ? v
            : rule == Rule::kSum ? d + v
            : rule == Rule::kMax ? std::max(d, v)
                                 : std::min(d, v);
      }
      return fixed(d);
    }
    case Rule::kLimit: {
      const bool unlimited = std::find(values.begin(), values.end(), "0") != values.end();
      return unlimited ? std::string("0") : combine(Rule::kSum, values);
    }
    case Rule::kWorst:
      for (std::string_view v : values) {
        if (v != "ok") {
          return std::string(v);
        }
      }
      return "ok";
    case Rule::kFirst:
    case Rule::kHuman:
    case Rule::kRatio:
      break;
  }
  return values.empty() ? std::string() : std::string(values.front());
}

}  // namespace

std::string bytesToHuman(uint64_t n) {
  static constexpr std::pair<double, const char*> kUnits[] = {
      {1024.0, "K"},
      {1024.0 * 1024, "M"},
      {1024.0 * 1024 * 1024, "G"},
      {1024.0 * 1024 * 1024 * 1024, "T"},
      {1024.0 * 1024 * 1024 * 1024 * 1024, "P"},
  };
  if (n < 1024) {
    return std::to_string(n) + "B";
  }
  for (size_t i = 0; i < std::size(kUnits); ++i) {
    if (n < uint64_t{1} << (10 * (i + 2))) {  // below the next unit (none past P: plain bytes)
      char buf[64];
      std::snprintf(buf, sizeof buf, "%.2f%s", static_cast<double>(n) / kUnits[i].first,
                    kUnits[i].second);
      return buf;
    }
  }
  return std::to_string(n) + "B";
}

std::string combinedSection(const std::vector<ShardKeyspace>& shards, std::string_view section) {
  std::string out;
  const std::vector<ShardColumn> columns = shardColumns(shards, section);
  std::vector<std::pair<std::string_view, std::string>> values;
  values.reserve(columns.size());
  for (const ShardColumn& c : columns) {
    values.emplace_back(c.key, combine(ruleFor(c.key, c.values), c.values));
  }
  auto total = [&](std::string_view key) -> double {
    for (const auto& [k, v] : values) {
      int64_t n = 0;
      if (k == key && parseInt(v, &n)) {
        return static_cast<double>(n);
      }
    }
    return 0;
  };
  auto ratio = [](double a, double b) { return b > 0 ? a / b : 0; };
  for (size_t i = 0; i < columns.size(); ++i) {
    const std::string& key = columns[i].key;
    std::string& value = values[i].second;
    const Rule rule = ruleFor(key, columns[i].values);
    if (rule == Rule::kHuman) {
      value = bytesToHuman(static_cast<uint64_t>(total(key.substr(0, key.size() - 6))));
    } else if (key == "used_memory_peak_perc") {
      value = fixed(ratio(total("used_memory") * 100, total("used_memory_peak"))) + "%";
    } else if (key == "used_memory_dataset_perc") {
      const double net = total("used_memory") - total("used_memory_startup");
      value = fixed(ratio(total("used_memory_dataset") * 100, net)) + "%";
    } else if (key == "allocator_frag_ratio") {
      value = fixed(ratio(total("allocator_active"), total("allocator_allocated")));
    } else if (key == "allocator_rss_ratio") {
      value = fixed(ratio(total("allocator_resident"), total("allocator_active")));
    } else if (key == "rss_overhead_ratio") {
      value = fixed(ratio(total("used_memory_rss"), total("allocator_resident")));
    } else if (key == "mem_fragmentation_ratio") {
      value = fixed(ratio(total("used_memory_rss"), total("used_memory")));
    }
    out += key + ":" + value + "\r\n";
  }
  return out;
}

std::string combinedField(const std::vector<ShardKeyspace>& shards, std::string_view key) {
  std::vector<std::string_view> values;
  for (const ShardKeyspace& shard : shards) {
    if (shard.ok) {
      for (const InfoField& f : shard.info) {
        if (f.key == key) {
          values.push_back(f.value);
          break;
        }
      }
    }
  }
  return values.empty() ? "0" : combine(ruleFor(key, values), values);
}

KeyspacePoller::KeyspacePoller(KeyspaceCache& cache, std::function<route::TopologyPtr()> topology,
                               std::chrono::milliseconds interval,
                               std::function<std::shared_ptr<const tls::TlsContext>()> tls)
    : cache_(cache), topology_(std::move(topology)), interval_(interval), tls_(std::move(tls)) {}

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
  const std::shared_ptr<const tls::TlsContext> tls = tls_ ? tls_() : nullptr;
  std::vector<ShardKeyspace> shards;
  for (const route::ShardAddress& shard : topology->shards()) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (stopping_) {
        return;
      }
    }
    shards.push_back(poll(shard, tls));
  }
  cache_.store(std::move(shards), static_cast<uint64_t>(std::time(nullptr)));
}

}  // namespace sp::control
