// ProxyContext: published snapshots, per-shard summaries and INFO (redis-cli compatible
// "# Section" blocks of key:value lines, summed over all workers).
#include "net/proxy_context.h"

#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <ctime>

#include "net/worker.h"
#include "resp/command_table.h"

namespace sp::net {
namespace {

void line(std::string& out, std::string_view key, const std::string& value) {
  out.append(key);
  out.push_back(':');
  out.append(value);
  out.append("\r\n");
}

void line(std::string& out, std::string_view key, uint64_t value) {
  line(out, key, std::to_string(value));
}

bool wants(std::string_view section, std::string_view name) {
  return section.empty() || section == "default" || section == "all" || section == "everything" ||
         section == name;
}

std::string hostPort(const std::string& host, uint16_t port) {
  std::string out = host.find(':') != std::string::npos ? "[" + host + "]" : host;
  return out + ":" + std::to_string(port);
}

}  // namespace

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

std::string ProxyContext::info(std::string_view section, bool admin) const {
  std::string out;
  const uint64_t now = static_cast<uint64_t>(std::time(nullptr));
  const auto cfg = config();
  if (wants(section, "server")) {
    utsname uts{};
    uname(&uts);
    out += "# Server\r\n";
    line(out, "redis_version", std::string(resp::CommandTable::redisVersion()));
    line(out, "shardproxy_version", std::string(SHARDPROXY_VERSION));
    line(out, "redis_mode", std::string("standalone"));
    line(out, "os", std::string(uts.sysname) + " " + uts.release + " " + uts.machine);
    line(out, "arch_bits", static_cast<uint64_t>(sizeof(void*) * 8));
    line(out, "multiplexing_api", std::string("libuv"));
    line(out, "process_id", static_cast<uint64_t>(getpid()));
    line(out, "tcp_port", static_cast<uint64_t>(bound_port));
    line(out, "uptime_in_seconds", now - start_time_unix);
    line(out, "workers", static_cast<uint64_t>(workers.size()));
    line(out, "cluster_enabled", std::string("0"));
    line(out, "config_file", config_file);
    line(out, "metrics_port", static_cast<uint64_t>(metrics_port));
    line(out, "metrics_compiled", static_cast<uint64_t>(metrics::kMetricsEnabled ? 1 : 0));
    out += "\r\n";
  }
  if (wants(section, "clients")) {
    uint64_t open = 0;
    for (const Worker* w : workers) {
      open += w->stats().connections_open.get();
    }
    out += "# Clients\r\n";
    line(out, "connected_clients", open);
    line(out, "maxclients",
         std::min<uint64_t>(cfg->limits.max_clients, max_clients.load(std::memory_order_relaxed)));
    for (const Worker* w : workers) {
      line(out, "worker" + std::to_string(w->index()) + "_clients",
           w->stats().connections_open.get());
    }
    out += "\r\n";
  }
  if (wants(section, "stats")) {
    uint64_t accepted = 0, rejected = 0, commands = 0, local = 0, split = 0, refused = 0;
    uint64_t perr_client = 0, perr_backend = 0, out_limit = 0, paused = 0, in = 0, sent = 0;
    uint64_t slow = 0, auth_failures = 0;
    for (const Worker* w : workers) {
      const WorkerStats& s = w->stats();
      accepted += s.connections_accepted.get();
      rejected += s.connections_rejected.get();
      commands += s.commands.get();
      local += s.commands_local.get();
      split += s.commands_split.get();
      refused += s.commands_refused.get();
      perr_client += s.protocol_errors_client.get();
      perr_backend += s.protocol_errors_backend.get();
      out_limit += s.closed_output_limit.get();
      paused += s.reads_paused.get();
      in += s.bytes_in.get();
      sent += s.bytes_out.get();
      slow += s.slow_requests.get();
      auth_failures += s.auth_failures.get();
    }
    out += "# Stats\r\n";
    line(out, "total_connections_received", accepted);
    line(out, "rejected_connections", rejected);
    line(out, "total_commands_processed", commands);
    line(out, "local_commands", local);
    line(out, "split_commands", split);
    line(out, "refused_commands", refused);
    line(out, "client_protocol_errors", perr_client);
    line(out, "backend_protocol_errors", perr_backend);
    line(out, "client_output_limit_disconnections", out_limit);
    line(out, "client_reads_paused", paused);
    line(out, "total_net_input_bytes", in);
    line(out, "total_net_output_bytes", sent);
    line(out, "slow_requests", slow);
    line(out, "acl_access_denied_auth", auth_failures);  // Redis 7.2's name for failed AUTHs
    line(out, "config_reloads_ok", reloads.succeeded.load());
    line(out, "config_reloads_failed", reloads.failed.load());
    uint64_t moved = 0, ask = 0, tryagain = 0;
    for (const ShardSummary& shard : shardSummaries()) {
      moved += shard.primary.moved + shard.replica.moved;
      ask += shard.primary.ask + shard.replica.ask;
      tryagain += shard.primary.tryagain + shard.replica.tryagain;
    }
    line(out, "cluster_moved_redirects", moved);
    line(out, "cluster_ask_redirects", ask);
    line(out, "cluster_tryagain_replies", tryagain);
    out += "\r\n";
  }
  if (wants(section, "keyspace")) {
    out += "# Keyspace\r\n";
    out += keyspace.infoLines();
    out += "\r\n";
  }
  if (admin && wants(section, "shards")) {
    out += "# Shards\r\n";
    for (const ShardSummary& s : shardSummaries()) {
      const ShardTotals& t = s.primary;
      std::string per_worker;
      for (size_t w = 0; w < s.worker_states.size(); ++w) {
        per_worker += ",worker" + std::to_string(workers[w]->index()) + "=" + s.worker_states[w];
      }
      line(out, s.address.name,
           "addr=" + hostPort(s.address.host, s.address.port) + ",state=" + s.state() +
               ",connections_up=" + std::to_string(t.connections_up) + "/" +
               std::to_string(s.connections_configured) + ",slots=" + s.slots +
               ",requests=" + std::to_string(t.requests) + ",errors=" + std::to_string(t.errors) +
               ",inflight=" + std::to_string(t.inflight) +
               ",connects=" + std::to_string(t.connects) + ",connect_failures=" +
               std::to_string(t.connect_failures) + ",timeouts=" + std::to_string(t.timeouts) +
               ",ejections=" + std::to_string(t.ejections) +
               ",ping_failures=" + std::to_string(t.ping_failures) +
               ",ping_busy=" + std::to_string(t.ping_busy) + per_worker);
      if (!s.address.replicas.empty()) {
        std::string addrs;
        for (const auto& rep : s.address.replicas) {
          addrs += (addrs.empty() ? "" : " ") + hostPort(rep.host, rep.port);
        }
        line(out, s.address.name + "_replicas",
             "addrs=" + addrs + ",connections_up=" + std::to_string(s.replica.connections_up) +
                 "/" + std::to_string(s.replica_connections_configured) +
                 ",reads=" + std::to_string(s.replica.replica_reads));
      }
    }
    out += "\r\n";
  }
  return out;
}

}  // namespace sp::net
