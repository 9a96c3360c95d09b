// The proxy's configuration as plain structs with their defaults. conf/proxy.yaml documents every
// key; config/loader.h fills these from YAML and command-line flags.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace sp::config {

struct SlotRange {
  uint16_t first = 0;  // inclusive
  uint16_t last = 0;   // inclusive
};

struct ShardConfig {
  std::string name;  // unique; defaults to "shard<i>" (0-based) when omitted
  std::string host;  // IPv4/IPv6 literal or hostname
  uint16_t port = 0;
  std::vector<SlotRange> slots;  // empty for every shard = even split of the 16384 slots
};

struct Limits {
  uint64_t max_bulk_len = 512ull * 1024 * 1024;  // limits.max_bulk_len
  uint32_t max_array_len = 1024 * 1024;          // limits.max_array_len
  uint32_t max_inline_len = 64 * 1024;           // limits.max_inline_len
  uint32_t max_inflight_per_client = 1024;  // limits.max_inflight_per_client: pause reading past it
  uint64_t client_output_buffer =
      512ull * 1024 * 1024;       // limits.client_output_buffer: close past it
  uint32_t max_clients = 100000;  // limits.max_clients: per proxy, refused past it
};

struct Config {
  std::string listen_host = "127.0.0.1";       // listen.host
  uint16_t listen_port = 6380;                 // listen.port
  int workers = 0;                             // workers: 0 = one per core
  std::vector<ShardConfig> shards;             // shards
  int backend_connections = 1;                 // backend.connections: per worker per shard
  uint32_t backend_connect_timeout_ms = 1000;  // backend.connect_timeout_ms
  uint32_t backend_reconnect_min_ms = 100;     // backend.reconnect_min_ms: first retry delay
  uint32_t backend_reconnect_max_ms = 5000;    // backend.reconnect_max_ms: backoff cap
  uint32_t shutdown_timeout_ms = 5000;  // shutdown_timeout_ms: drain in-flight requests on exit
  Limits limits;
  std::string log_level = "info";  // log_level: trace|debug|info|warn|error|critical|off
};

}  // namespace sp::config
