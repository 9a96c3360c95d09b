// validate: whole-config rules that no single value can check on its own — shard names and
// addresses unique, slot ranges covering 0..16383 exactly once, cross-field bounds. Paths are the
// YAML paths even when the value came from a flag, so one message format serves both.
#include <algorithm>
#include <cctype>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "config/loader.h"
#include "config/schema_limits.h"
#include "config/topology_builder.h"
#include "config/value_parser.h"
#include "resp/command_table.h"
#include "route/key_slot.h"

namespace sp::config {
namespace {

constexpr int kNoOwner = -1;
constexpr size_t kMaxListedRanges = 8;  // uncovered ranges named before "and N more"

std::string shardPath(size_t i) { return "shards[" + std::to_string(i) + "]"; }

std::string rangeText(uint32_t first, uint32_t last) {
  return first == last ? std::to_string(first) : std::to_string(first) + "-" + std::to_string(last);
}

std::string slotsText(uint32_t first, uint32_t last) {
  return (first == last ? "slot " : "slots ") + rangeText(first, last);
}

class Validator {
 public:
  std::vector<ConfigError> run(const Config& c) {
    sentinel_ = !c.sentinel.addresses.empty();
    checkScalars(c);
    checkHealth(c);
    checkAuth(c);
    checkKeylessScripts(c);
    checkCluster(c);
    if (c.cluster_mode) {
      if (c.placement.kind != route::PlacementKind::kClusterSlots) {
        error("placement.kind", "must be cluster_slots with backend.mode cluster");
      }
      return std::move(errors_);
    }
    slot_count_ = c.placement.kind == route::PlacementKind::kCodis ? route::kCodisSlotCount
                                                                   : route::kSlotCount;
    checkShards(c.shards);
    checkPlacement(c);
    return std::move(errors_);
  }

 private:
  void error(std::string path, std::string message) {
    errors_.push_back({std::move(path), std::move(message)});
  }

  void positive(const char* path, uint64_t value) {
    if (value == 0) {
      error(path, "must be greater than 0");
    }
  }

  void checkScalars(const Config& c) {
    if (c.listen_host.empty()) {
      error("listen.host", "must not be empty");
    } else if (!isValidHost(c.listen_host)) {
      error("listen.host", "invalid host '" + c.listen_host + "'");
    }
    if (c.listen_port == 0 && c.listen_unix.empty() && c.tls_port == 0) {
      error("listen.port",
            "0 turns the TCP listener off, so listen.unix or tls.listen must name another");
    }
    checkTls(c);
    if (!c.listen_unix.empty() && !isUnixPath(c.listen_unix)) {
      error("listen.unix", "expected an absolute path, got '" + c.listen_unix + "'");
    } else if (c.listen_unix.size() > kMaxUnixPathBytes) {
      error("listen.unix", "the path is longer than " + std::to_string(kMaxUnixPathBytes) +
                               " bytes, the most a Unix socket address holds");
    }
    if (c.workers < 0 || c.workers > kMaxWorkers) {
      error("workers", "must be 0 (one per core) to " + std::to_string(kMaxWorkers) + ", got " +
                           std::to_string(c.workers));
    }
    if (c.backend_connections < 1 || c.backend_connections > kMaxBackendConnections) {
      error("backend.connections", "must be 1 to " + std::to_string(kMaxBackendConnections) +
                                       ", got " + std::to_string(c.backend_connections));
    }
    positive("backend.connect_timeout_ms", c.backend_connect_timeout_ms);
    positive("backend.reconnect_min_ms", c.backend_reconnect_min_ms);
    if (c.backend_reconnect_max_ms < c.backend_reconnect_min_ms) {
      error("backend.reconnect_max_ms", "must be at least backend.reconnect_min_ms (" +
                                            std::to_string(c.backend_reconnect_min_ms) + "), got " +
                                            std::to_string(c.backend_reconnect_max_ms));
    }
    positive("limits.max_bulk_len", c.limits.max_bulk_len);
    positive("limits.max_array_len", c.limits.max_array_len);
    positive("limits.max_inline_len", c.limits.max_inline_len);
    positive("limits.max_inflight_per_client", c.limits.max_inflight_per_client);
    positive("limits.client_output_buffer", c.limits.client_output_buffer);
    positive("limits.max_clients", c.limits.max_clients);
    if (c.limits.tcp_keepalive > kMaxTcpKeepalive) {
      error("limits.tcp_keepalive", "must be 0 (off) to " + std::to_string(kMaxTcpKeepalive) +
                                        " seconds, got " + std::to_string(c.limits.tcp_keepalive));
    }
    if (c.limits.buffer_pool_bytes > kMaxBufferPoolBytes) {
      error("limits.buffer_pool_bytes",
            "must be 0 (keep no free buffer) to " + std::to_string(kMaxBufferPoolBytes) +
                " bytes (1gb), got " + std::to_string(c.limits.buffer_pool_bytes));
    }
    if (!isLogLevel(c.log_level)) {
      error("log_level", "unknown level '" + c.log_level +
                             "' (expected trace, debug, info, warn, error, critical or off)");
    }
    if (!c.metrics_listen.empty()) {
      std::string host;
      uint16_t port = 0;
      if (Status parsed = parseHostPort(c.metrics_listen, &host, &port); !parsed.ok()) {
        error("metrics.listen", parsed.message() + " (or \"\" for no metrics endpoint)");
      }
    }
  }

  // tls and backend.tls: what can be checked without reading the files (the contexts built at
  // start-up read them and name the file at fault).
  void checkTls(const Config& c) {
    const tls::ServerSettings& t = c.tls_server;
    int lo = 0;
    int hi = 0;
    if (c.tls_port != 0) {
      if (t.cert_file.empty() || t.key_file.empty()) {
        error("tls.listen", "a TLS listener needs tls.cert_file and tls.key_file");
      }
      if (!c.tls_host.empty() && !isValidHost(c.tls_host)) {
        error("tls.listen", "invalid host '" + c.tls_host + "'");
      }
      const std::string& host = c.tls_host.empty() ? c.listen_host : c.tls_host;
      if (c.tls_port == c.listen_port && host == c.listen_host) {
        error("tls.listen", "port " + std::to_string(c.tls_port) +
                                " is listen.port's too; plain and TLS listeners need two ports");
      }
    }
    if (t.auth_clients != tls::AuthClients::kNo && t.ca_cert_file.empty()) {
      error("tls.auth_clients", "verifying client certificates needs tls.ca_cert_file");
    }
    if (!t.protocols.empty() && !tls::parseProtocols(t.protocols, &lo, &hi)) {
      error("tls.protocols", "expected TLSv1.2 and/or TLSv1.3, got '" + t.protocols + "'");
    }
    const tls::ClientSettings& b = c.backend_tls_client;
    if (b.cert_file.empty() != b.key_file.empty()) {
      error("backend.tls", "a client certificate needs both cert_file and key_file");
    }
    if (!b.protocols.empty() && !tls::parseProtocols(b.protocols, &lo, &hi)) {
      error("backend.tls.protocols", "expected TLSv1.2 and/or TLSv1.3, got '" + b.protocols + "'");
    }
  }

  // auth.users: names unique, not "default", passwords set; deny_commands: known commands.
  void checkAuth(const Config& c) {
    std::map<std::string, size_t> names;
    for (size_t i = 0; i < c.auth.users.size(); ++i) {
      const AuthUser& u = c.auth.users[i];
      const std::string path = "auth.users[" + std::to_string(i) + "]";
      if (u.name.empty()) {
        error(path + ".name", "missing (every user needs a name)");
      } else if (u.name == "default") {
        error(path + ".name", "'default' is the user of auth.password; pick another name");
      } else if (!names.emplace(u.name, i).second) {
        error(path + ".name", "duplicate user '" + u.name + "' (also auth.users[" +
                                  std::to_string(names[u.name]) + "])");
      }
      if (u.password.empty()) {
        error(path + ".password", "missing (every user needs a password)");
      }
    }
    for (size_t i = 0; i < c.deny_commands.size(); ++i) {
      if (!knownCommand(c.deny_commands[i])) {
        error("deny_commands[" + std::to_string(i) + "]",
              "unknown command '" + c.deny_commands[i] +
                  "' (a command name, or \"container subcommand\" such as \"config set\")");
      }
    }
  }

  // keyless_scripts: "refuse" or a shard of the shards list (a cluster's nodes have no names).
  void checkKeylessScripts(const Config& c) {
    if (c.keyless_scripts == "refuse") {
      return;
    }
    if (c.cluster_mode) {
      error("keyless_scripts", "must be \"refuse\" in cluster mode (cluster nodes have no names)");
      return;
    }
    for (const ShardConfig& shard : c.shards) {
      if (shard.name == c.keyless_scripts) {
        return;
      }
    }
    error("keyless_scripts",
          "'" + c.keyless_scripts + "' is neither \"refuse\" nor the name of a shard in shards");
  }

  // "flushall", "CONFIG SET" or "config|set": a command or subcommand of the command table.
  static bool knownCommand(const std::string& entry) {
    std::string name;
    for (char ch : entry) {
      name += ch == ' ' ? '|' : static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    }
    const size_t bar = name.find('|');
    const resp::CommandInfo* top = resp::CommandTable::instance().find(name.substr(0, bar));
    if (top == nullptr || bar == std::string::npos) {
      return top != nullptr;
    }
    for (const resp::CommandInfo& sub : top->subcommands) {
      if (sub.name == name) {
        return true;
      }
    }
    return false;
  }

  void checkHealth(const Config& c) {
    positive("backend.timeout_ms", c.backend_timeout_ms);
    positive("backend.slow_timeout_ms", c.backend_slow_timeout_ms);
    for (size_t i = 0; i < c.backend_slow_commands.size(); ++i) {
      if (!knownCommand(c.backend_slow_commands[i])) {
        error("backend.slow_commands[" + std::to_string(i) + "]",
              "unknown command '" + c.backend_slow_commands[i] +
                  "' (a command name, or \"container subcommand\" such as \"function load\")");
      }
    }
    positive("backend.ping_interval_ms", c.backend_ping_interval_ms);
    positive("backend.failure_limit", c.backend_failure_limit);
    positive("backend.retry_timeout_ms", c.backend_retry_timeout_ms);
    if (c.backend_retry_timeout_max_ms < c.backend_retry_timeout_ms) {
      error("backend.retry_timeout_max_ms", "must be at least backend.retry_timeout_ms (" +
                                                std::to_string(c.backend_retry_timeout_ms) +
                                                "), got " +
                                                std::to_string(c.backend_retry_timeout_max_ms));
    }
    if (c.read_from == ReadFrom::kReplicaOnly) {
      for (size_t i = 0; i < c.shards.size(); ++i) {
        if (c.shards[i].replicas.empty()) {
          error(shardPath(i) + ".replicas",
                "backend.read_from is replica-only, so every shard needs at least one replica");
        }
      }
    }
    if (!c.backend_username.empty() && c.backend_password.empty()) {
      error("backend.password", "required when backend.username is set");
    }
    for (size_t i = 0; i < c.shards.size(); ++i) {
      if (!c.shards[i].username.empty() && c.shards[i].password.empty() &&
          c.backend_password.empty()) {
        error(shardPath(i) + ".password", "required when a username is set");
      }
    }
    if (!sentinel_ && !c.sentinel.master_name_prefix.empty()) {
      error("sentinel.addresses", "at least one sentinel address is required");
    }
  }

  void checkCluster(const Config& c) {
    if (!c.cluster_mode) {
      return;
    }
    if (c.cluster_seeds.empty()) {
      error("backend.cluster_seeds",
            "backend.mode is cluster, so at least one seed is required (or use --cluster)");
    }
    if (!c.shards.empty()) {
      error("shards", "not used with backend.mode cluster: the cluster's masters are the shards");
    }
    if (!c.sentinel.addresses.empty()) {
      error("sentinel", "not used with backend.mode cluster: the cluster fails over by itself");
    }
    positive("backend.cluster_refresh_ms", c.cluster_refresh_ms);
  }

  void checkShards(const std::vector<ShardConfig>& shards) {
    if (shards.empty()) {
      error("shards", "at least one shard is required (use --shards or a config file)");
      return;
    }
    if (shards.size() > kMaxShards) {
      error("shards", "at most " + std::to_string(kMaxShards) + " shards are supported, got " +
                          std::to_string(shards.size()));
    }
    checkNamesAndAddresses(shards);
    if (shards.size() <= kMaxShards) {
      checkSlots(shards);
    }
  }

  // Twemproxy pools have no slots and weigh their servers; Codis lists all 1024 slots; a weight
  // means nothing to the slot placements.
  void checkPlacement(const Config& c) {
    const route::PlacementKind kind = c.placement.kind;
    const bool twemproxy = kind == route::PlacementKind::kTwemproxy;
    for (size_t i = 0; i < c.shards.size(); ++i) {
      const ShardConfig& shard = c.shards[i];
      if (twemproxy && !shard.slots.empty()) {
        error(shardPath(i) + ".slots", "not used with placement.kind twemproxy");
      }
      if (twemproxy && shard.weight == 0) {
        error(shardPath(i) + ".weight", "must be greater than 0");
      }
      if (!twemproxy && shard.weight != 1) {
        error(shardPath(i) + ".weight", "only used with placement.kind twemproxy");
      }
      if (twemproxy && c.placement.distribution == route::Distribution::kKetama &&
          ketamaName(shard).size() > route::kMaxKetamaName) {
        error(shardPath(i) + ".name", "longer than " + std::to_string(route::kMaxKetamaName) +
                                          " bytes: nutcracker's ketama cannot hash it reliably");
      }
      if (kind == route::PlacementKind::kCodis && shard.slots.empty()) {
        error(shardPath(i) + ".slots",
              "missing: with placement.kind codis every shard lists its Codis slots (0..1023), "
              "or placement.codis_dump supplies them");
      }
    }
    if (!twemproxy && (!c.placement.hash_tag.empty() ||
                       c.placement.distribution != route::Distribution::kKetama ||
                       c.placement.hash != route::TwemHash::kFnv1a_64)) {
      error("placement", "distribution, hash and hash_tag are only used with kind twemproxy");
    }
    if (kind != route::PlacementKind::kCodis && !c.placement.codis_dump.empty()) {
      error("placement.codis_dump", "only used with placement.kind codis");
    }
  }

  void checkNamesAndAddresses(const std::vector<ShardConfig>& shards) {
    std::map<std::string, size_t> names;
    std::map<std::pair<std::string, uint16_t>, size_t> addresses;
    for (size_t i = 0; i < shards.size(); ++i) {
      const ShardConfig& shard = shards[i];
      if (shard.name.empty()) {
        error(shardPath(i) + ".name", "must not be empty");
      } else if (auto [it, inserted] = names.emplace(shard.name, i); !inserted) {
        error(shardPath(i) + ".name",
              "duplicate name '" + shard.name + "' (also " + shardPath(it->second) + ")");
      }
      const std::string address_path = shardPath(i) + ".address";
      if (shard.host.empty() && sentinel_) {
        continue;  // Sentinel supplies the primary's address
      }
      if (shard.host.empty()) {
        error(address_path, "missing host");
        continue;
      }
      if (isUnixPath(shard.host)) {
        if (auto [it, inserted] = addresses.emplace(std::make_pair(shard.host, 0), i); !inserted) {
          error(address_path, "duplicate address " + formatHostPort(shard.host, 0) + " (also " +
                                  shardPath(it->second) + ")");
        }
        continue;
      }
      if (!isValidHost(shard.host)) {
        error(address_path, "invalid host '" + shard.host + "'");
        continue;
      }
      if (shard.port == 0) {
        error(address_path, "port must be 1..65535, got '0'");
        continue;
      }
      std::string host_key = shard.host;
      std::transform(host_key.begin(), host_key.end(), host_key.begin(),
                     [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
      if (auto [it, inserted] = addresses.emplace(std::make_pair(host_key, shard.port), i);
          !inserted) {
        error(address_path, "duplicate address " + formatHostPort(shard.host, shard.port) +
                                " (also " + shardPath(it->second) + ")");
      }
    }
  }

  void checkSlots(const std::vector<ShardConfig>& shards) {
    const size_t with_slots = static_cast<size_t>(std::count_if(
        shards.begin(), shards.end(), [](const ShardConfig& s) { return !s.slots.empty(); }));
    if (with_slots == 0) {
      return;  // even split
    }
    const bool mixed = with_slots != shards.size();
    if (mixed) {
      for (size_t i = 0; i < shards.size(); ++i) {
        if (shards[i].slots.empty()) {
          error(shardPath(i) + ".slots",
                "missing: when any shard lists slots, every shard must (or none, for an even "
                "split)");
        }
      }
    }
    std::vector<int> owner(slot_count_, kNoOwner);
    for (size_t i = 0; i < shards.size(); ++i) {
      for (size_t j = 0; j < shards[i].slots.size(); ++j) {
        claimRange(shards[i].slots[j], static_cast<int>(i),
                   shardPath(i) + ".slots[" + std::to_string(j) + "]", &owner);
      }
    }
    if (!mixed) {
      reportUncovered(owner);
    }
  }

  // Checks one range and marks its free slots as owned by shard; reports the parts that another
  // range already owns, one message per (contiguous run, owner).
  void claimRange(const SlotRange& range, int shard, const std::string& path,
                  std::vector<int>* owner) {
    if (range.first >= slot_count_ || range.last >= slot_count_) {
      const uint32_t bad = range.first >= slot_count_ ? range.first : range.last;
      error(path, "slot " + std::to_string(bad) + " is out of range 0.." +
                      std::to_string(slot_count_ - 1));
      return;
    }
    if (range.first > range.last) {
      error(path, "reversed range " + rangeText(range.first, range.last) + " (write " +
                      rangeText(range.last, range.first) + ")");
      return;
    }
    uint32_t run_first = 0;
    int run_owner = kNoOwner;
    auto flush = [&](uint32_t run_last) {
      if (run_owner == kNoOwner) {
        return;
      }
      const bool one = run_first == run_last;
      std::string message = slotsText(run_first, run_last) + (one ? " overlaps " : " overlap ");
      message += run_owner == shard ? "another range of this shard"
                                    : shardPath(static_cast<size_t>(run_owner));
      error(path, message);
      run_owner = kNoOwner;
    };
    for (uint32_t s = range.first; s <= range.last; ++s) {
      const int current = (*owner)[s];
      if (current != run_owner) {
        flush(s - 1);
        run_owner = current;
        run_first = s;
      }
      if (current == kNoOwner) {
        (*owner)[s] = shard;
      }
    }
    flush(range.last);
  }

  void reportUncovered(const std::vector<int>& owner) {
    std::vector<std::pair<uint32_t, uint32_t>> runs;
    uint32_t total = 0;
    for (uint32_t s = 0; s < slot_count_; ++s) {
      if (owner[s] != kNoOwner) {
        continue;
      }
      ++total;
      if (!runs.empty() && runs.back().second + 1 == s) {
        runs.back().second = s;
      } else {
        runs.emplace_back(s, s);
      }
    }
    if (runs.empty()) {
      return;
    }
    std::string list;
    for (size_t k = 0; k < runs.size() && k < kMaxListedRanges; ++k) {
      list += (k == 0 ? "" : ", ") + rangeText(runs[k].first, runs[k].second);
    }
    if (runs.size() > kMaxListedRanges) {
      list += " and " + std::to_string(runs.size() - kMaxListedRanges) + " more ranges";
    }
    const bool one = total == 1;
    error("shards", (one ? "slot " : "slots ") + list + (one ? " is" : " are") +
                        " not assigned to any shard");
  }

  std::vector<ConfigError> errors_;
  bool sentinel_ = false;
  uint32_t slot_count_ = route::kSlotCount;  // 1024 for Codis slots
};

}  // namespace

std::vector<ConfigError> validate(const Config& config) { return Validator().run(config); }

}  // namespace sp::config
