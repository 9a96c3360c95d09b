// Target specs and the local deployment.
#include "target.h"

#include "machine_info.h"

namespace sp::bench {
namespace {

int defaultWorkers(const DeploymentSpec& spec) {
  if (spec.workers > 0) {
    return spec.workers;
  }
  return spec.proxy_cpus.empty() ? static_cast<int>(onlineCpus())
                                 : static_cast<int>(spec.proxy_cpus.size());
}

}  // namespace

bool parseTargetSpec(std::string_view text, Target* out, std::string* error) {
  Target t;
  const size_t eq = text.find('=');
  std::string_view address = text;
  if (eq != std::string_view::npos) {
    t.name = std::string(text.substr(0, eq));
    address = text.substr(eq + 1);
    if (t.name.empty()) {
      *error = "empty target name in '" + std::string(text) + "'";
      return false;
    }
  }
  if (!parseEndpoint(address, &t.endpoint, error)) {
    return false;
  }
  if (t.name.empty()) {
    t.name = t.endpoint.text();
  }
  *out = std::move(t);
  return true;
}

std::vector<std::string> defaultProxyArgs(const std::string& binary) {
  std::vector<std::string> args = {"--log-level", "warn"};
  if (helpOf(binary).find("--metrics-listen") != std::string::npos) {
    args.insert(args.end(), {"--metrics-listen", "off"});
  }
  return args;
}

bool LocalDeployment::start(const DeploymentSpec& spec, std::string* error) {
  spec_ = spec;
  for (int i = 0; i < spec.shards; ++i) {
    auto s = startRedis(spec.binaries.redis_server, "shard" + std::to_string(i), spec.log_dir,
                        error, spec.shard_cpus);
    if (s == nullptr) {
      stop();
      return false;
    }
    shards_.push_back(std::move(s));
  }
  const std::vector<Endpoint> shards = shardEndpoints();
  if (spec.binaries.shardproxy.empty()) {
    *error = "no shardproxy binary: build it (target shardproxy) or pass --proxy-bin";
    stop();
    return false;
  }
  const int workers = defaultWorkers(spec);
  std::vector<std::string> args = defaultProxyArgs(spec.binaries.shardproxy);
  args.insert(args.end(), spec.proxy_args.begin(), spec.proxy_args.end());
  proxy_ = startProxy(spec.binaries.shardproxy, "shardproxy", shards, workers, args, spec.log_dir,
                      error, spec.proxy_cpus);
  if (proxy_ == nullptr) {
    stop();
    return false;
  }
  if (spec.twemproxy) {
    twemproxy_ = startTwemproxy(spec.binaries.nutcracker, "twemproxy", shards, spec.log_dir, error,
                                spec.proxy_cpus);
    if (twemproxy_ == nullptr) {
      stop();
      return false;
    }
  }
  return true;
}

std::vector<Target> LocalDeployment::targets() const {
  std::vector<Target> out;
  const std::vector<Endpoint> shards = shardEndpoints();
  if (proxy_ != nullptr) {
    Target t;
    t.name = "shardproxy";
    t.endpoint = proxy_->endpoint();
    t.pid = proxy_->pid();
    t.process = &proxy_->process();
    t.flush = shards;
    t.local = true;
    out.push_back(std::move(t));
  }
  if (twemproxy_ != nullptr) {
    Target t;
    t.name = "twemproxy";
    t.endpoint = twemproxy_->endpoint();
    t.pid = twemproxy_->pid();
    t.process = &twemproxy_->process();
    t.flush = shards;
    t.local = true;
    out.push_back(std::move(t));
  }
  if (spec_.direct && !shards_.empty()) {
    Target t;
    t.name = "redis-server";
    t.endpoint = shards_.front()->endpoint();
    t.process = &shards_.front()->process();
    t.flush = shards;
    t.local = true;
    out.push_back(std::move(t));
  }
  return out;
}

std::vector<Endpoint> LocalDeployment::shardEndpoints() const {
  std::vector<Endpoint> out;
  for (const auto& s : shards_) {
    out.push_back(s->endpoint());
  }
  return out;
}

std::string LocalDeployment::description() const {
  const int workers = defaultWorkers(spec_);
  std::string text = std::to_string(spec_.shards) + " local redis-server shards (" +
                     versionOf(spec_.binaries.redis_server) + "); shardproxy --workers " +
                     std::to_string(workers) + " (" + spec_.binaries.shardproxy + ")";
  if (twemproxy_ != nullptr) {
    text += "; twemproxy (" + spec_.binaries.nutcracker + ", crc16 modula, 1 connection/shard)";
  }
  if (spec_.direct) {
    text += "; redis-server = shard 0 on its own";
  }
  return text;
}

std::vector<std::string> LocalDeployment::logWarnings() const {
  // The proxies' logs only: redis-server logs its start-up notes at the warning level.
  const std::vector<const LocalServer*> servers = {proxy_.get(), twemproxy_.get()};
  std::vector<std::string> out;
  for (const LocalServer* server : servers) {
    if (server == nullptr) {
      continue;
    }
    if (auto warning = logWarningSummary(spec_.log_dir, server->name())) {
      out.push_back(std::move(*warning));
    }
  }
  return out;
}

void LocalDeployment::stop() {
  if (twemproxy_ != nullptr) {
    twemproxy_->stop();
  }
  if (proxy_ != nullptr) {
    proxy_->stop();
  }
  for (auto& s : shards_) {
    s->stop();
  }
}

}  // namespace sp::bench
