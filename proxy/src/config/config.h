// The proxy's configuration as plain structs with their defaults. conf/proxy.yaml documents every
// key; config/loader.h fills these from YAML and command-line flags.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "route/placement.h"
#include "tls/tls_context.h"

namespace sp::config {

struct SlotRange {
  uint16_t first = 0;  // inclusive
  uint16_t last = 0;   // inclusive
};

struct Endpoint {
  std::string host;
  uint16_t port = 0;
};

struct ShardConfig {
  std::string name;         // unique; defaults to "shard<i>" (0-based) when omitted
  bool name_given = false;  // twemproxy ketama hashes the name when given, else "host:port"
  std::string host;         // IPv4/IPv6 literal or hostname; empty when Sentinel supplies it
  uint16_t port = 0;
  // Redis Cluster slots (0..16383; empty for every shard = an even split), or Codis slots
  // (0..1023, every one listed) with placement.kind codis.
  std::vector<SlotRange> slots;
  uint32_t weight = 1;             // shards[i].weight: twemproxy placement's server weight
  std::vector<Endpoint> replicas;  // shards[i].replicas: read-only copies for read_from
  std::string username;            // shards[i].username: ACL user for AUTH (empty: none)
  std::string password;            // shards[i].password: AUTH password (empty: backend.password)
};

// Where read-only commands go when a shard has replicas (backend.read_from).
enum class ReadFrom : uint8_t {
  kPrimary,        // always the primary
  kPreferReplica,  // a live replica (in turn), the primary when none is up
  kReplicaOnly,    // a live replica; fails when none is up
  kRoundRobin,     // primary and live replicas in turn
};

// How keys are placed on the shards (placement): Redis Cluster slots, twemproxy's distributions,
// or Codis's slots (route/placement.h).
struct PlacementConfig {
  route::PlacementKind kind = route::PlacementKind::kClusterSlots;  // placement.kind
  route::Distribution distribution = route::Distribution::kKetama;  // placement.distribution
  route::TwemHash hash = route::TwemHash::kFnv1a_64;                // placement.hash
  std::string hash_tag;    // placement.hash_tag: two characters ("{}"), empty = the whole key
  std::string codis_dump;  // placement.codis_dump: `codis-admin --config-dump` JSON (shards, slots)
};

struct SentinelConfig {
  std::vector<Endpoint> addresses;  // sentinel.addresses: empty = no Sentinel
  std::string master_name_prefix;   // sentinel.master_name_prefix: master = prefix + shard name
  std::string password;             // sentinel.password: AUTH to the sentinels (empty: none)
};

struct Limits {
  uint64_t max_bulk_len = 512ull * 1024 * 1024;  // limits.max_bulk_len
  uint32_t max_array_len = 1024 * 1024;          // limits.max_array_len
  uint32_t max_inline_len = 64 * 1024;           // limits.max_inline_len
  uint32_t max_inflight_per_client = 1024;  // limits.max_inflight_per_client: pause reading past it
  uint64_t client_output_buffer =
      512ull * 1024 * 1024;       // limits.client_output_buffer: close past it
  uint32_t max_clients = 100000;  // limits.max_clients: per proxy, refused past it
  // limits.timeout: close a client idle this many seconds (redis.conf's timeout); 0 = never.
  // Subscribed clients and clients waiting for a reply (a blocking command) are never idle.
  uint32_t timeout = 0;
  // limits.tcp_keepalive: TCP keepalive on client and shard connections, probing after this
  // many idle seconds (redis.conf's tcp-keepalive); 0 = off.
  uint32_t tcp_keepalive = 300;
  // limits.buffer_pool_bytes: capacity of the free buffers each worker keeps at rest (up to
  // BufferPool::kBusyFactor times that while busy), so memory comes back after a burst.
  uint64_t buffer_pool_bytes = 4ull << 20;
};

// A named client user (ACL-lite): AUTH name password, or HELLO 2 AUTH name password.
struct AuthUser {
  std::string name;        // auth.users[i].name: unique, not "default"
  std::string password;    // auth.users[i].password: required
  bool read_only = false;  // auth.users[i].read_only: write commands get -NOPERM
  // auth.users[i].admin: may run the admin commands (session/client_auth.h needsAdmin: FLUSHALL,
  // FLUSHDB, KEYS, CONFIG SET, CLIENT LIST/KILL, INFO shards, PROXY ...)
  bool admin = false;
};

// Client authentication to the proxy. With neither a password nor users every client is the
// default user, with every right; otherwise a client must AUTH before anything but AUTH, HELLO
// and QUIT.
struct AuthConfig {
  std::string password;         // auth.password: requirepass-style password of the default user
  std::vector<AuthUser> users;  // auth.users

  bool required() const { return !password.empty() || !users.empty(); }
};

struct Config {
  std::string listen_host = "127.0.0.1";  // listen.host
  uint16_t listen_port = 6380;            // listen.port; 0 = no TCP listener (listen.unix)
  std::string listen_unix;                // listen.unix: a Unix socket path too ("" = none)
  uint32_t listen_unix_perm = 0;          // listen.unix_perm: its mode; 0 = the umask's
  // tls.listen: a TLS listener beside (or instead of) the plain one: "port" (on listen.host) or
  // "host:port"; tls_port 0 = none. The other tls.* keys are tls_server's.
  std::string tls_host;
  uint16_t tls_port = 0;
  tls::ServerSettings tls_server;
  // backend.tls: TLS to the shards, Cluster nodes and Sentinels (backend.tls.enabled).
  bool backend_tls = false;
  tls::ClientSettings backend_tls_client;
  int workers = 0;                             // workers: 0 = one per core
  std::vector<ShardConfig> shards;             // shards
  PlacementConfig placement;                   // placement
  int backend_connections = 1;                 // backend.connections: per worker per shard
  uint32_t backend_connect_timeout_ms = 1000;  // backend.connect_timeout_ms
  uint32_t backend_reconnect_min_ms = 100;     // backend.reconnect_min_ms: first retry delay
  uint32_t backend_reconnect_max_ms = 5000;    // backend.reconnect_max_ms: backoff cap
  uint32_t backend_timeout_ms = 3000;          // backend.timeout_ms: stall limit (no byte moved)
  // backend.slow_commands / backend.slow_timeout_ms: commands that legitimately run long (scripts,
  // functions, whole-keyspace work); while one is outstanding on a connection, its stall limit is
  // slow_timeout_ms instead of timeout_ms.
  // SCRIPT KILL and FUNCTION KILL wait for the shard's busy-reply-threshold (5 s by default).
  std::vector<std::string> backend_slow_commands = {
      "eval",     "evalsha", "eval_ro", "evalsha_ro",  "fcall",        "fcall_ro",
      "flushall", "flushdb", "keys",    "script kill", "function kill"};
  uint32_t backend_slow_timeout_ms = 60000;
  uint32_t backend_ping_interval_ms = 1000;      // backend.ping_interval_ms: health PING period
  uint32_t backend_failure_limit = 3;            // backend.failure_limit: failures before ejection
  uint32_t backend_retry_timeout_ms = 1000;      // backend.retry_timeout_ms: first ejection length
  uint32_t backend_retry_timeout_max_ms = 2000;  // backend.retry_timeout_max_ms: ejection cap
  ReadFrom read_from = ReadFrom::kPrimary;       // backend.read_from
  std::string backend_username;                  // backend.username: ACL user for every shard
  std::string backend_password;                  // backend.password: AUTH password for every shard
  SentinelConfig sentinel;                       // sentinel
  // backend.mode: "static" (the shards list) or "cluster" (a Redis Cluster found from seeds).
  bool cluster_mode = false;
  std::vector<Endpoint> cluster_seeds;  // backend.cluster_seeds (flag --cluster h:p,h:p)
  uint32_t cluster_refresh_ms = 5000;   // backend.cluster_refresh_ms: CLUSTER SLOTS period
  uint32_t max_redirects = 5;           // backend.max_redirects: MOVED/ASK followed per fragment
  uint32_t shutdown_timeout_ms = 5000;  // shutdown_timeout_ms: drain in-flight requests on exit
  Limits limits;
  std::string log_level = "info";  // log_level (or log.level): trace|debug|...|critical|off
  std::string log_file;            // log.file: append log lines here ("" = stderr); SIGUSR1 reopens
  std::string pidfile;             // pidfile: the process id is written here while it runs
  std::string metrics_listen = "127.0.0.1:9121";  // metrics.listen: host:port of /metrics; "" = off
  // Whether metrics.listen (or --metrics-listen) was given: the default alone may move to a free
  // port nearby when another process (another shardproxy) holds it.
  bool metrics_listen_given = false;
  // metrics.ready_quorum: the percentage of shards that must have a healthy connection in every
  // worker for /readyz to answer 200 (0: ready as soon as the workers run).
  uint32_t ready_quorum_percent = 100;
  uint64_t slowlog_threshold_us = 10000;   // slowlog.threshold_us: slower requests are logged
  uint32_t slowlog_max_len = 128;          // slowlog.max_len: entries kept; 0 = no slow log
  AuthConfig auth;                         // auth
  std::vector<std::string> deny_commands;  // deny_commands: "flushall", "config set", ...
  bool allow_config_set = false;  // allow_config_set: CONFIG SET is sent to every shard (admin)
  // io_uring: each worker reads its plain sockets through its io_uring, waits in io_uring_enter
  // and sends a loop turn's writes through the ring (flag --no-io-uring turns it off); a worker
  // whose kernel refuses it uses libuv and send(2). Kept on reload.
  bool io_uring = true;
  // keyless_scripts: where EVAL/EVALSHA/FCALL with no declared keys run when they may reach the
  // keyspace: "refuse" (an error that asks for the keys), or the name of a shard.
  std::string keyless_scripts = "refuse";
  // What a foreign configuration (--twemproxy-config) said that shardproxy takes another way or
  // ignores: logged once as warnings at start-up and on reload.
  std::vector<std::string> load_notes;
};

}  // namespace sp::config
