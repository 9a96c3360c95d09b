// loadYaml: walks the YAML tree against the schema documented in conf/proxy.yaml. Every problem
// becomes a ConfigError with its YAML path; the walk never stops at the first one. Values are
// checked for syntax and for fitting their field here; whole-config rules live in validator.cc.
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cstdint>
#include <exception>
#include <initializer_list>
#include <limits>
#include <set>
#include <string>
#include <string_view>

#include "config/codis_dump.h"
#include "config/loader.h"
#include "config/schema_limits.h"
#include "config/text_file.h"
#include "config/value_parser.h"

namespace sp::config {
namespace {

std::string describe(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Map:
      return "a map";
    case YAML::NodeType::Sequence:
      return "a list";
    case YAML::NodeType::Scalar:
      return "'" + node.Scalar() + "'";
    case YAML::NodeType::Null:
    case YAML::NodeType::Undefined:
      break;
  }
  return "nothing";
}

std::string child(const std::string& path, std::string_view key) {
  return path.empty() ? std::string(key) : path + "." + std::string(key);
}

std::string element(const std::string& path, size_t index) {
  return path + "[" + std::to_string(index) + "]";
}

size_t editDistance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) {
    row[j] = j;
  }
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

class YamlReader {
 public:
  explicit YamlReader(std::vector<ConfigError>* errors) : errors_(errors) {}

  void readRoot(const YAML::Node& root, Config* out) {
    // Shards may leave out their address when Sentinel names the primaries.
    sentinel_configured_ = root.IsMap() && root["sentinel"].IsDefined();
    if (root.IsMap()) {
      const YAML::Node backend = root["backend"];
      cluster_configured_ = backend.IsDefined() && backend.IsMap() && backend["mode"].IsDefined() &&
                            backend["mode"].IsScalar() && backend["mode"].Scalar() == "cluster";
    }
    forEachKey(
        root, "",
        {"listen", "workers", "shards", "backend", "limits", "shutdown_timeout_ms", "log_level",
         "log", "pidfile", "sentinel", "metrics", "slowlog", "auth", "deny_commands",
         "allow_config_set", "keyless_scripts", "placement", "tls", "io_uring"},
        [&](std::string_view key, const YAML::Node& value, const std::string& path) {
          if (key == "listen") {
            readListen(value, path, out);
          } else if (key == "workers") {
            readInt(value, path, kMaxWorkers, &out->workers);
          } else if (key == "shards") {
            readShards(value, path, &out->shards);
          } else if (key == "backend") {
            readBackend(value, path, out);
          } else if (key == "limits") {
            readLimits(value, path, &out->limits);
          } else if (key == "shutdown_timeout_ms") {
            readU32(value, path, &out->shutdown_timeout_ms);
          } else if (key == "sentinel") {
            readSentinel(value, path, &out->sentinel);
          } else if (key == "metrics") {
            readMetrics(value, path, out);
          } else if (key == "slowlog") {
            readSlowlog(value, path, out);
          } else if (key == "auth") {
            readAuth(value, path, &out->auth);
          } else if (key == "deny_commands") {
            readStringList(value, path, &out->deny_commands);
          } else if (key == "allow_config_set") {
            readBool(value, path, &out->allow_config_set);
          } else if (key == "io_uring") {
            readBool(value, path, &out->io_uring);
          } else if (key == "keyless_scripts") {
            readString(value, path, &out->keyless_scripts);
          } else if (key == "log") {
            readLog(value, path, out);
          } else if (key == "pidfile") {
            readString(value, path, &out->pidfile);
          } else if (key == "placement") {
            readPlacement(value, path, &out->placement);
          } else if (key == "tls") {
            readTls(value, path, out);
          } else {
            readString(value, path, &out->log_level);
          }
        });
  }

 private:
  void error(const std::string& path, std::string message) {
    errors_->push_back({path, std::move(message)});
  }

  // A value parser's failure recorded under `path`; whether the value parsed.
  bool parsedOk(const std::string& path, const Status& parsed) {
    if (!parsed.ok()) {
      error(path, parsed.message());
    }
    return parsed.ok();
  }

  // Calls fn(key, value, path) for each known key of a map, in document order; reports unknown
  // and duplicate keys and non-string keys. A null node is an empty map.
  template <typename Fn>
  void forEachKey(const YAML::Node& map, const std::string& path,
                  std::initializer_list<std::string_view> known, Fn fn) {
    if (map.IsNull()) {
      return;
    }
    if (!map.IsMap()) {
      error(path.empty() ? "(top level)" : path, "expected a map, got " + describe(map));
      return;
    }
    std::set<std::string> seen;
    for (auto it = map.begin(); it != map.end(); ++it) {
      if (!it->first.IsScalar()) {
        error(path.empty() ? "(top level)" : path,
              "keys must be strings, got " + describe(it->first));
        continue;
      }
      const std::string& key = it->first.Scalar();
      const std::string key_path = child(path, key);
      if (!seen.insert(key).second) {
        error(key_path, "duplicate key");
        continue;
      }
      if (std::find(known.begin(), known.end(), key) == known.end()) {
        std::string message = "unknown key";
        for (std::string_view candidate : known) {
          if (editDistance(key, candidate) <= 2) {
            message += " (did you mean '" + std::string(candidate) + "'?)";
            break;
          }
        }
        error(key_path, message);
        continue;
      }
      fn(std::string_view(key), it->second, key_path);
    }
  }

  bool scalar(const YAML::Node& node, const std::string& path, std::string_view what,
              std::string* out) {
    if (!node.IsScalar()) {
      error(path, "expected " + std::string(what) + ", got " + describe(node));
      return false;
    }
    *out = node.Scalar();
    return true;
  }

  bool readUnsigned(const YAML::Node& node, const std::string& path, uint64_t max, uint64_t* out) {
    std::string text;
    return scalar(node, path, "an integer", &text) && parsedOk(path, parseUnsigned(text, max, out));
  }

  void readU32(const YAML::Node& node, const std::string& path, uint32_t* out) {
    uint64_t value = 0;
    if (readUnsigned(node, path, std::numeric_limits<uint32_t>::max(), &value)) {
      *out = static_cast<uint32_t>(value);
    }
  }

  void readInt(const YAML::Node& node, const std::string& path, int max, int* out) {
    uint64_t value = 0;
    if (readUnsigned(node, path, static_cast<uint64_t>(max), &value)) {
      *out = static_cast<int>(value);
    }
  }

  void readSize(const YAML::Node& node, const std::string& path, uint64_t max, uint64_t* out) {
    std::string text;
    if (scalar(node, path, "a size", &text)) {
      parsedOk(path, parseSize(text, max, out));
    }
  }

  void readSize32(const YAML::Node& node, const std::string& path, uint32_t* out) {
    uint64_t value = *out;
    readSize(node, path, std::numeric_limits<uint32_t>::max(), &value);
    *out = static_cast<uint32_t>(value);
  }

  void readString(const YAML::Node& node, const std::string& path, std::string* out) {
    std::string text;
    if (scalar(node, path, "a string", &text)) {
      *out = std::move(text);
    }
  }

  void readBool(const YAML::Node& node, const std::string& path, bool* out) {
    std::string text;
    if (!scalar(node, path, "true or false", &text)) {
      return;
    }
    if (text == "true" || text == "yes" || text == "on") {
      *out = true;
    } else if (text == "false" || text == "no" || text == "off") {
      *out = false;
    } else {
      error(path, "expected true or false, got '" + text + "'");
    }
  }

  void readStringList(const YAML::Node& node, const std::string& path,
                      std::vector<std::string>* out) {
    out->clear();
    if (node.IsNull()) {
      return;
    }
    if (!node.IsSequence()) {
      error(path, "expected a list of strings, got " + describe(node));
      return;
    }
    for (size_t i = 0; i < node.size(); ++i) {
      std::string text;
      if (scalar(node[i], element(path, i), "a string", &text)) {
        out->push_back(std::move(text));
      }
    }
  }

  // auth.users entries are checked (names unique, passwords set) by the validator.
  void readAuth(const YAML::Node& node, const std::string& path, AuthConfig* out) {
    forEachKey(node, path, {"password", "users"},
               [&](std::string_view key, const YAML::Node& value, const std::string& key_path) {
                 if (key == "password") {
                   readString(value, key_path, &out->password);
                   return;
                 }
                 out->users.clear();
                 if (value.IsNull()) {
                   return;
                 }
                 if (!value.IsSequence()) {
                   error(key_path, "expected a list of users, got " + describe(value));
                   return;
                 }
                 for (size_t i = 0; i < value.size(); ++i) {
                   AuthUser user;
                   readAuthUser(value[i], element(key_path, i), &user);
                   out->users.push_back(std::move(user));
                 }
               });
  }

  void readAuthUser(const YAML::Node& node, const std::string& path, AuthUser* out) {
    if (!node.IsMap()) {
      error(path, "expected a map with a name and a password, got " + describe(node));
      return;
    }
    forEachKey(node, path, {"name", "password", "read_only", "admin"},
               [&](std::string_view key, const YAML::Node& value, const std::string& key_path) {
                 if (key == "name") {
                   readString(value, key_path, &out->name);
                 } else if (key == "password") {
                   readString(value, key_path, &out->password);
                 } else if (key == "read_only") {
                   readBool(value, key_path, &out->read_only);
                 } else {
                   readBool(value, key_path, &out->admin);
                 }
               });
  }

  // metrics.listen is checked (host:port or "") by the validator, which also sees the flag.
  void readMetrics(const YAML::Node& node, const std::string& path, Config* out) {
    forEachKey(node, path, {"listen", "ready_quorum"},
               [&](std::string_view key, const YAML::Node& value, const std::string& key_path) {
                 if (key == "listen") {
                   readString(value, key_path, &out->metrics_listen);
                   out->metrics_listen_given = true;
                   return;
                 }
                 uint64_t percent = out->ready_quorum_percent;
                 if (readUnsigned(value, key_path, kMaxReadyQuorumPercent, &percent)) {
                   out->ready_quorum_percent = static_cast<uint32_t>(percent);
                 }
               });
  }

  void readPlacement(const YAML::Node& node, const std::string& path, PlacementConfig* out) {
    forEachKey(
        node, path, {"kind", "distribution", "hash", "hash_tag", "codis_dump"},
        [&](std::string_view key, const YAML::Node& value, const std::string& key_path) {
          std::string text;
          if (!scalar(value, key_path, "a string", &text)) {
            return;
          }
          if (key == "kind") {
            if (!parsePlacementKind(text, &out->kind)) {
              error(key_path, "expected cluster_slots, twemproxy or codis, got '" + text + "'");
            }
          } else if (key == "distribution") {
            if (!route::parseDistribution(text, &out->distribution)) {
              error(key_path, "expected ketama, modula or random, got '" + text + "'");
            }
          } else if (key == "hash") {
            const auto hash = route::parseTwemHash(text);
            if (!hash) {
              error(key_path, "unknown hash '" + text + "' (" + twemHashNames() + ")");
            }
            out->hash = hash.value_or(out->hash);
          } else if (key == "hash_tag") {
            if (!text.empty() && text.size() != 2) {
              error(key_path, "expected two characters (e.g. \"{}\") or \"\", got '" + text + "'");
            }
            out->hash_tag = text;
          } else {
            out->codis_dump = text;
          }
        });
  }

  // log.level is log_level by another name (checked as log_level by the validator).
  void readLog(const YAML::Node& node, const std::string& path, Config* out) {
    forEachKey(node, path, {"level", "file"},
               [&](std::string_view key, const YAML::Node& value, const std::string& key_path) {
                 readString(value, key_path, key == "level" ? &out->log_level : &out->log_file);
               });
  }

  void readSlowlog(const YAML::Node& node, const std::string& path, Config* out) {
    forEachKey(node, path, {"threshold_us", "max_len"},
               [&](std::string_view key, const YAML::Node& value, const std::string& key_path) {
                 if (key == "threshold_us") {
                   readUnsigned(value, key_path, kMaxSlowlogThresholdUs,
                                &out->slowlog_threshold_us);
                 } else {
                   uint64_t len = out->slowlog_max_len;
                   if (readUnsigned(value, key_path, kMaxSlowlogLen, &len)) {
                     out->slowlog_max_len = static_cast<uint32_t>(len);
                   }
                 }
               });
  }

  void readListen(const YAML::Node& node, const std::string& path, Config* out) {
    forEachKey(node, path, {"host", "port", "unix", "unix_perm"},
               [&](std::string_view key, const YAML::Node& value, const std::string& key_path) {
                 if (key == "host") {
                   readString(value, key_path, &out->listen_host);
                   return;
                 }
                 if (key == "unix") {
                   readString(value, key_path, &out->listen_unix);
                   return;
                 }
                 std::string text;
                 if (key == "unix_perm") {
                   if (scalar(value, key_path, "an octal file mode", &text)) {
                     parsedOk(key_path, parseFileMode(text, &out->listen_unix_perm));
                   }
                   return;
                 }
                 if (!scalar(value, key_path, "a port number", &text)) {
                   return;
                 }
                 if (text == "0") {
                   out->listen_port = 0;  // no TCP listener: listen.unix only
                 } else {
                   parsedOk(key_path, parsePort(text, &out->listen_port));
                 }
               });
  }

  void readBackend(const YAML::Node& node, const std::string& path, Config* out) {
    forEachKey(
        node, path,
        {"connections", "connect_timeout_ms", "reconnect_min_ms", "reconnect_max_ms", "timeout_ms",
         "slow_commands", "slow_timeout_ms", "ping_interval_ms", "failure_limit",
         "retry_timeout_ms", "retry_timeout_max_ms", "read_from", "username", "password", "mode",
         "cluster_seeds", "cluster_refresh_ms", "max_redirects", "tls"},
        [&](std::string_view key, const YAML::Node& value, const std::string& key_path) {
          if (key == "connections") {
            readInt(value, key_path, kMaxBackendConnections, &out->backend_connections);
          } else if (key == "connect_timeout_ms") {
            readU32(value, key_path, &out->backend_connect_timeout_ms);
          } else if (key == "reconnect_min_ms") {
            readU32(value, key_path, &out->backend_reconnect_min_ms);
          } else if (key == "reconnect_max_ms") {
            readU32(value, key_path, &out->backend_reconnect_max_ms);
          } else if (key == "timeout_ms") {
            readU32(value, key_path, &out->backend_timeout_ms);
          } else if (key == "slow_commands") {
            readStringList(value, key_path, &out->backend_slow_commands);
          } else if (key == "slow_timeout_ms") {
            readU32(value, key_path, &out->backend_slow_timeout_ms);
          } else if (key == "ping_interval_ms") {
            readU32(value, key_path, &out->backend_ping_interval_ms);
          } else if (key == "failure_limit") {
            readU32(value, key_path, &out->backend_failure_limit);
          } else if (key == "retry_timeout_ms") {
            readU32(value, key_path, &out->backend_retry_timeout_ms);
          } else if (key == "retry_timeout_max_ms") {
            readU32(value, key_path, &out->backend_retry_timeout_max_ms);
          } else if (key == "read_from") {
            readReadFrom(value, key_path, &out->read_from);
          } else if (key == "username") {
            readString(value, key_path, &out->backend_username);
          } else if (key == "mode") {
            std::string mode;
            readString(value, key_path, &mode);
            if (mode == "cluster" || mode == "static") {
              out->cluster_mode = mode == "cluster";
            } else if (value.IsScalar()) {
              error(key_path, "expected static or cluster, got '" + mode + "'");
            }
          } else if (key == "cluster_seeds") {
            readEndpoints(value, key_path, &out->cluster_seeds);
          } else if (key == "cluster_refresh_ms") {
            readU32(value, key_path, &out->cluster_refresh_ms);
          } else if (key == "max_redirects") {
            readU32(value, key_path, &out->max_redirects);
          } else if (key == "tls") {
            readBackendTls(value, key_path, out);
          } else {
            readString(value, key_path, &out->backend_password);
          }
        });
  }

  // tls: the TLS listener. Files are read (and checked) when the contexts are built.
  void readTls(const YAML::Node& node, const std::string& path, Config* out) {
    tls::ServerSettings& t = out->tls_server;
    forEachKey(node, path,
               {"listen", "cert_file", "key_file", "ca_cert_file", "auth_clients", "protocols",
                "ciphers", "ciphersuites"},
               [&](std::string_view key, const YAML::Node& value, const std::string& key_path) {
                 std::string text;
                 if (!scalar(value, key_path, "a string", &text)) {
                   return;
                 }
                 if (key == "listen") {
                   parsedOk(key_path, parseTlsListen(text, &out->tls_host, &out->tls_port));
                 } else if (key == "auth_clients") {
                   if (!parseAuthClients(text, &t.auth_clients)) {
                     error(key_path, "expected no, optional or yes, got '" + text + "'");
                   }
                 } else {
                   *tlsStringSetting(&t, key) = text;
                 }
               });
  }

  // backend.tls: TLS to shards, Cluster nodes and Sentinels.
  void readBackendTls(const YAML::Node& node, const std::string& path, Config* out) {
    tls::ClientSettings& t = out->backend_tls_client;
    forEachKey(node, path,
               {"enabled", "ca_cert_file", "cert_file", "key_file", "server_name", "verify",
                "protocols", "ciphers", "ciphersuites"},
               [&](std::string_view key, const YAML::Node& value, const std::string& key_path) {
                 if (key == "enabled") {
                   readBool(value, key_path, &out->backend_tls);
                 } else if (key == "verify") {
                   readBool(value, key_path, &t.verify);
                 } else if (key == "server_name") {
                   readString(value, key_path, &t.server_name);
                 } else {
                   readString(value, key_path, tlsStringSetting(&t, key));
                 }
               });
  }

  void readReadFrom(const YAML::Node& node, const std::string& path, ReadFrom* out) {
    std::string text;
    if (!scalar(node, path, "primary, prefer-replica, replica-only or round-robin", &text)) {
      return;
    }
    if (!parseReadFrom(text, out)) {
      error(path,
            "expected primary, prefer-replica, replica-only or round-robin, got '" + text + "'");
    }
  }

  void readEndpoints(const YAML::Node& node, const std::string& path, std::vector<Endpoint>* out) {
    if (!node.IsSequence()) {
      error(path, "expected a list of host:port, got " + describe(node));
      return;
    }
    for (size_t i = 0; i < node.size(); ++i) {
      const std::string entry_path = element(path, i);
      std::string text;
      Endpoint endpoint;
      if (!scalar(node[i], entry_path, "host:port", &text) ||
          !parsedOk(entry_path, parseHostPort(text, &endpoint.host, &endpoint.port))) {
        continue;
      }
      out->push_back(std::move(endpoint));
    }
  }

  void readSentinel(const YAML::Node& node, const std::string& path, SentinelConfig* out) {
    forEachKey(node, path, {"addresses", "master_name_prefix", "password"},
               [&](std::string_view key, const YAML::Node& value, const std::string& key_path) {
                 if (key == "addresses") {
                   readEndpoints(value, key_path, &out->addresses);
                 } else if (key == "master_name_prefix") {
                   readString(value, key_path, &out->master_name_prefix);
                 } else {
                   readString(value, key_path, &out->password);
                 }
               });
  }

  void readLimits(const YAML::Node& node, const std::string& path, Limits* out) {
    forEachKey(
        node, path,
        {"max_bulk_len", "max_array_len", "max_inline_len", "max_inflight_per_client",
         "client_output_buffer", "max_clients", "timeout", "tcp_keepalive", "buffer_pool_bytes"},
        [&](std::string_view key, const YAML::Node& value, const std::string& key_path) {
          if (key == "max_bulk_len") {
            readSize(value, key_path, kMaxSizeBytes, &out->max_bulk_len);
          } else if (key == "max_array_len") {
            readU32(value, key_path, &out->max_array_len);
          } else if (key == "max_inline_len") {
            readSize32(value, key_path, &out->max_inline_len);
          } else if (key == "max_inflight_per_client") {
            readU32(value, key_path, &out->max_inflight_per_client);
          } else if (key == "client_output_buffer") {
            readSize(value, key_path, kMaxSizeBytes, &out->client_output_buffer);
          } else if (key == "timeout") {
            readU32(value, key_path, &out->timeout);
          } else if (key == "tcp_keepalive") {
            readU32(value, key_path, &out->tcp_keepalive);
          } else if (key == "buffer_pool_bytes") {
            readSize(value, key_path, kMaxSizeBytes, &out->buffer_pool_bytes);
          } else {
            readU32(value, key_path, &out->max_clients);
          }
        });
  }

  // Every list entry yields a ShardConfig, even a broken one, so that shard indices in later
  // (validator) messages match the file.
  void readShards(const YAML::Node& node, const std::string& path, std::vector<ShardConfig>* out) {
    out->clear();
    if (node.IsNull()) {
      return;
    }
    if (!node.IsSequence()) {
      error(path, "expected a list of shards, got " + describe(node));
      return;
    }
    for (size_t i = 0; i < node.size(); ++i) {
      ShardConfig shard;
      shard.name = "shard" + std::to_string(i);
      readShard(node[i], element(path, i), &shard);
      out->push_back(std::move(shard));
    }
  }

  void readShard(const YAML::Node& node, const std::string& path, ShardConfig* out) {
    if (!node.IsMap()) {
      error(path, "expected a map with an address, got " + describe(node));
      return;
    }
    bool has_address = false;
    forEachKey(node, path,
               {"name", "address", "slots", "replicas", "username", "password", "weight"},
               [&](std::string_view key, const YAML::Node& value, const std::string& key_path) {
                 if (key == "name") {
                   readString(value, key_path, &out->name);
                   out->name_given = true;
                 } else if (key == "weight") {
                   uint64_t weight = out->weight;
                   if (readUnsigned(value, key_path, kMaxShardWeight, &weight)) {
                     out->weight = static_cast<uint32_t>(weight);
                   }
                 } else if (key == "address") {
                   has_address = true;
                   readAddress(value, key_path, out);
                 } else if (key == "slots") {
                   readSlots(value, key_path, &out->slots);
                 } else if (key == "replicas") {
                   readEndpoints(value, key_path, &out->replicas);
                 } else if (key == "username") {
                   readString(value, key_path, &out->username);
                 } else {
                   readString(value, key_path, &out->password);
                 }
               });
    if (!has_address && !sentinel_configured_ && !cluster_configured_) {
      error(child(path, "address"), "missing (every shard needs host:port unless sentinel is set)");
    }
  }

  void readAddress(const YAML::Node& node, const std::string& path, ShardConfig* out) {
    if (node.IsSequence()) {
      // address: [::1]:7001 unquoted is YAML flow syntax, not a string.
      error(path, "expected host:port, got a list (quote IPv6 addresses: \"[::1]:7001\")");
      return;
    }
    std::string text;
    if (scalar(node, path, "host:port", &text)) {
      parsedOk(path, parseServerAddress(text, &out->host, &out->port));
    }
  }

  void readSlots(const YAML::Node& node, const std::string& path, std::vector<SlotRange>* out) {
    if (!node.IsSequence()) {
      error(path,
            "expected a list of slots or ranges (e.g. [0-8191, 9000]), got " + describe(node));
      return;
    }
    for (size_t i = 0; i < node.size(); ++i) {
      const std::string entry_path = element(path, i);
      std::string text;
      if (!scalar(node[i], entry_path, "a slot or a range a-b", &text)) {
        continue;
      }
      SlotRange range;
      if (parseSlotEntry(text, entry_path, &range)) {
        out->push_back(range);
      }
    }
  }

  // "a-b" or "a", spaces around the dash allowed. Values up to 65535 are stored as given; the
  // validator reports those past 16383 and reversed ranges.
  bool parseSlotEntry(std::string_view text, const std::string& path, SlotRange* out) {
    auto trim = [](std::string_view s) {
      while (!s.empty() && s.front() == ' ') {
        s.remove_prefix(1);
      }
      while (!s.empty() && s.back() == ' ') {
        s.remove_suffix(1);
      }
      return s;
    };
    const size_t dash = text.find('-');
    std::string_view first = trim(text.substr(0, dash));
    std::string_view last = dash == std::string_view::npos ? first : trim(text.substr(dash + 1));
    uint64_t a = 0;
    uint64_t b = 0;
    if (!parseUnsigned(first, std::numeric_limits<uint64_t>::max(), &a).ok() ||
        !parseUnsigned(last, std::numeric_limits<uint64_t>::max(), &b).ok()) {
      error(path, "expected a slot or a range a-b, got '" + std::string(text) + "'");
      return false;
    }
    for (uint64_t slot : {a, b}) {
      if (slot > std::numeric_limits<uint16_t>::max()) {
        error(path, "slot " + std::to_string(slot) + " is out of range 0..16383");
        return false;
      }
    }
    out->first = static_cast<uint16_t>(a);
    out->last = static_cast<uint16_t>(b);
    return true;
  }

  std::vector<ConfigError>* errors_;
  bool sentinel_configured_ = false;
  bool cluster_configured_ = false;
};

// source names the file in syntax errors ("yaml" for text).
std::vector<ConfigError> loadYamlFrom(std::string_view yaml_text, const std::string& source,
                                      Config* out) {
  std::vector<ConfigError> errors;
  const std::string where = source.empty() ? "yaml" : source;
  try {
    YAML::Node root = YAML::Load(std::string(yaml_text));
    YamlReader(&errors).readRoot(root, out);
    if (!out->placement.codis_dump.empty()) {
      if (!out->shards.empty()) {
        errors.push_back({"placement.codis_dump", "give either shards or a Codis dump, not both"});
      } else {
        const auto dump_errors = loadCodisDump(out->placement.codis_dump, &out->shards);
        errors.insert(errors.end(), dump_errors.begin(), dump_errors.end());
      }
    }
  } catch (const YAML::ParserException& e) {
    errors.push_back({where, "syntax error at line " + std::to_string(e.mark.line + 1) +
                                 ", column " + std::to_string(e.mark.column + 1) + ": " + e.msg});
  } catch (const YAML::Exception& e) {
    errors.push_back({where, std::string("invalid YAML: ") + e.what()});
  } catch (const std::exception& e) {
    errors.push_back({where, std::string("cannot load: ") + e.what()});
  }
  return errors;
}

}  // namespace

std::vector<ConfigError> loadYaml(std::string_view yaml_text, Config* out) {
  return loadYamlFrom(yaml_text, "", out);
}

std::vector<ConfigError> loadYamlFile(const std::string& path, Config* out) {
  std::string text;
  if (Status read = readTextFile(path, &text); !read.ok()) {
    return {{path, read.message()}};
  }
  return loadYamlFrom(text, path, out);
}

}  // namespace sp::config
