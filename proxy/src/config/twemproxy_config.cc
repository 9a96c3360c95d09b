// nutcracker.yml -> Config. yaml-cpp exceptions stay in here, as in yaml_loader.cc.
#include "config/twemproxy_config.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>

#include "config/schema_limits.h"
#include "config/text_file.h"
#include "config/value_parser.h"

namespace sp::config {
namespace {

class PoolReader {
 public:
  PoolReader(std::string pool, Config* out, std::vector<std::string>* notes)
      : pool_(std::move(pool)), out_(out), notes_(notes) {}

  std::vector<ConfigError> read(const YAML::Node& pool) {
    if (!pool.IsMap()) {
      error(pool_, "expected a map of pool settings");
      return std::move(errors_);
    }
    bool redis = false;
    for (auto it = pool.begin(); it != pool.end(); ++it) {
      const std::string key = it->first.as<std::string>("");
      const YAML::Node value = it->second;  // a copy: it-> yields a temporary
      if (key == "servers") {
        readServers(value);
      } else if (key == "redis") {
        redis = boolean(key, value);
      } else if (!value.IsScalar()) {
        error(path(key), "expected a scalar value");
      } else {
        readScalar(key, value.Scalar());
      }
    }
    if (!redis) {
      error(path("redis"),
            "memcached pools are not supported: shardproxy serves Redis pools "
            "(redis: true)");
    }
    if (out_->shards.empty()) {
      error(path("servers"), "missing: the pool has no servers");
    }
    out_->placement.kind = route::PlacementKind::kTwemproxy;
    return std::move(errors_);
  }

 private:
  std::string path(const std::string& key) const { return pool_ + "." + key; }
  void error(std::string where, std::string message) {
    errors_.push_back({std::move(where), std::move(message)});
  }
  void note(const std::string& key, const std::string& text) {
    notes_->push_back(path(key) + ": " + text);
  }

  bool boolean(const std::string& key, const YAML::Node& value) {
    const std::string text = value.IsScalar() ? value.Scalar() : "";
    if (text == "true" || text == "false") {
      return text == "true";
    }
    error(path(key), "expected true or false, got '" + text + "'");
    return false;
  }

  bool number(const std::string& key, const std::string& text, uint64_t max, uint64_t* value) {
    if (Status parsed = parseUnsigned(text, max, value); !parsed.ok()) {
      error(path(key), parsed.message());
      return false;
    }
    return true;
  }

  void readScalar(const std::string& key, const std::string& text) {
    uint64_t n = 0;
    if (key == "listen") {
      readListen(text);
    } else if (key == "hash") {
      const auto hash = route::parseTwemHash(text);
      if (!hash) {
        error(path(key), "unknown hash '" + text + "' (" + twemHashNames() + ")");
      }
      out_->placement.hash = hash.value_or(out_->placement.hash);
    } else if (key == "hash_tag") {
      if (text.size() != 2) {
        error(path(key), "expected two characters, got '" + text + "'");
      }
      out_->placement.hash_tag = text;
    } else if (key == "distribution") {
      if (!route::parseDistribution(text, &out_->placement.distribution)) {
        error(path(key), "expected ketama, modula or random, got '" + text + "'");
      }
    } else if (key == "timeout" && number(key, text, UINT32_MAX, &n)) {
      out_->backend_timeout_ms = static_cast<uint32_t>(n);
    } else if (key == "server_retry_timeout" && number(key, text, UINT32_MAX, &n)) {
      out_->backend_retry_timeout_ms = static_cast<uint32_t>(n);
      out_->backend_retry_timeout_max_ms =
          std::max(out_->backend_retry_timeout_max_ms, static_cast<uint32_t>(n));
    } else if (key == "server_failure_limit" && number(key, text, UINT32_MAX, &n)) {
      out_->backend_failure_limit = static_cast<uint32_t>(n);
    } else if (key == "server_connections" && number(key, text, kMaxBackendConnections, &n)) {
      out_->backend_connections = static_cast<int>(n);
    } else if (key == "client_connections" && number(key, text, UINT32_MAX, &n)) {
      if (n > 0) {
        out_->limits.max_clients = static_cast<uint32_t>(n);
      }
    } else if (key == "redis_auth") {
      out_->auth.password = text;
      out_->backend_password = text;
    } else if (key == "redis_db" && number(key, text, UINT32_MAX, &n)) {
      if (n != 0) {
        error(path(key),
              "must be 0: shardproxy serves database 0 of each shard (move the pool's "
              "keys to db 0, or keep twemproxy for this pool)");
      }
    } else if (key == "tcpkeepalive") {
      const bool on = text == "true";
      if (!on && text != "false") {
        error(path(key), "expected true or false, got '" + text + "'");
      }
      out_->limits.tcp_keepalive = on ? 300 : 0;
    } else if (key == "preconnect") {
      note(key, "shardproxy always connects to every shard at start-up");
    } else if (key == "auto_eject_hosts") {
      note(key,
           "a failing shard is ejected (backend.failure_limit, backend.retry_timeout_ms) but "
           "its keys are never rehashed onto other shards: they get an error until it is "
           "back (docs/migrating.md)");
    } else if (key == "backlog") {
      note(key, "not supported, ignored (the listen backlog is the kernel's somaxconn)");
    } else if (key != "timeout" && key != "server_retry_timeout" && key != "server_failure_limit" &&
               key != "server_connections" && key != "client_connections" && key != "redis_db") {
      note(key, "not supported, ignored");
    }
  }

  // "host:port", or a Unix socket as "/path [mode]" (the mode in octal, as nutcracker reads it).
  void readListen(const std::string& text) {
    if (isUnixPath(text)) {
      const size_t space = text.find(' ');
      const size_t mode_at = text.find_first_not_of(' ', space);
      if (mode_at != std::string::npos) {
        if (Status mode = parseFileMode(text.substr(mode_at), &out_->listen_unix_perm);
            !mode.ok()) {
          error(path("listen"), mode.message());
          return;
        }
      }
      out_->listen_unix = text.substr(0, space);
      out_->listen_port = 0;
      return;
    }
    if (Status parsed = parseHostPort(text, &out_->listen_host, &out_->listen_port); !parsed.ok()) {
      error(path("listen"), parsed.message());
    }
  }

  // "host:port:weight [name]", as nutcracker writes them.
  void readServers(const YAML::Node& servers) {
    if (!servers.IsSequence()) {
      error(path("servers"), "expected a list of host:port:weight [name]");
      return;
    }
    for (size_t i = 0; i < servers.size(); ++i) {
      const std::string where = path("servers") + "[" + std::to_string(i) + "]";
      const std::string text = servers[i].IsScalar() ? servers[i].Scalar() : "";
      ShardConfig shard;
      const size_t space = text.find(' ');
      const std::string address = text.substr(0, space);
      if (space != std::string::npos) {
        shard.name = text.substr(text.find_first_not_of(' ', space));
        shard.name_given = true;
      }
      const size_t colon = address.rfind(':');
      uint64_t weight = 0;
      if (colon == std::string::npos ||
          !parseUnsigned(address.substr(colon + 1), kMaxShardWeight, &weight).ok() || weight == 0) {
        error(where, "expected host:port:weight [name] with a weight of 1 to " +
                         std::to_string(kMaxShardWeight) + ", got '" + text + "'");
        continue;
      }
      if (Status parsed = parseHostPort(address.substr(0, colon), &shard.host, &shard.port);
          !parsed.ok()) {
        error(where, parsed.message());
        continue;
      }
      shard.weight = static_cast<uint32_t>(weight);
      if (!shard.name_given) {
        shard.name = "shard" + std::to_string(i);
      }
      out_->shards.push_back(std::move(shard));
    }
  }

  std::string pool_;
  Config* out_;
  std::vector<std::string>* notes_;
  std::vector<ConfigError> errors_;
};

// The file's pools in order, or an error.
std::vector<ConfigError> readPools(std::string_view yaml_text, const std::string& source,
                                   YAML::Node* root, std::vector<std::string>* names) {
  try {
    *root = YAML::Load(std::string(yaml_text));
  } catch (const YAML::Exception& e) {
    return {{source, std::string("not valid YAML: ") + e.what()}};
  }
  if (!root->IsMap() || root->size() == 0) {
    return {{source, "expected a map of pools (name: {listen, servers, ...})"}};
  }
  for (auto it = root->begin(); it != root->end(); ++it) {
    names->push_back(it->first.as<std::string>(""));
  }
  return {};
}

std::vector<ConfigError> readFile(const std::string& path, std::string* text) {
  if (Status read = readTextFile(path, text); !read.ok()) {
    return {{path, read.message()}};
  }
  return {};
}

}  // namespace

std::vector<ConfigError> loadTwemproxyYaml(std::string_view yaml_text, const std::string& source,
                                           const std::string& pool, Config* out,
                                           std::vector<std::string>* notes) {
  YAML::Node root;
  std::vector<std::string> names;
  if (auto errors = readPools(yaml_text, source, &root, &names); !errors.empty()) {
    return errors;
  }
  std::string chosen = pool;
  if (chosen.empty()) {
    if (names.size() != 1) {
      std::string list;
      for (const std::string& n : names) {
        list += (list.empty() ? "" : ", ") + n;
      }
      return {{"--pool", "the file has " + std::to_string(names.size()) + " pools (" + list +
                             "): name one with --pool"}};
    }
    chosen = names.front();
  } else if (std::find(names.begin(), names.end(), chosen) == names.end()) {
    return {{"--pool", "no pool '" + chosen + "' in " + source}};
  }
  try {
    return PoolReader(chosen, out, notes).read(root[chosen]);
  } catch (const YAML::Exception& e) {
    return {{source, std::string("unreadable pool: ") + e.what()}};
  }
}

std::vector<ConfigError> loadTwemproxyFile(const std::string& path, const std::string& pool,
                                           Config* out, std::vector<std::string>* notes) {
  std::string text;
  if (auto errors = readFile(path, &text); !errors.empty()) {
    return errors;
  }
  return loadTwemproxyYaml(text, path, pool, out, notes);
}

std::vector<std::string> twemproxyPoolNames(const std::string& path,
                                            std::vector<ConfigError>* errors) {
  std::string text;
  YAML::Node root;
  std::vector<std::string> names;
  *errors = readFile(path, &text);
  if (errors->empty()) {
    *errors = readPools(text, path, &root, &names);
  }
  return names;
}

}  // namespace sp::config
