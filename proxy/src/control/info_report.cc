// INFO's reply text: redis-cli compatible "# Section" blocks of key:value lines, every section
// redis-server 7 has and the proxy's shards section. Which figures are whose:
//   - Server, Clients, Replication, CPU, Modules, Cluster: the proxy's own (a primary without
//     replicas, no modules, not a cluster), summed over its workers; but blocked_clients and
//     clients_in_timeout_table are the shards' sums (a client blocked through the proxy blocks
//     its own connection to one shard), and hz / configured_hz the first shard's.
//   - Stats: the proxy's own for what its clients see (connections, commands, network bytes and
//     their rates, errors), the shards' for their data (expired and evicted keys, keyspace hits
//     and misses, pub/sub, forks, ...).
//   - Memory and Persistence: the shards', field by field (combinedSection, keyspace_poller.h):
//     sums for counters and sizes, the largest for peaks of a moment, durations and "in
//     progress" flags, the oldest rdb_last_save_time, "err" when any shard's *_status is not ok,
//     the first shard's for settings and names; *_human and the ratios recomputed from the
//     totals. A memory *_peak is the sum of the shards' peaks (an upper bound: they need not have
//     peaked together). shardproxy_used_memory_rss is the proxy process's own.
//   - Commandstats, Errorstats, Latencystats: the commands the proxy served, from its per-worker
//     counters (usec: from parsing the request to its complete reply; percentiles: the upper
//     bound of the latency bucket that holds them).
//   - Keyspace: the shards' summed (keyspace_poller.h).
// The shards' figures are those of the last background poll (every 2 s).
#include "control/info_report.h"

#include <sys/resource.h>
#include <sys/time.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <ctime>
#include <map>
#include <random>

#include "config/value_parser.h"
#include "control/keyspace_poller.h"
#include "core/clock.h"
#include "net/proxy_context.h"
#include "net/worker.h"
#include "resp/command_table.h"

namespace sp::control {

using net::CommandStats;
using net::InfoCounters;
using net::ProxyContext;
using net::RateSampler;
using net::ShardKeyspace;
using net::ShardSummary;
using net::ShardTotals;
using net::Worker;
using net::WorkerStats;

namespace {

void line(std::string& out, std::string_view key, const std::string& value) {
  out.append(key);
  out.push_back(':');
  out.append(value);
  out.append("\r\n");
}

void line(std::string& out, std::string_view key, uint64_t value) {
  line(out, key, std::to_string(value));
}

enum Section : uint32_t {
  kServer = 1u << 0,
  kClients = 1u << 1,
  kMemory = 1u << 2,
  kPersistence = 1u << 3,
  kStats = 1u << 4,
  kReplication = 1u << 5,
  kCpu = 1u << 6,
  kModules = 1u << 7,
  kCommandStats = 1u << 8,
  kErrorStats = 1u << 9,
  kLatencyStats = 1u << 10,
  kCluster = 1u << 11,
  kKeyspace = 1u << 12,
  kShards = 1u << 13,
};

// redis-server 7's default sections, and the proxy's shards.
constexpr uint32_t kDefaultSections = kServer | kClients | kMemory | kPersistence | kStats |
                                      kReplication | kCpu | kModules | kErrorStats | kCluster |
                                      kKeyspace | kShards;
constexpr uint32_t kAllSections = kDefaultSections | kCommandStats | kLatencyStats;

uint32_t parseSections(std::string_view text) {
  static constexpr std::pair<std::string_view, uint32_t> kNames[] = {
      {"server", kServer},
      {"clients", kClients},
      {"memory", kMemory},
      {"persistence", kPersistence},
      {"stats", kStats},
      {"replication", kReplication},
      {"cpu", kCpu},
      {"modules", kModules},
      {"commandstats", kCommandStats},
      {"errorstats", kErrorStats},
      {"latencystats", kLatencyStats},
      {"cluster", kCluster},
      {"keyspace", kKeyspace},
      {"shards", kShards},
      {"default", kDefaultSections},
      {"all", kAllSections},
      {"everything", kAllSections},
  };
  uint32_t out = 0;
  bool any = false;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find(' ', start);
    end = end == std::string_view::npos ? text.size() : end;
    const std::string_view word = text.substr(start, end - start);
    start = end + 1;
    if (word.empty()) {
      continue;
    }
    any = true;
    for (const auto& [name, bits] : kNames) {
      if (word.size() == name.size() &&
          std::equal(word.begin(), word.end(), name.begin(),
                     [](char a, char b) { return (a >= 'A' && a <= 'Z' ? a + 32 : a) == b; })) {
        out |= bits;
      }
    }
  }
  return any ? out : kDefaultSections;
}

std::string fixed(double v, const char* format = "%.2f") {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

// run_id: 40 random hex digits, fixed for the life of the process.
const std::string& runId() {
  static const std::string id = [] {
    std::random_device rd;
    std::string out;
    for (int i = 0; i < 40; ++i) {
      out.push_back("0123456789abcdef"[rd() % 16]);
    }
    return out;
  }();
  return id;
}

// redis_build_id: a hash of the proxy's version and compiler, as redis-server hashes its build.
std::string buildId() {
  uint64_t h = 1469598103934665603ull;  // FNV-1a
  for (const char c : std::string_view(SHARDPROXY_VERSION " " __VERSION__)) {
    h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  }
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
  return hex;
}

std::string executable() {
  char path[4096];
  const ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
  return n > 0 ? std::string(path, static_cast<size_t>(n)) : std::string();
}

uint64_t residentBytes() {
  long pages = 0;
  if (FILE* f = std::fopen("/proc/self/statm", "r")) {
    long size = 0;
    if (std::fscanf(f, "%ld %ld", &size, &pages) != 2) {
      pages = 0;
    }
    std::fclose(f);
  }
  return static_cast<uint64_t>(pages) * static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
}

std::string seconds(const timeval& tv) {
  return fixed(static_cast<double>(tv.tv_sec) + static_cast<double>(tv.tv_usec) / 1e6, "%.6f");
}

// The percentile's bucket bound in microseconds (the last bound for the +Inf bucket).
double percentile(const std::array<uint64_t, metrics::kLatencyBuckets>& buckets, uint64_t count,
                  double p) {
  const double rank = p / 100.0 * static_cast<double>(count);
  uint64_t seen = 0;
  for (size_t b = 0; b < buckets.size(); ++b) {
    seen += buckets[b];
    if (static_cast<double>(seen) >= rank && seen > 0) {
      return static_cast<double>(
          metrics::kLatencyBoundsUs[std::min(b, metrics::kLatencyBoundsUs.size() - 1)]);
    }
  }
  return static_cast<double>(metrics::kLatencyBoundsUs.back());
}

// How the workers use io_uring for `gauge`: `on` when every worker does, `off` when none
// does (io_uring: false, or a kernel that refuses it), else "mixed".
std::string ringUse(const ProxyContext& context, Counter WorkerStats::*gauge, const char* on,
                    const char* off) {
  size_t ring = 0;
  for (const Worker* w : context.workers) {
    ring += (w->stats().*gauge).get() != 0 ? 1 : 0;
  }
  return ring == 0 ? off : (ring == context.workers.size() ? on : "mixed");
}

InfoCounters collectCounters(const ProxyContext& context) {
  InfoCounters c;
  for (const Worker* w : context.workers) {
    const WorkerStats& s = w->stats();
    c.accepted += s.connections_accepted.get();
    c.rejected += s.connections_rejected.get();
    c.commands += s.commands.get();
    c.local += s.commands_local.get();
    c.split += s.commands_split.get();
    c.refused += s.commands_refused.get();
    c.perr_client += s.protocol_errors_client.get();
    c.perr_backend += s.protocol_errors_backend.get();
    c.out_limit += s.closed_output_limit.get();
    c.paused += s.reads_paused.get();
    c.in += s.bytes_in.get();
    c.sent += s.bytes_out.get();
    c.slow += s.slow_requests.get();
    c.auth_failures += s.auth_failures.get();
    c.errors += s.error_codes.total();
    c.reads += s.client_reads.get();
    c.writes += s.client_writes.get();
    c.ring_writes += s.ring_writes.get();
    c.ring_submits += s.ring_submits.get();
    c.ring_reads += s.ring_reads.get();
    size_t i = 0;
    s.commands_by_name.forEach([&](const resp::CommandInfo& cmd, const CommandStats& cs) {
      if (c.by_command.size() <= i) {
        c.by_command.resize(i + 1);
      }
      InfoCounters::Command& t = c.by_command[i++];
      t.cmd = &cmd;
      t.calls += cs.calls.get();
      t.usec += cs.usec.get();
      t.failed += cs.failed.get();
      for (size_t b = 0; b < t.buckets.size(); ++b) {
        t.buckets[b] += cs.buckets[b].get();
      }
    });
    s.error_codes.forEach(
        [&](std::string_view code, uint64_t n) { c.by_code[std::string(code)] += n; });
  }
  return c;
}

}  // namespace

void resetInfoCounters(ProxyContext& context) {
  context.info_baseline.reset(collectCounters(context));
}

std::string infoReport(const ProxyContext& context, std::string_view sections, bool admin) {
  const uint32_t want = parseSections(sections) & (admin ? ~0u : ~static_cast<uint32_t>(kShards));
  std::string out;
  const uint64_t now = static_cast<uint64_t>(std::time(nullptr));
  const auto cfg = context.config();
  // The shards' own INFO, as last polled (keyspace_poller.h).
  const std::vector<ShardKeyspace> shards =
      (want & (kServer | kClients | kMemory | kPersistence | kStats)) != 0
          ? context.keyspace.snapshot()
          : std::vector<ShardKeyspace>();
  const bool counters = (want & (kStats | kCommandStats | kErrorStats | kLatencyStats)) != 0;
  const InfoCounters raw = counters ? collectCounters(context) : InfoCounters();
  const InfoCounters c = counters ? context.info_baseline.since(raw) : InfoCounters();
  auto section = [&](uint32_t bit, const char* title) {
    if ((want & bit) == 0) {
      return false;
    }
    if (!out.empty()) {
      out += "\r\n";
    }
    out += "# ";
    out += title;
    out += "\r\n";
    return true;
  };
  // Server, Clients, Replication, CPU, Modules, Cluster: the proxy's own.
  if (section(kServer, "Server")) {
    utsname uts{};
    uname(&uts);
    timeval tv{};
    gettimeofday(&tv, nullptr);
    // The shards' version (the first shard's); the command table's until a shard has answered.
    const std::string version = context.keyspace.serverVersion();
    line(out, "redis_version",
         version.empty() ? std::string(resp::CommandTable::redisVersion()) : version);
    line(out, "redis_git_sha1", std::string("00000000"));
    line(out, "redis_git_dirty", std::string("0"));
    line(out, "redis_build_id", buildId());
    line(out, "shardproxy_version", std::string(SHARDPROXY_VERSION));
    line(out, "redis_mode", std::string("standalone"));
    line(out, "os", std::string(uts.sysname) + " " + uts.release + " " + uts.machine);
    line(out, "arch_bits", static_cast<uint64_t>(sizeof(void*) * 8));
    line(out, "monotonic_clock", std::string("POSIX clock_gettime"));
    line(out, "multiplexing_api", std::string("libuv"));
    line(out, "client_write_api",
         ringUse(context, &WorkerStats::io_uring_workers, "io_uring", "send"));
    line(out, "socket_read_api",
         ringUse(context, &WorkerStats::io_uring_read_workers, "io_uring", "libuv"));
    line(out, "atomicvar_api", std::string("c11-builtin"));
    line(out, "gcc_version",
         std::to_string(__GNUC__) + "." + std::to_string(__GNUC_MINOR__) + "." +
             std::to_string(__GNUC_PATCHLEVEL__));
    line(out, "process_id", static_cast<uint64_t>(getpid()));
    line(out, "process_supervised", std::string("no"));
    line(out, "run_id", runId());
    line(out, "tcp_port", static_cast<uint64_t>(context.bound_port));
    line(out, "server_time_usec",
         static_cast<uint64_t>(tv.tv_sec) * 1000000 + static_cast<uint64_t>(tv.tv_usec));
    line(out, "uptime_in_seconds", now - context.start_time_unix);
    line(out, "uptime_in_days", (now - context.start_time_unix) / 86400);
    // The shards' timer frequency (their CONFIG GET hz), and the LRU clock as redis-server
    // computes it (seconds, 24 bits), which OBJECT IDLETIME on the shards counts against.
    line(out, "hz", combinedField(shards, "hz"));
    line(out, "configured_hz", combinedField(shards, "configured_hz"));
    line(out, "lru_clock",
         (static_cast<uint64_t>(tv.tv_sec) * 1000 + static_cast<uint64_t>(tv.tv_usec) / 1000) /
                 1000 &
             ((uint64_t{1} << 24) - 1));
    line(out, "executable", executable());
    line(out, "config_file", context.config_file);
    line(out, "io_threads_active", std::string("0"));
    line(out, "workers", static_cast<uint64_t>(context.workers.size()));
    line(out, "cluster_enabled", std::string("0"));
    line(out, "metrics_port", static_cast<uint64_t>(context.metrics_port.load()));
    line(out, "metrics_compiled", static_cast<uint64_t>(metrics::kMetricsEnabled ? 1 : 0));
  }
  if (section(kClients, "Clients")) {
    uint64_t open = 0;
    for (const Worker* w : context.workers) {
      open += w->stats().connections_open.get();
    }
    line(out, "connected_clients", open);
    line(out, "cluster_connections", std::string("0"));
    line(out, "maxclients",
         std::min<uint64_t>(cfg->limits.max_clients,
                            context.max_clients.load(std::memory_order_relaxed)));
    line(out, "client_recent_max_input_buffer", std::string("0"));
    line(out, "client_recent_max_output_buffer", std::string("0"));
    // A client blocked through the proxy blocks its own connection to one shard.
    line(out, "blocked_clients", combinedField(shards, "blocked_clients"));
    line(out, "tracking_clients", std::string("0"));
    line(out, "clients_in_timeout_table", combinedField(shards, "clients_in_timeout_table"));
    for (const Worker* w : context.workers) {
      line(out, "worker" + std::to_string(w->index()) + "_clients",
           w->stats().connections_open.get());
    }
  }
  if (section(kMemory, "Memory")) {
    const size_t before = out.size();
    out += combinedSection(shards, "memory");
    if (out.size() == before) {  // no shard has answered yet
      for (const char* key : {"used_memory", "used_memory_rss", "used_memory_peak", "maxmemory"}) {
        line(out, key, std::string("0"));
        line(out, std::string(key) + "_human", std::string("0B"));
      }
    }
    const uint64_t rss = residentBytes();
    line(out, "shardproxy_used_memory_rss", rss);
    line(out, "shardproxy_used_memory_rss_human", bytesToHuman(rss));
  }
  if (section(kPersistence, "Persistence")) {
    const size_t before = out.size();
    out += combinedSection(shards, "persistence");
    if (out.size() == before) {
      line(out, "loading", std::string("0"));
    }
  }
  if (section(kStats, "Stats")) {
    // The rates run on the raw counters, which a reset does not move.
    const RateSampler::Sample sample{monoMicros(), raw.commands, raw.in, raw.sent};
    const RateSampler::Sample base = context.info_rates.base(sample);
    // (Another INFO may have taken a sample a moment later than this one: no rate then.)
    const double elapsed =
        sample.micros > base.micros ? static_cast<double>(sample.micros - base.micros) / 1e6 : 0;
    auto rate = [&](uint64_t now_value, uint64_t base_value) {
      return elapsed > 0 && now_value >= base_value
                 ? static_cast<double>(now_value - base_value) / elapsed
                 : 0.0;
    };
    // In redis-server's order: the proxy's own client-side figures, and (S) the shards' figures
    // about their data, combined by the rules above.
    auto shard = [&](std::string_view key) { line(out, key, combinedField(shards, key)); };
    line(out, "total_connections_received", c.accepted);
    line(out, "total_commands_processed", c.commands);
    line(out, "instantaneous_ops_per_sec",
         static_cast<uint64_t>(rate(raw.commands, base.commands) + 0.5));
    line(out, "total_net_input_bytes", c.in);
    line(out, "total_net_output_bytes", c.sent);
    shard("total_net_repl_input_bytes");
    shard("total_net_repl_output_bytes");
    line(out, "instantaneous_input_kbps", fixed(rate(raw.in, base.bytes_in) / 1024));
    line(out, "instantaneous_output_kbps", fixed(rate(raw.sent, base.bytes_out) / 1024));
    for (std::string_view key :
         {"instantaneous_input_repl_kbps", "instantaneous_output_repl_kbps"}) {
      shard(key);
    }
    line(out, "rejected_connections", c.rejected);
    for (std::string_view key : {"sync_full",
                                 "sync_partial_ok",
                                 "sync_partial_err",
                                 "expired_keys",
                                 "expired_stale_perc",
                                 "expired_time_cap_reached_count",
                                 "expire_cycle_cpu_milliseconds",
                                 "evicted_keys",
                                 "evicted_clients",
                                 "total_eviction_exceeded_time",
                                 "current_eviction_exceeded_time",
                                 "keyspace_hits",
                                 "keyspace_misses",
                                 "pubsub_channels",
                                 "pubsub_patterns",
                                 "pubsubshard_channels",
                                 "latest_fork_usec",
                                 "total_forks",
                                 "migrate_cached_sockets",
                                 "slave_expires_tracked_keys",
                                 "active_defrag_hits",
                                 "active_defrag_misses",
                                 "active_defrag_key_hits",
                                 "active_defrag_key_misses",
                                 "total_active_defrag_time",
                                 "current_active_defrag_time",
                                 "tracking_total_keys",
                                 "tracking_total_items",
                                 "tracking_total_prefixes"}) {
      shard(key);
    }
    line(out, "unexpected_error_replies", std::string("0"));
    line(out, "total_error_replies", c.errors);
    shard("dump_payload_sanitizations");
    line(out, "total_reads_processed", c.reads);    // reads from client connections
    line(out, "total_writes_processed", c.writes);  // writes to client connections
    line(out, "io_threaded_reads_processed", std::string("0"));
    line(out, "io_threaded_writes_processed", std::string("0"));
    // Client output buffers come from the worker's pool and are never resized in place.
    line(out, "reply_buffer_shrinks", std::string("0"));
    line(out, "reply_buffer_expands", std::string("0"));
    // The proxy's own.
    line(out, "local_commands", c.local);
    line(out, "split_commands", c.split);
    line(out, "refused_commands", c.refused);
    line(out, "client_protocol_errors", c.perr_client);
    line(out, "backend_protocol_errors", c.perr_backend);
    line(out, "client_output_limit_disconnections", c.out_limit);
    line(out, "client_reads_paused", c.paused);
    line(out, "io_uring_batched_writes", c.ring_writes);
    line(out, "io_uring_submits", c.ring_submits);
    line(out, "io_uring_reads", c.ring_reads);
    line(out, "slow_requests", c.slow);
    line(out, "acl_access_denied_auth", c.auth_failures);  // Redis 7.2's name for failed AUTHs
    line(out, "config_reloads_ok", context.reloads.succeeded.load());
    line(out, "config_reloads_failed", context.reloads.failed.load());
    uint64_t moved = 0, ask = 0, tryagain = 0;
    for (const ShardSummary& s : context.shardSummaries()) {
      moved += s.primary.moved + s.replica.moved;
      ask += s.primary.ask + s.replica.ask;
      tryagain += s.primary.tryagain + s.replica.tryagain;
    }
    line(out, "cluster_moved_redirects", moved);
    line(out, "cluster_ask_redirects", ask);
    line(out, "cluster_tryagain_replies", tryagain);
  }
  if (section(kReplication, "Replication")) {
    // The proxy is a primary without replicas; its shards' replication is theirs.
    line(out, "role", std::string("master"));
    line(out, "connected_slaves", std::string("0"));
    line(out, "master_failover_state", std::string("no-failover"));
    line(out, "master_replid", runId());
    line(out, "master_replid2", std::string(40, '0'));
    line(out, "master_repl_offset", std::string("0"));
    line(out, "second_repl_offset", std::string("-1"));
    line(out, "repl_backlog_active", std::string("0"));
    line(out, "repl_backlog_size", std::string("0"));
    line(out, "repl_backlog_first_byte_offset", std::string("0"));
    line(out, "repl_backlog_histlen", std::string("0"));
  }
  if (section(kCpu, "CPU")) {
    rusage self{}, children{}, thread{};
    getrusage(RUSAGE_SELF, &self);
    getrusage(RUSAGE_CHILDREN, &children);
    getrusage(RUSAGE_THREAD, &thread);  // the worker answering
    line(out, "used_cpu_sys", seconds(self.ru_stime));
    line(out, "used_cpu_user", seconds(self.ru_utime));
    line(out, "used_cpu_sys_children", seconds(children.ru_stime));
    line(out, "used_cpu_user_children", seconds(children.ru_utime));
    line(out, "used_cpu_sys_main_thread", seconds(thread.ru_stime));
    line(out, "used_cpu_user_main_thread", seconds(thread.ru_utime));
  }
  section(kModules, "Modules");
  if (section(kCommandStats, "Commandstats")) {
    for (const InfoCounters::Command& t : c.by_command) {
      if (t.calls == 0 && t.failed == 0) {
        continue;
      }
      const double per_call =
          t.calls > 0 ? static_cast<double>(t.usec) / static_cast<double>(t.calls) : 0;
      line(out, "cmdstat_" + std::string(t.cmd->name),
           "calls=" + std::to_string(t.calls) + ",usec=" + std::to_string(t.usec) +
               ",usec_per_call=" + fixed(per_call) +
               ",rejected_calls=0,failed_calls=" + std::to_string(t.failed));
    }
  }
  if (section(kErrorStats, "Errorstats")) {
    for (const auto& [code, n] : c.by_code) {
      line(out, "errorstat_" + code, "count=" + std::to_string(n));
    }
  }
  if (section(kLatencyStats, "Latencystats")) {
    for (const InfoCounters::Command& t : c.by_command) {
      if (t.calls == 0) {
        continue;
      }
      line(out, "latency_percentiles_usec_" + std::string(t.cmd->name),
           "p50=" + fixed(percentile(t.buckets, t.calls, 50), "%.3f") +
               ",p99=" + fixed(percentile(t.buckets, t.calls, 99), "%.3f") +
               ",p99.9=" + fixed(percentile(t.buckets, t.calls, 99.9), "%.3f"));
    }
  }
  if (section(kCluster, "Cluster")) {
    line(out, "cluster_enabled", std::string("0"));
  }
  if (section(kKeyspace, "Keyspace")) {
    out += context.keyspace.infoLines();
  }
  if (section(kShards, "Shards")) {
    for (const ShardSummary& s : context.shardSummaries()) {
      const ShardTotals& t = s.primary;
      std::string per_worker;
      for (size_t w = 0; w < s.worker_states.size(); ++w) {
        per_worker +=
            ",worker" + std::to_string(context.workers[w]->index()) + "=" + s.worker_states[w];
      }
      line(out, s.address.name,
           "addr=" + config::formatHostPort(s.address.host, s.address.port) +
               ",state=" + s.state() + ",connections_up=" + std::to_string(t.connections_up) + "/" +
               std::to_string(s.connections_configured) + ",slots=" + s.slots +
               ",requests=" + std::to_string(t.requests) + ",errors=" + std::to_string(t.errors) +
               ",inflight=" + std::to_string(t.inflight) +
               ",connects=" + std::to_string(t.connects) + ",connect_failures=" +
               std::to_string(t.connect_failures) + ",timeouts=" + std::to_string(t.timeouts) +
               ",ejections=" + std::to_string(t.ejections) +
               ",ping_failures=" + std::to_string(t.ping_failures) +
               ",ping_busy=" + std::to_string(t.ping_busy) + per_worker);
      if (!s.address.replicas.empty()) {
        std::string addrs;
        for (const auto& rep : s.address.replicas) {
          addrs += (addrs.empty() ? "" : " ") + config::formatHostPort(rep.host, rep.port);
        }
        line(out, s.address.name + "_replicas",
             "addrs=" + addrs + ",connections_up=" + std::to_string(s.replica.connections_up) +
                 "/" + std::to_string(s.replica_connections_configured) +
                 ",reads=" + std::to_string(s.replica.replica_reads));
      }
    }
  }
  return out;  // as redis-server's: no blank line after the last section
}

}  // namespace sp::control
