// buildConfig: defaults, then the file, then the flags, then validate(). Validation still runs
// when the file had errors, so one run reports everything; but a validator message that merely
// echoes a loader error (a shard whose address did not parse also "has no host") is dropped.
#include "config/loader.h"

#include "config/twemproxy_config.h"
#include "config/value_parser.h"

#include <algorithm>
#include <string>
#include <vector>

namespace sp::config {
namespace {

bool startsWith(const std::string& s, std::string_view prefix) {
  return s.size() >= prefix.size() && std::string_view(s).substr(0, prefix.size()) == prefix;
}

// "shards[2]" is within "shards[2].address"; "shards" is within "shards[2]".
bool within(const std::string& outer, const std::string& inner) {
  return outer == inner || (startsWith(inner, outer) && inner.size() > outer.size() &&
                            (inner[outer.size()] == '.' || inner[outer.size()] == '['));
}

bool isSlotPath(const std::string& path) {
  return path == "shards" || path.find(".slots") != std::string::npos;
}

// A loader error that leaves a shard or its slot list incomplete: slot coverage is then unknown.
bool breaksSlots(const std::string& path) {
  if (path.find(".slots") != std::string::npos || path == "shards") {
    return true;
  }
  return startsWith(path, "shards[") && path.back() == ']' && path.find('.') == std::string::npos;
}

// The file could not be read or parsed at all: validating the defaults would only add noise.
bool isFatal(const ConfigError& e, const std::string& source) {
  return e.path == source || (e.path == "(top level)" && startsWith(e.message, "expected a map"));
}

// Appends validate(config) to *errors, leaving out what the earlier (loader) errors explain.
void appendValidation(const Config& config, const std::vector<ConfigError>& earlier,
                      bool shards_from_flags, std::vector<ConfigError>* errors) {
  for (ConfigError& v : validate(config)) {
    const bool explained = std::any_of(earlier.begin(), earlier.end(), [&](const ConfigError& p) {
      if (shards_from_flags && startsWith(p.path, "shards")) {
        return false;  // the file's shards were replaced by --shards
      }
      return within(p.path, v.path) || (isSlotPath(v.path) && breaksSlots(p.path));
    });
    if (!explained) {
      errors->push_back(std::move(v));
    }
  }
}

}  // namespace

std::vector<ConfigError> loadAndValidateYaml(std::string_view yaml_text, Config* out) {
  *out = Config{};
  std::vector<ConfigError> errors = loadYaml(yaml_text, out);
  const bool fatal = std::any_of(errors.begin(), errors.end(),
                                 [](const ConfigError& e) { return isFatal(e, "yaml"); });
  if (!fatal) {
    const std::vector<ConfigError> loaded = errors;
    appendValidation(*out, loaded, false, &errors);
  }
  return errors;
}

namespace {

// The --tls-* and --backend-tls-* flags over the file's tls and backend.tls keys (their values
// were checked by parseCommandLine).
void applyTlsFlags(const std::vector<std::pair<std::string, std::string>>& flags, Config* out) {
  tls::ServerSettings& server = out->tls_server;
  tls::ClientSettings& backend = out->backend_tls_client;
  for (const auto& [flag, value] : flags) {
    if (flag == "--tls-listen") {
      // checked by parseCommandLine
      static_cast<void>(parseTlsListen(value, &out->tls_host, &out->tls_port));
    } else if (flag == "--tls-auth-clients") {
      parseAuthClients(value, &server.auth_clients);
    } else if (flag == "--backend-tls") {
      out->backend_tls = true;
    } else if (flag == "--backend-tls-no-verify") {
      backend.verify = false;
    } else if (flag == "--backend-tls-server-name") {
      backend.server_name = value;
    } else if (flag.starts_with("--backend-tls-")) {
      *tlsStringSetting(&backend, flag.substr(std::string_view("--backend-tls-").size())) = value;
    } else {
      *tlsStringSetting(&server, flag.substr(std::string_view("--tls-").size())) = value;
    }
  }
}

}  // namespace

std::vector<ConfigError> buildConfig(const CommandLine& cmdline, Config* out) {
  *out = Config{};
  std::vector<ConfigError> errors;
  if (!cmdline.twemproxy_config.empty() && !cmdline.config_path.empty()) {
    errors.push_back({"--twemproxy-config", "give either --config or --twemproxy-config"});
  } else if (!cmdline.twemproxy_config.empty()) {
    errors = loadTwemproxyFile(cmdline.twemproxy_config, cmdline.pool, out, &out->load_notes);
  } else if (!cmdline.pool.empty()) {
    errors.push_back({"--pool", "only used with --twemproxy-config"});
  } else if (!cmdline.config_path.empty()) {
    errors = loadYamlFile(cmdline.config_path, out);
  }
  const std::vector<ConfigError> loaded = errors;
  const bool fatal = std::any_of(errors.begin(), errors.end(), [&](const ConfigError& e) {
    return isFatal(e, cmdline.configFile()) || e.path == "--pool" || e.path == "--twemproxy-config";
  });

  if (!cmdline.listen_host.empty()) {
    out->listen_host = cmdline.listen_host;
  }
  if (!cmdline.listen_unix.empty()) {
    out->listen_unix = cmdline.listen_unix;
  }
  if (cmdline.unix_perm >= 0) {
    out->listen_unix_perm = static_cast<uint32_t>(cmdline.unix_perm);
  }
  if (cmdline.port >= 0) {
    if (cmdline.port > 65535) {
      errors.push_back(
          {"--port", "port must be 1..65535, got '" + std::to_string(cmdline.port) + "'"});
    } else {
      out->listen_port = static_cast<uint16_t>(cmdline.port);
    }
  }
  if (cmdline.workers >= 0) {
    out->workers = cmdline.workers;
  }
  if (cmdline.no_io_uring) {
    out->io_uring = false;
  }
  bool shard_flag_failed = false;
  if (!cmdline.shards.empty()) {
    std::vector<ShardConfig> shards;
    std::vector<ConfigError> shard_errors = parseShardList(cmdline.shards, &shards);
    shard_flag_failed = !shard_errors.empty();
    errors.insert(errors.end(), shard_errors.begin(), shard_errors.end());
    out->shards = std::move(shards);
  }
  if (!cmdline.cluster.empty()) {
    std::vector<ShardConfig> seeds;
    parseShardList(cmdline.cluster, &seeds);  // checked by parseCommandLine
    out->cluster_mode = true;
    out->cluster_seeds.clear();
    for (const ShardConfig& seed : seeds) {
      out->cluster_seeds.push_back({seed.host, seed.port});
    }
  }
  if (!cmdline.log_level.empty()) {
    out->log_level = cmdline.log_level;
  }
  if (!cmdline.log_file.empty()) {
    out->log_file = cmdline.log_file;
  }
  if (!cmdline.pidfile.empty()) {
    out->pidfile = cmdline.pidfile;
  }
  if (!cmdline.metrics_listen.empty()) {
    out->metrics_listen = cmdline.metrics_listen == "off" ? "" : cmdline.metrics_listen;
    out->metrics_listen_given = true;
  }
  applyTlsFlags(cmdline.tls_flags, out);

  if (!fatal) {
    std::vector<ConfigError> checked;
    appendValidation(*out, loaded, !cmdline.shards.empty(), &checked);
    for (ConfigError& e : checked) {
      if (!(shard_flag_failed && startsWith(e.path, "shards"))) {
        errors.push_back(std::move(e));
      }
    }
  }
  return errors;
}

}  // namespace sp::config
