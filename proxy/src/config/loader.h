// Loads and validates configuration: YAML file, then command-line overrides. Every problem is
// collected (never just the first) and names the YAML path (or the flag) it concerns.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "config/config.h"

namespace sp::config {

struct ConfigError {
  std::string path;     // "shards[2].slots[0]", "limits.max_bulk_len", "--shards", "workers"
  std::string message;  // "unknown key", "expected an integer, got 'abc'", "overlaps shards[0]"
  std::string toString() const { return path + ": " + message; }
};

// Parses YAML text into *out (starting from defaults). Unknown keys, wrong types, out-of-range
// values are errors. yaml-cpp exceptions never escape.
std::vector<ConfigError> loadYaml(std::string_view yaml_text, Config* out);
std::vector<ConfigError> loadYamlFile(const std::string& path, Config* out);

// loadYaml into a default Config, then validate(), reporting both like buildConfig does for a
// file (validator messages that only repeat a loader error are left out). For tests and tools.
std::vector<ConfigError> loadAndValidateYaml(std::string_view yaml_text, Config* out);

// Whole-config checks after file and flags are merged: at least one shard, at most 16384,
// duplicate names or addresses, slot ranges in 0..16383, overlapping or uncovered slots (when any
// shard lists slots, every shard must), workers >= 0, limits > 0, a known log level.
std::vector<ConfigError> validate(const Config& config);

// Parses "h:p,h:p,..." ("[::1]:p" for IPv6) into shards named shard0.. with no explicit slots.
std::vector<ConfigError> parseShardList(std::string_view list, std::vector<ShardConfig>* out);

// The command line. Flags override the file; the proxy runs from flags alone when no --config.
struct CommandLine {
  std::string config_path;    // --config FILE (or -c FILE)
  bool check_config = false;  // --check-config FILE: validate only, print errors, exit 0 or 2
  bool show_help = false;     // --help
  bool show_version = false;  // --version
  // Overrides; empty / negative = not given.
  std::string listen_host;     // --listen HOST (or HOST:PORT)
  int port = -1;               // --port N (0: no TCP listener)
  std::string listen_unix;     // --listen unix:PATH
  int unix_perm = -1;          // --unix-perm OCTAL
  int workers = -1;            // --workers N
  std::string shards;          // --shards h:p,h:p,...
  std::string cluster;         // --cluster h:p,h:p,...: Redis Cluster seeds (backend.mode cluster)
  std::string log_level;       // --log-level LEVEL
  std::string log_file;        // --log-file PATH
  std::string pidfile;         // --pidfile PATH
  std::string metrics_listen;  // --metrics-listen HOST:PORT, or "off" for no metrics endpoint
  std::string twemproxy_config;  // --twemproxy-config FILE: a nutcracker.yml instead of --config
  std::string pool;              // --pool NAME: the pool of the nutcracker.yml to serve
  bool no_io_uring = false;      // --no-io-uring: io_uring false
  // --tls-* and --backend-tls-* flags in the order given: (flag, value), applied over the file's
  // tls and backend.tls keys ("" for the flags that take no value).
  std::vector<std::pair<std::string, std::string>> tls_flags;

  // The file a reload re-reads: --config's or --twemproxy-config's ("" when run from flags).
  const std::string& configFile() const {
    return twemproxy_config.empty() ? config_path : twemproxy_config;
  }
};

std::vector<ConfigError> parseCommandLine(int argc, const char* const* argv, CommandLine* out);
std::string usage();  // text printed by --help

// Loads the file named by the command line (if any), applies the overrides and validates.
std::vector<ConfigError> buildConfig(const CommandLine& cmdline, Config* out);

}  // namespace sp::config
