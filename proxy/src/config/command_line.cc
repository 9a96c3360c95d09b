// parseCommandLine, usage and parseShardList: the flags of shardproxy. Both "--flag value" and
// "--flag=value" are accepted; every bad flag is reported, each under its own name.
#include <algorithm>
#include <string>
#include <string_view>

#include "config/loader.h"
#include "config/schema_limits.h"
#include "config/value_parser.h"

namespace sp::config {
namespace {

enum class Flag {
  kConfig,
  kCheckConfig,
  kListen,
  kPort,
  kUnixPerm,
  kWorkers,
  kShards,
  kCluster,
  kLogLevel,
  kLogFile,
  kPidfile,
  kMetricsListen,
  kTwemproxyConfig,
  kPool,
  kNoIoUring,
  kTls,  // every --tls-* and --backend-tls-* flag; buildConfig applies them by name
  kHelp,
  kVersion
};

struct FlagSpec {
  std::string_view name;
  std::string_view alias;  // short form, or empty
  Flag flag;
  bool takes_value;
};

constexpr FlagSpec kFlags[] = {
    {"--config", "-c", Flag::kConfig, true},
    {"--check-config", "", Flag::kCheckConfig, true},
    {"--listen", "", Flag::kListen, true},
    {"--port", "", Flag::kPort, true},
    {"--unix-perm", "", Flag::kUnixPerm, true},
    {"--workers", "", Flag::kWorkers, true},
    {"--shards", "", Flag::kShards, true},
    {"--cluster", "", Flag::kCluster, true},
    {"--log-level", "", Flag::kLogLevel, true},
    {"--log-file", "", Flag::kLogFile, true},
    {"--pidfile", "", Flag::kPidfile, true},
    {"--help", "-h", Flag::kHelp, false},
    {"--version", "", Flag::kVersion, false},
    {"--metrics-listen", "", Flag::kMetricsListen, true},
    {"--twemproxy-config", "", Flag::kTwemproxyConfig, true},
    {"--pool", "", Flag::kPool, true},
    {"--no-io-uring", "", Flag::kNoIoUring, false},
    {"--tls-listen", "", Flag::kTls, true},
    {"--tls-cert-file", "", Flag::kTls, true},
    {"--tls-key-file", "", Flag::kTls, true},
    {"--tls-ca-cert-file", "", Flag::kTls, true},
    {"--tls-auth-clients", "", Flag::kTls, true},
    {"--tls-protocols", "", Flag::kTls, true},
    {"--tls-ciphers", "", Flag::kTls, true},
    {"--tls-ciphersuites", "", Flag::kTls, true},
    {"--backend-tls", "", Flag::kTls, false},
    {"--backend-tls-ca-cert-file", "", Flag::kTls, true},
    {"--backend-tls-cert-file", "", Flag::kTls, true},
    {"--backend-tls-key-file", "", Flag::kTls, true},
    {"--backend-tls-server-name", "", Flag::kTls, true},
    {"--backend-tls-no-verify", "", Flag::kTls, false},
};

const FlagSpec* findFlag(std::string_view name) {
  for (const FlagSpec& spec : kFlags) {
    if (name == spec.name || (!spec.alias.empty() && name == spec.alias)) {
      return &spec;
    }
  }
  return nullptr;
}

// --listen HOST, HOST:PORT, [IPV6]:PORT, [IPV6] or a bare IPv6 literal. *port stays -1 when the
// text has none.
Status parseListen(std::string_view text, std::string* host, int* port) {
  if (text.empty()) {
    return Status::failure("missing value");
  }
  if (text.front() == '[') {
    const size_t close = text.find(']');
    if (close == text.size() - 1) {
      const std::string_view inner = text.substr(1, close - 1);
      if (inner.find(':') == std::string_view::npos || !isValidHost(inner)) {
        return Status::failure("invalid IPv6 address '" + std::string(text) + "'");
      }
      *host = std::string(inner);
      return Status();
    }
  } else if (std::count(text.begin(), text.end(), ':') != 1) {
    // No colon: a host. Several: a bare IPv6 literal (use [addr]:port to add a port).
    if (!isValidHost(text)) {
      return Status::failure("expected HOST or HOST:PORT, got '" + std::string(text) + "'");
    }
    *host = std::string(text);
    return Status();
  }
  uint16_t parsed = 0;
  if (Status host_port = parseHostPort(text, host, &parsed); !host_port.ok()) {
    return host_port;
  }
  *port = parsed;
  return Status();
}

class Parser {
 public:
  explicit Parser(CommandLine* out) : out_(out) {}

  std::vector<ConfigError> run(int argc, const char* const* argv) {
    for (int i = 1; i < argc; ++i) {
      const std::string_view arg = argv[i];
      if (arg.size() < 2 || arg[0] != '-') {
        error(std::string(arg), "unexpected argument (options start with --; see --help)");
        continue;
      }
      const size_t eq = arg.find('=');
      const std::string_view name = arg.substr(0, eq);
      const FlagSpec* spec = findFlag(name);
      if (spec == nullptr) {
        error(std::string(name), "unknown flag (see --help)");
        continue;
      }
      if (!spec->takes_value) {
        if (eq != std::string_view::npos) {
          error(std::string(name), "takes no value");
        } else {
          apply(*spec, {});
        }
        continue;
      }
      std::string_view value;
      if (eq != std::string_view::npos) {
        value = arg.substr(eq + 1);
      } else if (i + 1 < argc && std::string_view(argv[i + 1]).substr(0, 2) != "--") {
        value = argv[++i];
      } else {
        error(std::string(name), "missing value");
        continue;
      }
      if (value.empty()) {
        error(std::string(name), "missing value");
        continue;
      }
      apply(*spec, value);
    }
    if (port_from_flag_ >= 0) {
      out_->port = port_from_flag_;
    } else if (port_from_listen_ >= 0) {
      out_->port = port_from_listen_;
    } else if (!out_->listen_unix.empty() && !tcp_listen_given_) {
      out_->port = 0;  // --listen unix:PATH alone: no TCP listener
    }
    return std::move(errors_);
  }

 private:
  void error(std::string path, std::string message) {
    errors_.push_back({std::move(path), std::move(message)});
  }

  // A value parser's failure recorded under the flag's name; whether the value parsed.
  bool parsedOk(const std::string& name, const Status& parsed) {
    if (!parsed.ok()) {
      error(name, parsed.message());
    }
    return parsed.ok();
  }

  void apply(const FlagSpec& spec, std::string_view value) {
    const std::string name(spec.name);
    switch (spec.flag) {
      case Flag::kConfig:
        out_->config_path = std::string(value);
        break;
      case Flag::kCheckConfig:
        out_->config_path = std::string(value);
        out_->check_config = true;
        break;
      case Flag::kTwemproxyConfig:
        out_->twemproxy_config = std::string(value);
        break;
      case Flag::kPool:
        out_->pool = std::string(value);
        break;
      case Flag::kNoIoUring:
        out_->no_io_uring = true;
        break;
      case Flag::kListen: {
        if (value.starts_with("unix:")) {
          uint16_t unused = 0;
          parsedOk(name, parseServerAddress(value, &out_->listen_unix, &unused));
          break;
        }
        tcp_listen_given_ = true;
        std::string host;
        int port = -1;
        if (!parsedOk(name, parseListen(value, &host, &port))) {
          break;
        }
        out_->listen_host = host;
        port_from_listen_ = port;
        break;
      }
      case Flag::kPort: {
        uint16_t port = 0;
        if (value != "0" && !parsedOk(name, parsePort(value, &port))) {
          break;
        }
        port_from_flag_ = port;
        break;
      }
      case Flag::kUnixPerm: {
        uint32_t perm = 0;
        if (!parsedOk(name, parseFileMode(value, &perm))) {
          break;
        }
        out_->unix_perm = static_cast<int>(perm);
        break;
      }
      case Flag::kWorkers: {
        uint64_t workers = 0;
        if (!parsedOk(name, parseUnsigned(value, kMaxWorkers, &workers))) {
          break;
        }
        out_->workers = static_cast<int>(workers);
        break;
      }
      case Flag::kCluster: {
        std::vector<ShardConfig> seeds;
        std::vector<ConfigError> seed_errors = parseShardList(value, &seeds);
        for (ConfigError& e : seed_errors) {
          e.path = name;
        }
        errors_.insert(errors_.end(), seed_errors.begin(), seed_errors.end());
        if (seed_errors.empty()) {
          out_->cluster = std::string(value);
        }
        break;
      }
      case Flag::kShards: {
        std::vector<ShardConfig> shards;
        std::vector<ConfigError> shard_errors = parseShardList(value, &shards);
        errors_.insert(errors_.end(), shard_errors.begin(), shard_errors.end());
        if (shard_errors.empty()) {
          out_->shards = std::string(value);
        }
        break;
      }
      case Flag::kLogLevel:
        if (!isLogLevel(value)) {
          error(name, "unknown level '" + std::string(value) +
                          "' (expected trace, debug, info, warn, error, critical or off)");
          break;
        }
        out_->log_level = std::string(value);
        break;
      case Flag::kLogFile:
      case Flag::kPidfile:  // opened at start-up, which reports a path it cannot use
        (spec.flag == Flag::kLogFile ? out_->log_file : out_->pidfile) = std::string(value);
        break;
      case Flag::kMetricsListen: {
        std::string host;
        uint16_t port = 0;
        if (value != "off") {
          if (Status parsed = parseHostPort(value, &host, &port); !parsed.ok()) {
            error(name, parsed.message() + " (or off)");
            break;
          }
        }
        out_->metrics_listen = std::string(value);
        break;
      }
      case Flag::kTls: {
        std::string host;
        uint16_t port = 0;
        tls::AuthClients auth = tls::AuthClients::kNo;
        if (spec.name == "--tls-listen" && !parsedOk(name, parseTlsListen(value, &host, &port))) {
          break;
        }
        if (spec.name == "--tls-auth-clients" && !parseAuthClients(value, &auth)) {
          error(name, "expected no, optional or yes, got '" + std::string(value) + "'");
          break;
        }
        out_->tls_flags.emplace_back(name, std::string(value));
        break;
      }
      case Flag::kHelp:
        out_->show_help = true;
        break;
      case Flag::kVersion:
        out_->show_version = true;
        break;
    }
  }

  CommandLine* out_;
  std::vector<ConfigError> errors_;
  int port_from_flag_ = -1;  // --port wins over a port in --listen, whatever the order
  int port_from_listen_ = -1;
  bool tcp_listen_given_ = false;  // a --listen that is not unix:PATH
};

}  // namespace

std::vector<ConfigError> parseShardList(std::string_view list, std::vector<ShardConfig>* out) {
  std::vector<ConfigError> errors;
  out->clear();
  size_t index = 0;
  size_t start = 0;
  while (start <= list.size()) {
    size_t comma = list.find(',', start);
    if (comma == std::string_view::npos) {
      comma = list.size();
    }
    std::string_view entry = list.substr(start, comma - start);
    while (!entry.empty() && entry.front() == ' ') {
      entry.remove_prefix(1);
    }
    while (!entry.empty() && entry.back() == ' ') {
      entry.remove_suffix(1);
    }
    ShardConfig shard;
    shard.name = "shard" + std::to_string(index);
    if (entry.empty()) {
      errors.push_back({"--shards", "entry " + std::to_string(index) + " is empty in '" +
                                        std::string(list) + "'"});
    } else if (Status parsed = parseServerAddress(entry, &shard.host, &shard.port); !parsed.ok()) {
      errors.push_back({"--shards", parsed.message()});
    } else {
      out->push_back(std::move(shard));
    }
    ++index;
    start = comma + 1;
  }
  return errors;
}

std::vector<ConfigError> parseCommandLine(int argc, const char* const* argv, CommandLine* out) {
  return Parser(out).run(argc, argv);
}

std::string usage() {
  return "Usage: shardproxy [--config FILE] [options]\n"
         "       shardproxy --check-config FILE\n"
         "\n"
         "A sharding Redis proxy: routes each key by its Redis Cluster slot to one of the shards.\n"
         "Flags override the config file; without --config the proxy runs from flags alone\n"
         "(then --shards is required).\n"
         "\n"
         "Options (--flag value or --flag=value):\n"
         "  -c, --config FILE        load the YAML config FILE (see conf/proxy.yaml)\n"
         "      --check-config FILE  validate FILE (with the other flags), print problems, exit\n"
         "                           0 when valid, 2 when not\n"
         "      --listen HOST[:PORT] address to listen on ([::1]:6380 for IPv6)\n"
         "      --listen unix:PATH   accept clients on a Unix socket; with it alone, not on TCP\n"
         "                           (add --port N or a TCP --listen for both)\n"
         "      --unix-perm OCTAL    mode of the Unix socket file (e.g. 660); default: the "
         "umask's\n"
         "      --port N             port to listen on (wins over a port in --listen); 0 = no TCP\n"
         "      --workers N          worker threads; 0 = one per core\n"
         "      --shards H:P,H:P,... shard addresses (replaces the file's shards; slots split\n"
         "                           evenly)\n"
         "      --cluster H:P,H:P,...  front a Redis Cluster found from these seed nodes\n"
         "                           (backend.mode cluster; slots from CLUSTER SLOTS)\n"
         "      --log-level LEVEL    trace, debug, info, warn, error, critical or off\n"
         "      --log-file PATH      append the log to PATH instead of stderr; SIGUSR1 reopens\n"
         "                           it (after logrotate moved it)\n"
         "      --pidfile PATH       write the process id to PATH (removed on exit)\n"
         "      --metrics-listen H:P serve Prometheus /metrics on H:P (default 127.0.0.1:9121);\n"
         "                           off = no metrics endpoint; the default, when taken,\n"
         "                           moves to the next free port up to 9131\n"
         "      --twemproxy-config FILE  serve a twemproxy pool from its nutcracker.yml as it is:\n"
         "                           same servers, same key placement (docs/migrating.md)\n"
         "      --pool NAME          serve only this pool of --twemproxy-config (without it,\n"
         "                           every pool is served, each by a process of its own)\n"
         "      --no-io-uring        read and write sockets with libuv and send(2), one call\n"
         "                           each, instead of through the worker's io_uring (io_uring)\n"
         "      --tls-listen [HOST:]PORT  accept TLS clients there too (tls.listen); with\n"
         "                           --tls-cert-file, --tls-key-file, --tls-ca-cert-file,\n"
         "                           --tls-auth-clients no|optional|yes, --tls-protocols,\n"
         "                           --tls-ciphers, --tls-ciphersuites (the tls.* keys)\n"
         "      --backend-tls        speak TLS to the shards, Cluster nodes and Sentinels; with\n"
         "                           --backend-tls-ca-cert-file, --backend-tls-cert-file,\n"
         "                           --backend-tls-key-file, --backend-tls-server-name,\n"
         "                           --backend-tls-no-verify (the backend.tls.* keys)\n"
         "  -h, --help               print this help and exit\n"
         "      --version            print the version and exit\n";
}

}  // namespace sp::config
