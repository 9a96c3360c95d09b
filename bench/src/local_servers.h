// Local servers for matrix and scenario runs: redis-server shards, shardproxy and twemproxy
// (Debian's nutcracker) on free loopback ports, started from given binaries and stopped by PID;
// plus the small blocking hiredis helpers the orchestration needs (PING, FLUSHALL, INFO) and
// /proc readings (RSS). Start functions return null with a one-line reason (and the server's
// log tail) when the server exits or never answers.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "child_process.h"

namespace sp::bench {

struct Endpoint {
  std::string host = "127.0.0.1";
  uint16_t port = 0;
  std::string text() const { return host + ":" + std::to_string(port); }
};

// "host:port" or "[v6]:port"; false with a message otherwise.
bool parseEndpoint(std::string_view text, Endpoint* out, std::string* error);

// A port that was free on 127.0.0.1 a moment ago (bound to port 0, read back, closed).
uint16_t freeLoopbackPort();

// One blocking command with hiredis (connect and reply timeouts in ms). The reply rendered as
// text ("PONG", bulk payload, "(integer) 3", "(nil)"); false with a message for a connection
// failure or an error reply.
bool redisCall(const Endpoint& ep, const std::vector<std::string>& argv, std::string* reply,
               std::string* error, int timeout_ms = 2000);
// The value of `key` in INFO text ("connected_clients:12" -> "12"), "" when absent.
std::string infoValue(std::string_view info, std::string_view key);
// VmRSS of a process in kB from /proc/<pid>/status; -1 when unknown.
long processRssKb(pid_t pid);

// A server we started: its endpoint and process.
class LocalServer {
 public:
  LocalServer(std::string name, Endpoint ep, std::unique_ptr<ChildProcess> process)
      : name_(std::move(name)), endpoint_(std::move(ep)), process_(std::move(process)) {}
  const std::string& name() const { return name_; }
  const Endpoint& endpoint() const { return endpoint_; }
  ChildProcess& process() { return *process_; }
  pid_t pid() const { return process_->pid(); }
  void stop() { process_->stop(); }

 private:
  std::string name_;
  Endpoint endpoint_;
  std::unique_ptr<ChildProcess> process_;
};

struct ServerBinaries {
  std::string redis_server = "/usr/bin/redis-server";
  std::string shardproxy;  // default: defaultProxyBinary()
  std::string nutcracker = "/usr/sbin/nutcracker";
};

// The shardproxy of this build: <build>/proxy/shardproxy next to <build>/bench/shardbench (or in
// the same folder, for an installed pair); "" when neither exists.
std::string defaultProxyBinary();

// A redis-server with no persistence on a free port, logging to <log_dir>/<name>.log. Each
// start function pins its server to `cpus` unless that is empty.
std::unique_ptr<LocalServer> startRedis(const std::string& binary, const std::string& name,
                                        const std::string& log_dir, std::string* error,
                                        const CpuList& cpus = {});

// shardproxy --workers N --shards LIST on a free port. Ready once PING answers and GETs of 200
// spread keys all get replies (every shard connection is up). `extra_args` are passed through.
std::unique_ptr<LocalServer> startProxy(const std::string& binary, const std::string& name,
                                        const std::vector<Endpoint>& shards, int workers,
                                        const std::vector<std::string>& extra_args,
                                        const std::string& log_dir, std::string* error,
                                        const CpuList& cpus = {});

// nutcracker over the same shards: redis protocol, crc16 over the {hash tag}, modula
// distribution, one connection per shard, no ejection.
std::unique_ptr<LocalServer> startTwemproxy(const std::string& binary, const std::string& name,
                                            const std::vector<Endpoint>& shards,
                                            const std::string& log_dir, std::string* error,
                                            const CpuList& cpus = {});

// "NAME logged N warning or error line(s) (logs/NAME.log); the first: ..." when the log of the
// server NAME in log_dir has lines that report a warning or an error ("[warning]", "[error]",
// "[critical]" as spdlog writes them); nullopt when it has none.
std::optional<std::string> logWarningSummary(const std::string& log_dir, const std::string& name);

// FLUSHALL on every server; false with the first failure.
bool flushAll(const std::vector<Endpoint>& servers, std::string* error);

}  // namespace sp::bench
