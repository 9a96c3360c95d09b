// Liveness and readiness (health.h).
#include "net/health.h"

#include <uv.h>

#include <map>
#include <vector>

#include "net/proxy_context.h"
#include "net/worker.h"

namespace sp::net {

HealthStatus liveness(const ProxyContext& context, uint64_t now_ms) {
  HealthStatus out;
  std::string causes;
  for (const Worker* w : context.workers) {
    const uint64_t beat = w->heartbeatMs();
    if (beat == 0) {
      causes += "worker " + std::to_string(w->index()) + " has not started its loop\n";
    } else if (now_ms > beat + kWorkerStuckMs) {
      causes += "worker " + std::to_string(w->index()) + "'s loop has not turned for " +
                std::to_string(now_ms - beat) + " ms\n";
    }
  }
  const std::string workers =
      std::to_string(context.workers.size()) + " worker" + (context.workers.size() == 1 ? "" : "s");
  out.ok = causes.empty() && !context.workers.empty();
  out.text = out.ok ? "ok: " + workers + " serving\n" : "not serving: " + workers + "\n" + causes;
  return out;
}

HealthStatus liveness(const ProxyContext& context) {
  return liveness(context, uv_hrtime() / 1000000);
}

HealthStatus readiness(const ProxyContext& context) {
  const auto config = context.config();
  const auto topology = context.topology();
  const size_t shards = topology->shardCount();
  // shard index -> the workers without a usable connection to it
  std::vector<std::vector<int>> missing(shards);
  std::map<std::string, size_t> index;
  for (size_t s = 0; s < shards; ++s) {
    index[topology->shards()[s].name] = s;
  }
  for (const Worker* w : context.workers) {
    std::vector<bool> usable(shards, false);
    w->stats().shards.forEach([&](const std::string& name, const ShardStats& stats) {
      auto it = index.find(name);
      if (it != index.end() && stats.connections_up.get() > 0 && stats.ejected.get() == 0) {
        usable[it->second] = true;
      }
    });
    for (size_t s = 0; s < shards; ++s) {
      if (!usable[s]) {
        missing[s].push_back(w->index());
      }
    }
  }
  size_t ready = 0;
  for (const auto& m : missing) {
    ready += m.empty() ? 1 : 0;
  }
  const size_t needed = (shards * config->ready_quorum_percent + 99) / 100;
  HealthStatus out;
  out.ok = !context.workers.empty() && ready >= needed;
  const std::string summary = std::to_string(ready) + " of " + std::to_string(shards) +
                              " shards have a healthy connection in every worker, " +
                              std::to_string(needed) + " needed (metrics.ready_quorum " +
                              std::to_string(config->ready_quorum_percent) + "%)";
  out.text = (out.ok ? "ready: " : "not ready: ") + summary + "\n";
  if (context.workers.empty()) {
    out.text += "no worker is running\n";
  }
  for (size_t s = 0; s < shards; ++s) {
    if (missing[s].empty()) {
      continue;
    }
    std::string workers;
    for (int w : missing[s]) {
      workers += (workers.empty() ? "" : ", ") + std::to_string(w);
    }
    out.text += "shard " + topology->shards()[s].label() + ": no healthy connection in worker " +
                workers + "\n";
  }
  return out;
}

}  // namespace sp::net
