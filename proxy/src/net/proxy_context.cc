// INFO: redis-cli compatible "# Section" blocks of key:value lines, summed over all workers.
#include "net/proxy_context.h"

#include <sys/utsname.h>
#include <unistd.h>

#include <ctime>

#include "backend/backend_conn.h"
#include "net/worker.h"

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

}  // namespace

std::string ProxyContext::info(std::string_view section) const {
  std::string out;
  const uint64_t now = static_cast<uint64_t>(std::time(nullptr));
  if (wants(section, "server")) {
    utsname uts{};
    uname(&uts);
    out += "# Server\r\n";
    line(out, "redis_version", std::string("7.0.0"));
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
    out += "\r\n";
  }
  if (wants(section, "clients")) {
    uint64_t open = 0;
    for (const Worker* w : workers) {
      open += w->stats().connections_open.get();
    }
    out += "# Clients\r\n";
    line(out, "connected_clients", open);
    line(out, "maxclients", static_cast<uint64_t>(config.limits.max_clients));
    for (const Worker* w : workers) {
      line(out, "worker" + std::to_string(w->index()) + "_clients",
           w->stats().connections_open.get());
    }
    out += "\r\n";
  }
  if (wants(section, "stats")) {
    uint64_t accepted = 0, rejected = 0, commands = 0, local = 0, split = 0, refused = 0;
    uint64_t perr_client = 0, perr_backend = 0, out_limit = 0, paused = 0, in = 0, sent = 0;
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
    out += "\r\n";
  }
  if (wants(section, "shards")) {
    out += "# Shards\r\n";
    const auto ranges = topology->ranges();
    const auto& shards = topology->shards();
    for (size_t i = 0; i < shards.size(); ++i) {
      uint64_t requests = 0, errors = 0, up = 0, inflight = 0, connects = 0, failures = 0;
      uint64_t timeouts = 0, ejections = 0, ping_failures = 0;
      std::string per_worker;
      for (const Worker* w : workers) {
        const ShardStats& s = w->stats().shards[i];
        requests += s.requests.get();
        errors += s.errors.get();
        up += s.connections_up.get();
        inflight += s.inflight.get();
        connects += s.connects.get();
        failures += s.connect_failures.get();
        timeouts += s.timeouts.get();
        ejections += s.ejections.get();
        ping_failures += s.ping_failures.get();
        per_worker += per_worker.empty() ? "" : ",";
        per_worker += "worker" + std::to_string(w->index()) + "=" +
                      (s.ejected.get() > 0 ? "ejected"
                       : s.connections_up.get() == static_cast<uint64_t>(config.backend_connections)
                           ? "up"
                           : "down");
      }
      const uint64_t total =
          static_cast<uint64_t>(config.backend_connections) * static_cast<uint64_t>(workers.size());
      std::string slots;
      for (const auto& r : ranges) {
        if (r.shard == i) {
          if (!slots.empty()) {
            slots += ' ';
          }
          slots += std::to_string(r.first);
          if (r.last != r.first) {
            slots += "-" + std::to_string(r.last);
          }
        }
      }
      const auto& sh = shards[i];
      std::string addr = sh.host.find(':') != std::string::npos ? "[" + sh.host + "]" : sh.host;
      addr += ":" + std::to_string(sh.port);
      line(out, sh.name,
           "addr=" + addr + ",state=" + (up == total ? "up" : (up == 0 ? "down" : "partial")) +
               ",connections_up=" + std::to_string(up) + "/" + std::to_string(total) +
               ",slots=" + slots + ",requests=" + std::to_string(requests) +
               ",errors=" + std::to_string(errors) + ",inflight=" + std::to_string(inflight) +
               ",connects=" + std::to_string(connects) +
               ",connect_failures=" + std::to_string(failures) +
               ",timeouts=" + std::to_string(timeouts) + ",ejections=" + std::to_string(ejections) +
               ",ping_failures=" + std::to_string(ping_failures) + "," + per_worker);
      if (!sh.replicas.empty()) {
        uint64_t replica_up = 0, replica_reads = 0;
        for (const Worker* w : workers) {
          replica_up += w->stats().replica_shards[i].connections_up.get();
          replica_reads += w->stats().replica_shards[i].replica_reads.get();
        }
        std::string addrs;
        for (const auto& rep : sh.replicas) {
          addrs += (addrs.empty() ? "" : " ") + rep.host + ":" + std::to_string(rep.port);
        }
        line(out, sh.name + "_replicas",
             "addrs=" + addrs + ",connections_up=" + std::to_string(replica_up) + "/" +
                 std::to_string(sh.replicas.size() * workers.size()) +
                 ",reads=" + std::to_string(replica_reads));
      }
    }
    out += "\r\n";
  }
  return out;
}

}  // namespace sp::net
