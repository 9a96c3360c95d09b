// Target: an endpoint a scenario measures ("shardproxy=127.0.0.1:6380"), with what is known about
// it when shardbench started it itself (its PID for RSS, the shards to flush between runs). And
// LocalDeployment: the local redis-server shards, the shardproxy of this build in front of them
// and, for side-by-side runs, twemproxy over the same shards and one shard on its own.
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "local_servers.h"

namespace sp::bench {

struct Target {
  std::string name;
  Endpoint endpoint;
  pid_t pid = 0;                    // local proxy process (RSS); 0 when unknown
  ChildProcess* process = nullptr;  // local: checked before and after every run
  std::vector<Endpoint> flush;      // FLUSHALL these before runs; empty: FLUSHALL the endpoint
  bool local = false;
};

// "NAME=HOST:PORT" or "HOST:PORT" (named after the address). False with a message otherwise.
bool parseTargetSpec(std::string_view text, Target* out, std::string* error);

struct DeploymentSpec {
  int shards = 4;
  int workers = 0;  // 0: one per CPU (of proxy_cpus when given)
  ServerBinaries binaries;
  std::vector<std::string> proxy_args;
  bool twemproxy = false;  // add "twemproxy" over the same shards
  bool direct = false;     // add "redis-server" (the first shard on its own)
  std::string log_dir;
  CpuList proxy_cpus;  // shardproxy and twemproxy; empty: unpinned
  CpuList shard_cpus;  // the redis-server shards; empty: unpinned
};

// shardproxy flags this build understands that keep parallel proxies from colliding: the
// metrics endpoint is switched off when the binary knows --metrics-listen.
std::vector<std::string> defaultProxyArgs(const std::string& binary);

class LocalDeployment {
 public:
  LocalDeployment() = default;
  ~LocalDeployment() { stop(); }
  LocalDeployment(const LocalDeployment&) = delete;
  LocalDeployment& operator=(const LocalDeployment&) = delete;

  bool start(const DeploymentSpec& spec, std::string* error);
  // shardproxy first (tables show ratios to the first target), then twemproxy, then the shard.
  std::vector<Target> targets() const;
  std::vector<Endpoint> shardEndpoints() const;
  std::string description() const;
  // "shardproxy logged 3 warning or error line(s) ..., the first: ..." for each proxy we started
  // whose log has any: the report shows them next to the numbers.
  std::vector<std::string> logWarnings() const;
  void stop();

 private:
  DeploymentSpec spec_;
  std::vector<std::unique_ptr<LocalServer>> shards_;
  std::unique_ptr<LocalServer> proxy_;
  std::unique_ptr<LocalServer> twemproxy_;
};

}  // namespace sp::bench
