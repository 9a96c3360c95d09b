// StatsCollector: catalogue rows -> Prometheus families, summed over workers.
#include "control/stats_collector.h"

#include <string>

#include "metrics/family_set.h"
#include "metrics/process_metrics.h"
#include "net/proxy_context.h"
#include "net/worker.h"
#include "resp/errors.h"

namespace sp::control {

using net::kCloseReasonNames;
using net::kCloseReasons;
using net::kCommandClasses;
using net::kCommandClassNames;
using net::kParseErrors;
using net::kRequestResultNames;
using net::kRequestResults;
using net::ProtocolErrors;
using net::ProxyContext;
using net::ShardKeyspace;
using net::ShardSummary;
using net::ShardTotals;
using net::Worker;
namespace {

using metrics::FamilySet;
using metrics::Label;
using metrics::Type;

constexpr Type kCounter = Type::kCounter;
constexpr Type kGauge = Type::kGauge;

std::vector<Label> labels(std::initializer_list<Label> base, std::string_view name,
                          std::string_view value) {
  std::vector<Label> out(base);
  if (!name.empty()) {
    out.emplace_back(name, value);
  }
  return out;
}

void collectWorkers(const ProxyContext& context, FamilySet* set) {
  const auto& workers = context.workers;
#define SP_EXPORT_WORKER(field, storage, type, name, help, label, value)              \
  if (std::string_view(name) != "") {                                                 \
    uint64_t total = 0;                                                               \
    for (const Worker* w : workers) {                                                 \
      total += w->stats().field.get();                                                \
    }                                                                                 \
    set->add(name, help, type, labels({}, label, value), static_cast<double>(total)); \
  }
  SP_WORKER_METRICS(SP_EXPORT_WORKER)
#undef SP_EXPORT_WORKER

  for (size_t c = 0; c < kCommandClasses; ++c) {
    for (size_t r = 0; r < kRequestResults; ++r) {
      uint64_t total = 0;
      for (const Worker* w : workers) {
        total += w->stats().requests[c][r].get();
      }
      set->add("shardproxy_requests_total",
               "Client requests by command class (read, write, multikey, local, admin, other) and "
               "result (ok, error: an error reply, unavailable: the shard was down or failed it, "
               "refused: unknown, unsupported, wrong arity or CROSSSLOT)",
               kCounter, {{"class", kCommandClassNames[c]}, {"result", kRequestResultNames[r]}},
               static_cast<double>(total));
    }
  }
  for (size_t c = 0; c < kCommandClasses; ++c) {
    metrics::HistogramTotals totals;
    for (const Worker* w : workers) {
      w->stats().request_duration[c].addTo(&totals);
    }
    set->addHistogram("shardproxy_request_duration_seconds",
                      "Proxy-side request duration, from parsing the request to its complete "
                      "reply, by command class",
                      {{"class", kCommandClassNames[c]}}, totals);
  }
  for (size_t r = 0; r < kCloseReasons; ++r) {
    uint64_t total = 0;
    for (const Worker* w : workers) {
      total += w->stats().closed[r].get();
    }
    set->add("shardproxy_client_connections_closed_total",
             "Client connections closed, by reason (client_closed, quit: after QUIT or a protocol "
             "error reply, output_limit, max_clients, shutdown, out_of_memory, idle_timeout: "
             "limits.timeout, error)",
             kCounter, {{"reason", kCloseReasonNames[r]}}, static_cast<double>(total));
  }
  for (size_t e = 1; e < resp::err::kProxyErrors; ++e) {  // [0] is kNone
    uint64_t total = 0;
    for (const Worker* w : workers) {
      total += w->stats().proxy_errors[e].get();
    }
    set->add("shardproxy_proxy_errors_total",
             "Error replies that are the proxy's own, by kind: shard_unavailable, shutting_down, "
             "not_supported, disabled, cross_slot, keyless_script, spans_every_shard, "
             "unmergeable (shard replies it cannot merge), no_reply (a defect, logged)",
             kCounter, {{"error", resp::err::kProxyErrorLabels[e]}}, static_cast<double>(total));
  }
  for (size_t r = 0; r < kParseErrors; ++r) {
    const auto reason = static_cast<resp::ParseError>(r);
    uint64_t client = 0;
    uint64_t backend = 0;
    for (const Worker* w : workers) {
      client += w->stats().protocol_errors_client.get(reason);
      backend += w->stats().protocol_errors_backend.get(reason);
    }
    const char* help =
        "Malformed RESP streams by side (client requests, backend replies) and reason; the "
        "connection is closed";
    const std::string_view name = ProtocolErrors::reasonName(reason);
    if (reason != resp::ParseError::kNone) {
      set->add("shardproxy_protocol_errors_total", help, kCounter,
               {{"side", "client"}, {"reason", name}}, static_cast<double>(client));
    }
    set->add("shardproxy_protocol_errors_total", help, kCounter,
             {{"side", "backend"}, {"reason", name}}, static_cast<double>(backend));
  }
}

void exportShard(const ShardSummary& s, const ShardTotals& t, std::string_view role,
                 uint64_t configured, FamilySet* set) {
  const std::string_view shard = s.address.name;
#define SP_EXPORT_SHARD(field, storage, type, name, help, label, value)                \
  set->add(name, help, type, labels({{"shard", shard}, {"role", role}}, label, value), \
           static_cast<double>(t.field));
  SP_SHARD_METRICS(SP_EXPORT_SHARD)
#undef SP_EXPORT_SHARD
  const uint64_t live = t.connections_up + t.ejected;
  set->add("shardproxy_backend_connections", "", kGauge,
           {{"shard", shard}, {"role", role}, {"state", "down"}},
           static_cast<double>(configured > live ? configured - live : 0));
  set->add("shardproxy_backend_up",
           "1 when at least one connection to the shard (primary or replicas) is up, else 0",
           kGauge, {{"shard", shard}, {"role", role}}, t.connections_up > 0 ? 1 : 0);
  set->addHistogram("shardproxy_backend_request_duration_seconds",
                    "Duration of requests and split fragments sent to the shard, from parsing the "
                    "request to the shard's reply",
                    {{"shard", shard}, {"role", role}}, t.duration);
}

void collectShards(const ProxyContext& context, FamilySet* set) {
  const auto summaries = context.shardSummaries();
  for (const ShardSummary& s : summaries) {
    exportShard(s, s.primary, "primary", s.connections_configured, set);
    if (!s.address.replicas.empty()) {
      exportShard(s, s.replica, "replica", s.replica_connections_configured, set);
    }
  }
  for (const ShardKeyspace& k : context.keyspace.snapshot()) {
    if (k.ok) {
      set->add("shardproxy_backend_keys",
               "Keys in the shard (all databases), from its INFO keyspace polled every 2 s", kGauge,
               {{"shard", k.shard}}, static_cast<double>(k.keys()));
    }
  }
  set->add("shardproxy_shards", "Shards in the current topology", kGauge, {},
           static_cast<double>(summaries.size()));
}

void collectProxy(const ProxyContext& context, FamilySet* set) {
  set->add("shardproxy_build_info", "shardproxy's version and build options (value 1)", kGauge,
           {{"version", SHARDPROXY_VERSION}, {"metrics", metrics::kMetricsEnabled ? "on" : "off"}},
           1);
  set->add("shardproxy_workers", "Worker threads", kGauge, {},
           static_cast<double>(context.workers.size()));
  set->add("shardproxy_config_reloads_total",
           "Configuration reloads (SIGHUP, PROXY RELOAD) by result; a failed one changes nothing",
           kCounter, {{"result", "success"}},
           static_cast<double>(context.reloads.succeeded.load()));
  set->add("shardproxy_config_reloads_total", "", kCounter, {{"result", "failure"}},
           static_cast<double>(context.reloads.failed.load()));
  set->add("shardproxy_config_last_reload_successful",
           "1 when the last reload succeeded (or none was tried), 0 when it failed", kGauge, {},
           context.reloads.last_ok.load() ? 1 : 0);
  const uint64_t last = context.reloads.last_success_unix.load();
  set->add("shardproxy_config_last_reload_success_timestamp_seconds",
           "When the configuration was last loaded successfully (start-up or reload)", kGauge, {},
           static_cast<double>(last != 0 ? last : context.start_time_unix));
}

}  // namespace

std::vector<prometheus::MetricFamily> StatsCollector::Collect() const {
  std::lock_guard<std::mutex> lock(mu_);
  FamilySet set;
  if (context_ == nullptr) {
    return set.take();
  }
  collectWorkers(*context_, &set);
  collectShards(*context_, &set);
  collectProxy(*context_, &set);
  metrics::collectProcessMetrics(&set);
  return set.take();
}

void StatsCollector::detach() {
  std::lock_guard<std::mutex> lock(mu_);
  context_ = nullptr;
}

}  // namespace sp::control
