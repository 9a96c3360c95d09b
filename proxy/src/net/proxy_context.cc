// ProxyContext: published snapshots and per-shard summaries (INFO's text: control/info_report.h).
#include "net/proxy_context.h"

#include <string>

#include "net/worker.h"

namespace sp::net {

void ShardTotals::add(const ShardStats& stats) {
#define SP_ADD_FIELD(field, storage, type, name, help, label, value) field += stats.field.get();
  SP_SHARD_METRICS(SP_ADD_FIELD)
#undef SP_ADD_FIELD
  stats.duration.addTo(&duration);
}

std::string ShardSummary::state() const {
  if (primary.connections_up >= connections_configured) {
    return "up";
  }
  return primary.connections_up == 0 ? "down" : "partial";
}

void ProxyContext::publish(std::shared_ptr<const config::Config> config,
                           route::TopologyPtr topology) {
  std::lock_guard<std::mutex> lock(mu_);
  config_ = std::move(config);
  topology_ = std::move(topology);
}

std::shared_ptr<const config::Config> ProxyContext::config() const {
  std::lock_guard<std::mutex> lock(mu_);
  return config_;
}

route::TopologyPtr ProxyContext::topology() const {
  std::lock_guard<std::mutex> lock(mu_);
  return topology_;
}

void ProxyContext::publishTls(std::shared_ptr<const tls::TlsContext> server,
                              std::shared_ptr<const tls::TlsContext> backend) {
  std::lock_guard<std::mutex> lock(mu_);
  server_tls_ = std::move(server);
  backend_tls_ = std::move(backend);
}

std::shared_ptr<const tls::TlsContext> ProxyContext::serverTls() const {
  std::lock_guard<std::mutex> lock(mu_);
  return server_tls_;
}

std::shared_ptr<const tls::TlsContext> ProxyContext::backendTls() const {
  std::lock_guard<std::mutex> lock(mu_);
  return backend_tls_;
}

std::vector<ShardSummary> ProxyContext::shardSummaries() const {
  const auto cfg = config();
  const auto topo = topology();
  std::vector<ShardSummary> out;
  if (cfg == nullptr || topo == nullptr) {
    return out;
  }
  const auto& shards = topo->shards();
  out.resize(shards.size());
  for (size_t i = 0; i < shards.size(); ++i) {
    out[i].address = shards[i];
    out[i].connections_configured =
        static_cast<uint64_t>(cfg->backend_connections) * workers.size();
    out[i].replica_connections_configured = shards[i].replicas.size() * workers.size();
  }
  for (const auto& r : topo->ranges()) {
    ShardSummary& s = out[r.shard];
    s.slot_count += static_cast<uint32_t>(r.last - r.first + 1);
    s.slots += s.slots.empty() ? "" : " ";
    s.slots += std::to_string(r.first);
    if (r.last != r.first) {
      s.slots += "-" + std::to_string(r.last);
    }
  }
  // A worker may still be bound to the previous topology for a moment after a reload: match
  // shards by name.
  auto find = [&](const std::string& name) -> ShardSummary* {
    for (ShardSummary& s : out) {
      if (s.address.name == name) {
        return &s;
      }
    }
    return nullptr;
  };
  for (const Worker* w : workers) {
    for (ShardSummary& s : out) {
      s.worker_states.push_back("down");
    }
    w->stats().shards.forEach([&](const std::string& name, const ShardStats& stats) {
      if (ShardSummary* s = find(name)) {
        s->primary.add(stats);
        s->worker_states.back() =
            stats.ejected.get() > 0 ? "ejected"
            : stats.connections_up.get() >= static_cast<uint64_t>(cfg->backend_connections)
                ? "up"
                : "down";
      }
    });
    w->stats().replica_shards.forEach([&](const std::string& name, const ShardStats& stats) {
      if (ShardSummary* s = find(name)) {
        s->replica.add(stats);
      }
    });
  }
  return out;
}

}  // namespace sp::net
