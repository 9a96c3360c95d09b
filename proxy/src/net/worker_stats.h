// Per-worker statistics, declared once: the X-macro lists below generate the per-worker structs
// (WorkerStats, ShardStats) and drive the Prometheus families that control/stats_collector.cc
// builds at scrape time (STYLE.md habit 6). Every field is written only by its worker thread and
// read by INFO and the scrape from any thread (sp::Counter: relaxed atomics, no lock prefix).
// Fields on the request path are metrics::HotCounter, compiled out with SHARDPROXY_METRICS=0; rare
// events are sp::Counter in both builds. Labels are bounded: per shard (and role), per command
// class, per result, per reason; never per key or per client.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "core/counter.h"
#include "metrics/hot_counter.h"
#include "metrics/latency_histogram.h"
#include "resp/command_table.h"
#include "resp/errors.h"
#include "resp/parse_status.h"

namespace sp::net {

using metrics::HotCounter;

enum class BackendState : uint8_t { kConnecting, kUp, kDown, kEjected };

const char* backendStateName(BackendState state);

// X(field, storage, type, Prometheus name, help, label, label value). Rows that share a name form
// one family (the first row's help is the family's); name "" = INFO only, not exported; type is
// kCounter or kGauge.
#define SP_WORKER_METRICS(X)                                                                   \
  X(connections_open, Counter, kGauge, "shardproxy_client_connections",                        \
    "Client connections open now", "", "")                                                     \
  X(connections_accepted, Counter, kCounter, "shardproxy_client_connections_accepted_total",   \
    "Client connections accepted", "", "")                                                     \
  X(connections_rejected, Counter, kCounter, "shardproxy_client_connections_rejected_total",   \
    "Client connections refused with -ERR max number of clients reached: limits.max_clients "  \
    "(as far as the open-files limit allows) was reached, or accept ran out of descriptors",   \
    "", "")                                                                                    \
  X(accept_fd_exhausted, Counter, kCounter, "shardproxy_client_accept_fd_exhausted_total",     \
    "Client connections taken on the spare descriptor and refused because the process had "    \
    "run out of file descriptors (EMFILE/ENFILE); also counted as rejected",                   \
    "", "")                                                                                    \
  X(auth_failures, Counter, kCounter, "shardproxy_client_auth_failures_total",                 \
    "Failed AUTH and HELLO ... AUTH attempts; past 3 on a connection each further attempt "    \
    "there is answered after a growing delay",                                                 \
    "", "")                                                                                    \
  X(closed_output_limit, Counter, kCounter, "", "", "", "")                                    \
  X(commands, HotCounter, kCounter, "", "", "", "")                                            \
  X(commands_local, HotCounter, kCounter, "", "", "", "")                                      \
  X(commands_split, HotCounter, kCounter, "shardproxy_split_requests_total",                   \
    "Multi-key requests split over several shards and merged", "", "")                         \
  X(commands_refused, Counter, kCounter, "", "", "", "")                                       \
  X(reads_paused, Counter, kCounter, "shardproxy_client_reads_paused_total",                   \
    "Times reading from a client paused at limits.max_inflight_per_client or a large output "  \
    "backlog",                                                                                 \
    "", "")                                                                                    \
  X(client_reads, HotCounter, kCounter, "", "", "", "")                                        \
  X(client_writes, HotCounter, kCounter, "", "", "", "")                                       \
  X(io_uring_workers, Counter, kGauge, "shardproxy_io_uring_workers",                          \
    "Workers sending client writes through io_uring (1 each; 0: send(2), as with "             \
    "io_uring: false or a kernel that refuses it)",                                            \
    "", "")                                                                                    \
  X(ring_submits, Counter, kCounter, "shardproxy_client_write_batches_total",                  \
    "io_uring submissions of client writes: one system call for a loop turn's writes", "", "") \
  X(ring_writes, Counter, kCounter, "shardproxy_client_batched_writes_total",                  \
    "Client writes sent in io_uring submissions", "", "")                                      \
  X(io_uring_read_workers, Counter, kGauge, "shardproxy_io_uring_read_workers",                \
    "Workers reading plain client and shard sockets through io_uring (1 each; 0: libuv's "     \
    "reads)",                                                                                  \
    "", "")                                                                                    \
  X(ring_reads, Counter, kCounter, "shardproxy_io_uring_reads_total",                          \
    "Socket reads completed through io_uring, without a read system call", "", "")             \
  X(bytes_in, HotCounter, kCounter, "shardproxy_client_received_bytes_total",                  \
    "Bytes read from client connections", "", "")                                              \
  X(bytes_out, HotCounter, kCounter, "shardproxy_client_sent_bytes_total",                     \
    "Bytes written to client connections", "", "")                                             \
  X(slow_requests, Counter, kCounter, "shardproxy_slow_requests_total",                        \
    "Requests slower than slowlog.threshold_us (each one is recorded in the slow log)", "", "")

// Per shard, per worker; exported with labels shard="<name>" and role="primary"|"replica".
#define SP_SHARD_METRICS(X)                                                                    \
  X(requests, HotCounter, kCounter, "shardproxy_backend_requests_total",                       \
    "Requests and split fragments sent to the shard", "", "")                                  \
  X(errors, Counter, kCounter, "shardproxy_backend_errors_total",                              \
    "Backend failures by kind: connection (a request failed because its connection failed), "  \
    "reply (the shard answered an error reply)",                                               \
    "kind", "connection")                                                                      \
  X(reply_errors, Counter, kCounter, "shardproxy_backend_errors_total", "", "kind", "reply")   \
  X(timeouts, Counter, kCounter, "shardproxy_backend_timeouts_total",                          \
    "Connections recycled because no byte moved for backend.timeout_ms (stalled)", "", "")     \
  X(connects, Counter, kCounter, "shardproxy_backend_connects_total",                          \
    "Backend connection attempts by result", "result", "ok")                                   \
  X(connect_failures, Counter, kCounter, "shardproxy_backend_connects_total", "", "result",    \
    "failed")                                                                                  \
  X(reconnects, Counter, kCounter, "shardproxy_backend_reconnects_total",                      \
    "Backend connections re-established after they were lost", "", "")                         \
  X(connections_up, Counter, kGauge, "shardproxy_backend_connections",                         \
    "Backend connections by state: up, ejected, down (connecting or waiting to reconnect)",    \
    "state", "up")                                                                             \
  X(ejected, Counter, kGauge, "shardproxy_backend_connections", "", "state", "ejected")        \
  X(inflight, HotCounter, kGauge, "shardproxy_backend_inflight_requests",                      \
    "Requests sent to the shard and not yet answered", "", "")                                 \
  X(ping_failures, Counter, kCounter, "shardproxy_backend_health_check_failures_total",        \
    "Health-check PINGs answered with an error", "", "")                                       \
  X(ping_busy, Counter, kCounter, "shardproxy_backend_busy_total",                             \
    "Health-check PINGs answered -BUSY or -LOADING: alive but busy, not a failure", "", "")    \
  X(ejections, Counter, kCounter, "shardproxy_backend_ejections_total",                        \
    "Times a connection was ejected after backend.failure_limit consecutive failures", "", "") \
  X(replica_reads, HotCounter, kCounter, "shardproxy_backend_replica_reads_total",             \
    "Read-only requests sent to a replica", "", "")                                            \
  X(moved, Counter, kCounter, "shardproxy_redirects_total",                                    \
    "MOVED and ASK redirects, and TRYAGAIN replies, answered by shards", "type", "moved")      \
  X(ask, Counter, kCounter, "shardproxy_redirects_total", "", "type", "ask")                   \
  X(tryagain, Counter, kCounter, "shardproxy_redirects_total", "", "type", "tryagain")

// The command classes of shardproxy_requests_total and shardproxy_request_duration_seconds.
enum class CommandClass : uint8_t { kRead, kWrite, kMultiKey, kLocal, kAdmin, kOther };
inline constexpr size_t kCommandClasses = 6;
inline constexpr std::array<std::string_view, kCommandClasses> kCommandClassNames = {
    "read", "write", "multikey", "local", "admin", "other"};
// read: Redis "readonly"; write: Redis "write"; multikey: split-capable (MGET, MSET, DEL, ...);
// local: answered by the proxy; admin: PROXY ...; other: the rest (EVAL, unknown commands, ...).
// Inline: called once per request.
inline CommandClass commandClass(const resp::CommandInfo* cmd) {
  if (cmd == nullptr) {
    return CommandClass::kOther;
  }
  if (cmd->has(resp::kCmdProxy)) {
    return CommandClass::kAdmin;
  }
  if (cmd->has(resp::kCmdLocal)) {
    return CommandClass::kLocal;
  }
  if (cmd->has(resp::kCmdSplit)) {
    return CommandClass::kMultiKey;
  }
  if (cmd->has(resp::kCmdWrite)) {
    return CommandClass::kWrite;
  }
  if (cmd->has(resp::kCmdReadOnly)) {
    return CommandClass::kRead;
  }
  return CommandClass::kOther;
}

// How a request ended: ok; error (the shard, or the proxy for a local command, answered an error
// reply); unavailable (its shard was down, ejected or failed it); refused (unknown, unsupported,
// wrong arity, CROSSSLOT).
enum class RequestResult : uint8_t { kOk, kError, kUnavailable, kRefused };
inline constexpr size_t kRequestResults = 4;
inline constexpr std::array<std::string_view, kRequestResults> kRequestResultNames = {
    "ok", "error", "unavailable", "refused"};

// Why a client connection closed (ClientSession::close's reason): the metric label, and the log
// text with the detail its caller adds (a socket error, "killed by CLIENT KILL").
enum class CloseReason : uint8_t {
  kClientClosed,
  kQuit,
  kOutputLimit,
  kMaxClients,
  kShutdown,
  kOutOfMemory,
  kIdleTimeout,
  kError,
  kTlsError
};
inline constexpr size_t kCloseReasons = 9;
inline constexpr std::array<std::string_view, kCloseReasons> kCloseReasonNames = {
    "client_closed", "quit",         "output_limit", "max_clients", "shutdown",
    "out_of_memory", "idle_timeout", "error",        "tls_error"};
// kQuit: QUIT, or after a protocol error reply; kMaxClients: refused at accept; kOutOfMemory: a
// request or reply that the memory left could not hold; kIdleTimeout: limits.timeout; kError:
// socket errors, CLIENT KILL, a lost subscriber connection; kTlsError: a failed TLS handshake
// (no certificate, an untrusted one, plaintext on the TLS port) or a broken TLS record.
inline constexpr std::array<std::string_view, kCloseReasons> kCloseReasonTexts = {
    "client closed", "quit",     "output buffer limit",
    "refused",       "shutdown", "out of memory",
    "idle timeout",  "error",    "TLS error"};

inline constexpr size_t kParseErrors = static_cast<size_t>(resp::ParseError::kTooDeep) + 1;

// Protocol errors by reason (resp::ParseError). add() with no reason counts a stream error that
// is not a parse error (a backend reply without a request), exported as reason="unexpected_reply".
class ProtocolErrors {
 public:
  void add(resp::ParseError reason = resp::ParseError::kNone) {
    by_reason_[static_cast<size_t>(reason)].add();
  }
  uint64_t get(resp::ParseError reason) const {
    return by_reason_[static_cast<size_t>(reason)].get();
  }
  uint64_t get() const {
    uint64_t total = 0;
    for (const Counter& c : by_reason_) {
      total += c.get();
    }
    return total;
  }
  static std::string_view reasonName(resp::ParseError reason);

 private:
  std::array<Counter, kParseErrors> by_reason_;
};

// INFO commandstats and latencystats: one entry per command of the table (subcommands included),
// per worker. calls and usec come from the request's completion (the proxy-side duration, parse
// to complete reply); failed counts error replies. Compiled out with SHARDPROXY_METRICS=0.
struct CommandStats {
  HotCounter calls;
  HotCounter usec;
  Counter failed;
  std::array<HotCounter, metrics::kLatencyBuckets> buckets;  // metrics::kLatencyBoundsUs
};

class CommandStatsTable {
 public:
  CommandStatsTable();

  // The entry of `cmd` (a command of resp::CommandTable), nullptr for none. No allocation.
  CommandStats* find(const resp::CommandInfo* cmd) {
    const int32_t i = indexOf(cmd);
    return i < 0 ? nullptr : &stats_[static_cast<size_t>(i)];
  }
  // The request path: one call, or one failure (an error reply).
  void observe(const resp::CommandInfo* cmd, uint64_t micros, size_t bucket, bool failed) {
    if constexpr (!metrics::kMetricsEnabled) {
      return;
    }
    if (CommandStats* s = find(cmd)) {
      s->calls.add();
      s->usec.add(micros);
      s->buckets[bucket].add();
      if (failed) {
        s->failed.add();
      }
    }
  }

  // Any thread: fn(command, stats) for every command of the table, in the table's order.
  template <typename Fn>
  void forEach(Fn fn) const {
    for (size_t i = 0; i < size_; ++i) {
      fn(*commands_[i], static_cast<const CommandStats&>(stats_[i]));
    }
  }
  size_t size() const { return size_; }

 private:
  int32_t indexOf(const resp::CommandInfo* cmd) const;

  const resp::CommandInfo* const* commands_;  // shared, immutable: every command of the table
  const int32_t* slots_;                      // pointer-keyed open addressing into commands_
  size_t size_ = 0;
  std::unique_ptr<CommandStats[]> stats_;
};

// INFO errorstats: error replies sent to clients, by their code (the first word: ERR, WRONGTYPE,
// MOVED, ...). The worker writes; any thread reads. Like redis-server, at most kMaxCodes distinct
// codes are tracked; errors of a new code past that are counted in total() only.
class ErrorCodes {
 public:
  static constexpr size_t kMaxCodes = 128;
  static constexpr size_t kMaxCodeLen = 31;

  // `reply` is an error reply ("-CODE message\r\n" or RESP3 "!len\r\nCODE message\r\n").
  void count(std::string_view reply);
  uint64_t total() const { return total_.get(); }
  // Any thread: fn(code, count) for every code seen, in order of first appearance.
  template <typename Fn>
  void forEach(Fn fn) const {
    const size_t used = used_.load(std::memory_order_acquire);
    for (size_t i = 0; i < used; ++i) {
      fn(std::string_view(entries_[i].code, entries_[i].len), entries_[i].count.get());
    }
  }

 private:
  struct Entry {
    char code[kMaxCodeLen + 1] = {};
    uint8_t len = 0;
    Counter count;
  };
  std::array<Entry, kMaxCodes> entries_;
  std::atomic<size_t> used_{0};  // entries published (release) to readers
  Counter total_;
};

#define SP_DECLARE_FIELD(field, storage, type, name, help, label, value) storage field;

struct ShardStats {
  SP_SHARD_METRICS(SP_DECLARE_FIELD)
  metrics::LatencyHistogram duration;  // parse of the request -> the shard's reply
};

// One ShardStats per shard name, at a stable address for the worker's lifetime: a BackendConn
// keeps a plain reference, and a reload that keeps, moves or reorders shards keeps their
// counters. Index i is the shard at position i of the worker's current topology.
class ShardStatsTable {
 public:
  ShardStats& operator[](size_t index) { return *current_[index]; }  // the worker thread
  const ShardStats& operator[](size_t index) const { return *current_[index]; }
  size_t size() const { return current_.size(); }

  // The worker thread (at start and on reload): index i now stands for names[i].
  void bind(const std::vector<std::string>& names);

  // Any thread: fn(name, stats) for every shard of the current binding, in order. Holds the
  // table's mutex (which only bind() also takes), so fn must not call back into the table.
  template <typename Fn>
  void forEach(Fn fn) const {
    std::lock_guard<std::mutex> lock(mu_);
    for (size_t i = 0; i < current_.size(); ++i) {
      fn(current_names_[i], static_cast<const ShardStats&>(*current_[i]));
    }
  }

 private:
  mutable std::mutex mu_;
  std::vector<std::unique_ptr<ShardStats>> all_;  // every name ever bound; never freed
  std::vector<std::string> all_names_;
  std::vector<ShardStats*> current_;
  std::vector<std::string> current_names_;
};

struct WorkerStats {
  SP_WORKER_METRICS(SP_DECLARE_FIELD)
  ProtocolErrors protocol_errors_client;
  ProtocolErrors protocol_errors_backend;
  std::array<Counter, kCloseReasons> closed;  // by CloseReason
  // [class][result]; requests parsed = the sum (commands counts them too, for INFO).
  std::array<std::array<HotCounter, kRequestResults>, kCommandClasses> requests;
  std::array<metrics::LatencyHistogram, kCommandClasses> request_duration;  // parse -> reply
  ShardStatsTable shards;              // [shard]: the primary's connections
  ShardStatsTable replica_shards;      // [shard]: all of its replicas' connections
  CommandStatsTable commands_by_name;  // INFO commandstats / latencystats
  ErrorCodes error_codes;              // INFO errorstats
  // The proxy's own error replies by kind (resp/errors.h's catalogue; [kNone] stays 0).
  std::array<Counter, resp::err::kProxyErrors> proxy_errors;

  explicit WorkerStats(const std::vector<std::string>& shard_names) {
    shards.bind(shard_names);
    replica_shards.bind(shard_names);
  }

  void countRequest(CommandClass c, RequestResult r) {
    requests[static_cast<size_t>(c)][static_cast<size_t>(r)].add();
  }
  void countClose(CloseReason why) { closed[static_cast<size_t>(why)].add(); }
  void countProxyError(resp::err::ProxyError kind) {
    if (kind != resp::err::ProxyError::kNone) {
      proxy_errors[static_cast<size_t>(kind)].add();
    }
  }
};

#undef SP_DECLARE_FIELD

}  // namespace sp::net
