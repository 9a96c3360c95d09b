// PROXY subcommands: read the shared context (snapshots, summed counters), never a worker's loop.
#include "session/admin_commands.h"

#include <cerrno>
#include <cstdlib>

#include "config/value_parser.h"
#include "core/ascii.h"
#include "net/health.h"
#include "net/proxy_context.h"
#include "net/slow_log.h"
#include "net/worker.h"
#include "resp/encoder.h"
#include "resp/errors.h"
#include "session/client_session.h"

namespace sp::session {
namespace {

constexpr size_t kSlowlogDefaultCount = 10;  // as Redis' SLOWLOG GET

std::string secret(const std::string& value) { return value.empty() ? "" : "(set)"; }

std::string slotList(const std::vector<config::SlotRange>& slots) {
  std::string out;
  for (const auto& r : slots) {
    out += out.empty() ? "" : ",";
    out += std::to_string(r.first);
    if (r.last != r.first) {
      out += "-" + std::to_string(r.last);
    }
  }
  return out;
}

void appendPair(std::string& out, std::string_view key, std::string_view value) {
  resp::appendBulk(out, key);
  resp::appendBulk(out, value);
}

void appendPair(std::string& out, std::string_view key, uint64_t value) {
  resp::appendBulk(out, key);
  resp::appendInteger(out, static_cast<int64_t>(value));
}

void shards(const net::ProxyContext& context, std::string* reply) {
  const auto summaries = context.shardSummaries();
  resp::appendArrayHeader(*reply, static_cast<int64_t>(summaries.size()));
  for (const net::ShardSummary& s : summaries) {
    const net::ShardTotals& t = s.primary;
    std::string body;
    int64_t fields = 0;
    auto pair = [&](std::string_view key, auto value) {
      appendPair(body, key, value);
      fields += 2;
    };
    pair("name", s.address.name);
    pair("addr", config::formatHostPort(s.address.host, s.address.port));
    pair("state", s.state());
    pair("connections_up", t.connections_up);
    pair("connections", s.connections_configured);
    pair("ejected", t.ejected);
    pair("slots", s.slots);
    pair("slot_count", s.slot_count);
    pair("requests", t.requests);
    pair("errors", t.errors);
    pair("reply_errors", t.reply_errors);
    pair("inflight", t.inflight);
    pair("connects", t.connects);
    pair("connect_failures", t.connect_failures);
    pair("reconnects", t.reconnects);
    pair("timeouts", t.timeouts);
    pair("ejections", t.ejections);
    pair("ping_failures", t.ping_failures);
    pair("ping_busy", t.ping_busy);
    std::string replicas;
    for (const auto& r : s.address.replicas) {
      replicas += (replicas.empty() ? "" : " ") + config::formatHostPort(r.host, r.port);
    }
    pair("replicas", replicas);
    pair("replica_connections_up", s.replica.connections_up);
    pair("replica_reads", s.replica.replica_reads);
    resp::appendArrayHeader(*reply, fields);
    reply->append(body);
  }
}

void slots(const net::ProxyContext& context, std::string* reply) {
  const route::TopologyPtr topology = context.topology();
  const auto ranges = topology->ranges();
  resp::appendArrayHeader(*reply, static_cast<int64_t>(ranges.size()));
  for (const auto& r : ranges) {
    const route::ShardAddress& shard = topology->shards()[r.shard];
    resp::appendArrayHeader(*reply, 3);
    resp::appendInteger(*reply, r.first);
    resp::appendInteger(*reply, r.last);
    resp::appendArrayHeader(*reply, 3);
    resp::appendBulk(*reply, shard.host);
    resp::appendInteger(*reply, shard.port);
    resp::appendBulk(*reply, shard.name);
  }
}

void configGet(const net::ProxyContext& context, std::span<const std::string_view> patterns,
               std::string* reply) {
  std::string body;
  int64_t n = 0;
  for (const auto& [key, value] : configEntries(*context.config())) {
    for (std::string_view p : patterns) {
      if (globMatch(p, key)) {
        appendPair(body, key, value);
        n += 2;
        break;
      }
    }
  }
  resp::appendArrayHeader(*reply, n);
  reply->append(body);
}

// The slow log's reply to `sub` (the subcommand and its arguments): GET [count], LEN, RESET.
// Redis' SLOWLOG entries have six fields (id, time, microseconds, arguments, client, client
// name; the arguments are the command's name, the proxy keeps no argument values); PROXY
// SLOWLOG's add the shard as a seventh, which clients that read six ignore. False when `sub` is
// none of these.
bool slowlog(net::Worker& worker, std::span<const std::string_view> sub, bool proxy_form,
             std::string* reply) {
  const std::string name = upperAscii(sub[0]);
  const net::ProxyContext& context = worker.context();
  std::vector<net::SlowLog*> logs;
  for (net::Worker* w : context.workers) {
    logs.push_back(&w->slowLog());
  }
  const size_t max_len = worker.config().slowlog_max_len;
  if (name == "LEN" && sub.size() == 1) {
    size_t total = 0;
    for (const net::SlowLog* log : logs) {
      total += log->size();
    }
    resp::appendInteger(*reply, static_cast<int64_t>(std::min(total, max_len)));
    return true;
  }
  if (name == "RESET" && sub.size() == 1) {
    for (net::Worker* w : context.workers) {
      w->slowLog().reset();
    }
    resp::appendStatus(*reply, "OK");
    return true;
  }
  if (name != "GET" || sub.size() > 2) {
    return false;
  }
  size_t count = kSlowlogDefaultCount;
  if (sub.size() == 2) {
    char* end = nullptr;
    const std::string text(sub[1]);
    errno = 0;
    const long long n = std::strtoll(text.c_str(), &end, 10);
    if (text.empty() || *end != '\0' || errno != 0 || n < -1) {
      reply->append(resp::err::kSlowlogCount);
      return true;
    }
    count = n == -1 ? max_len : static_cast<size_t>(n);
  }
  const auto entries = net::mergeNewest(logs, std::min(count, max_len), &context.slowlog_ids);
  resp::appendArrayHeader(*reply, static_cast<int64_t>(entries.size()));
  for (const net::SlowLogEntry& e : entries) {
    resp::appendArrayHeader(*reply, proxy_form ? 7 : 6);
    resp::appendInteger(*reply, static_cast<int64_t>(e.id));
    resp::appendInteger(*reply, static_cast<int64_t>(e.unix_time));
    resp::appendInteger(*reply, static_cast<int64_t>(e.duration_us));
    const std::string_view command = e.command;
    if (proxy_form) {
      resp::appendArrayHeader(*reply, 1);
      resp::appendBulk(*reply, command);
    } else {  // "CLIENT ID" -> ["CLIENT", "ID"], as the client sent the words
      const size_t space = command.find(' ');
      resp::appendArrayHeader(*reply, space == std::string_view::npos ? 1 : 2);
      resp::appendBulk(*reply, command.substr(0, space));
      if (space != std::string_view::npos) {
        resp::appendBulk(*reply, command.substr(space + 1));
      }
    }
    resp::appendBulk(*reply, e.client);
    resp::appendBulk(*reply, e.client_name);
    if (proxy_form) {
      resp::appendBulk(*reply, e.shard);
    }
  }
  return true;
}

void reload(ClientSession& session, const resp::CommandInfo& cmd, std::string* reply) {
  net::Worker* worker = &session.worker();
  net::ControlPlane& control = *worker->context().control;
  if (!control.canReload()) {
    reply->append(resp::err::kReloadUnavailable);
    return;
  }
  PendingRequest* request = session.deferReply(&cmd);
  // The request stays valid until it is completed: a client that goes away orphans it, and
  // onBackendReply then releases it.
  control.requestReload([worker, request](const net::ReloadOutcome& outcome) {
    std::string text;
    if (outcome.ok) {
      resp::appendStatus(text, "OK");
    } else {
      text = resp::err::reloadFailed(outcome.message);
    }
    worker->post(
        [request, text](net::Worker& w) { ClientSession::onBackendReply(w, request, 0, text); });
  });
}

// "# healthz (200)\nok: ...\n# readyz (503)\nnot ready: ...\n": both pages, with the status
// code each would answer.
void health(const net::ProxyContext& context, std::string* reply) {
  const net::HealthStatus live = net::liveness(context);
  const net::HealthStatus ready = net::readiness(context);
  resp::appendBulk(*reply, std::string("# healthz (") + (live.ok ? "200" : "503") + ")\n" +
                               live.text + "# readyz (" + (ready.ok ? "200" : "503") + ")\n" +
                               ready.text);
}

void help(std::string* reply) {
  static constexpr std::string_view kLines[] = {
      "PROXY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
      "INFO [<section> ...]",
      "    The proxy's INFO: every section of redis-server's, and shards.",
      "SHARDS",
      "    Every shard with its address, state, connections and counters.",
      "SLOTS",
      "    Slot ranges and the shard that owns each (as CLUSTER SLOTS).",
      "CONFIG GET <pattern> [<pattern> ...]",
      "    The effective configuration (dotted keys, e.g. limits.*).",
      "SLOWLOG GET [<count>] | LEN | RESET",
      "    The proxy-side slow log (slowlog.threshold_us, slowlog.max_len).",
      "RELOAD",
      "    Re-read the configuration file and apply it without dropping clients.",
      "HEALTH",
      "    Liveness and readiness, as the metrics listener's /healthz and /readyz.",
      "HELP",
      "    Print this help.",
  };
  resp::appendStatusLines(*reply, kLines);
}

}  // namespace

bool globMatch(std::string_view pattern, std::string_view text) {
  auto lower = [](char c) { return lowerAscii(c); };
  size_t p = 0;
  size_t t = 0;
  size_t star_p = std::string_view::npos;
  size_t star_t = 0;
  while (t < text.size()) {
    bool advanced = false;
    if (p < pattern.size()) {
      const char pc = pattern[p];
      if (pc == '*') {
        star_p = p++;
        star_t = t;
        continue;
      }
      if (pc == '?') {
        ++p;
        ++t;
        continue;
      }
      if (pc == '[') {
        size_t q = p + 1;
        const bool negate = q < pattern.size() && pattern[q] == '^';
        if (negate) {
          ++q;
        }
        bool match = false;
        while (q < pattern.size() && pattern[q] != ']') {
          if (pattern[q] == '\\' && q + 1 < pattern.size()) {
            ++q;
            match = match || lower(pattern[q]) == lower(text[t]);
          } else if (q + 2 < pattern.size() && pattern[q + 1] == '-' && pattern[q + 2] != ']') {
            char lo = lower(pattern[q]);
            char hi = lower(pattern[q + 2]);
            if (lo > hi) {
              std::swap(lo, hi);
            }
            match = match || (lower(text[t]) >= lo && lower(text[t]) <= hi);
            q += 2;
          } else {
            match = match || lower(pattern[q]) == lower(text[t]);
          }
          ++q;
        }
        if (match != negate && q < pattern.size()) {
          p = q + 1;
          ++t;
          continue;
        }
      } else {
        size_t q = p;
        if (pc == '\\' && q + 1 < pattern.size()) {
          ++q;
        }
        if (lower(pattern[q]) == lower(text[t])) {
          p = q + 1;
          ++t;
          advanced = true;
        }
      }
    }
    if (advanced) {
      continue;
    }
    if (star_p == std::string_view::npos) {
      return false;
    }
    p = star_p + 1;
    t = ++star_t;
  }
  while (p < pattern.size() && pattern[p] == '*') {
    ++p;
  }
  return p == pattern.size();
}

std::vector<std::pair<std::string, std::string>> configEntries(const config::Config& c) {
  std::vector<std::pair<std::string, std::string>> out;
  auto add = [&](std::string key, std::string value) {
    out.emplace_back(std::move(key), std::move(value));
  };
  auto num = [](uint64_t v) { return std::to_string(v); };
  add("listen.host", c.listen_host);
  add("listen.port", num(c.listen_port));
  add("workers", num(static_cast<uint64_t>(c.workers)));
  for (size_t i = 0; i < c.shards.size(); ++i) {
    const config::ShardConfig& s = c.shards[i];
    const std::string p = "shards[" + std::to_string(i) + "].";
    add(p + "name", s.name);
    add(p + "address", s.host.empty() ? "" : config::formatHostPort(s.host, s.port));
    add(p + "slots", slotList(s.slots));
    std::string replicas;
    for (const auto& r : s.replicas) {
      replicas += (replicas.empty() ? "" : ",") + config::formatHostPort(r.host, r.port);
    }
    add(p + "replicas", replicas);
    add(p + "username", s.username);
    add(p + "password", secret(s.password));
  }
  add("backend.connections", num(static_cast<uint64_t>(c.backend_connections)));
  add("backend.connect_timeout_ms", num(c.backend_connect_timeout_ms));
  add("backend.reconnect_min_ms", num(c.backend_reconnect_min_ms));
  add("backend.reconnect_max_ms", num(c.backend_reconnect_max_ms));
  add("backend.timeout_ms", num(c.backend_timeout_ms));
  std::string slow;
  for (const auto& name : c.backend_slow_commands) {
    slow += (slow.empty() ? "" : ",") + name;
  }
  add("backend.slow_commands", slow);
  add("backend.slow_timeout_ms", num(c.backend_slow_timeout_ms));
  add("backend.ping_interval_ms", num(c.backend_ping_interval_ms));
  add("backend.failure_limit", num(c.backend_failure_limit));
  add("backend.retry_timeout_ms", num(c.backend_retry_timeout_ms));
  add("backend.retry_timeout_max_ms", num(c.backend_retry_timeout_max_ms));
  add("backend.read_from", config::readFromName(c.read_from));
  add("backend.username", c.backend_username);
  add("backend.password", secret(c.backend_password));
  add("backend.mode", c.cluster_mode ? "cluster" : "static");
  std::string seeds;
  for (const auto& e : c.cluster_seeds) {
    seeds += (seeds.empty() ? "" : ",") + config::formatHostPort(e.host, e.port);
  }
  add("backend.cluster_seeds", seeds);
  add("backend.cluster_refresh_ms", num(c.cluster_refresh_ms));
  add("backend.max_redirects", num(c.max_redirects));
  add("limits.max_bulk_len", num(c.limits.max_bulk_len));
  add("limits.max_array_len", num(c.limits.max_array_len));
  add("limits.max_inline_len", num(c.limits.max_inline_len));
  add("limits.max_inflight_per_client", num(c.limits.max_inflight_per_client));
  add("limits.client_output_buffer", num(c.limits.client_output_buffer));
  add("limits.max_clients", num(c.limits.max_clients));
  add("limits.timeout", num(c.limits.timeout));
  add("limits.tcp_keepalive", num(c.limits.tcp_keepalive));
  add("limits.buffer_pool_bytes", num(c.limits.buffer_pool_bytes));
  add("shutdown_timeout_ms", num(c.shutdown_timeout_ms));
  add("log_level", c.log_level);
  add("log.file", c.log_file);
  add("pidfile", c.pidfile);
  std::string sentinels;
  for (const auto& e : c.sentinel.addresses) {
    sentinels += (sentinels.empty() ? "" : ",") + config::formatHostPort(e.host, e.port);
  }
  add("sentinel.addresses", sentinels);
  add("sentinel.master_name_prefix", c.sentinel.master_name_prefix);
  add("sentinel.password", secret(c.sentinel.password));
  add("metrics.listen", c.metrics_listen);
  add("metrics.ready_quorum", num(c.ready_quorum_percent));
  add("slowlog.threshold_us", num(c.slowlog_threshold_us));
  add("slowlog.max_len", num(c.slowlog_max_len));
  add("auth.password", secret(c.auth.password));
  std::string users;  // names and rights, never passwords
  for (const auto& u : c.auth.users) {
    users += (users.empty() ? "" : ",") + u.name;
    users += u.admin ? "(admin)" : (u.read_only ? "(read_only)" : "");
  }
  add("auth.users", users);
  std::string denied;
  for (const auto& d : c.deny_commands) {
    denied += (denied.empty() ? "" : ",") + d;
  }
  add("deny_commands", denied);
  add("allow_config_set", c.allow_config_set ? "true" : "false");
  add("keyless_scripts", c.keyless_scripts);
  add("io_uring", c.io_uring ? "true" : "false");
  return out;
}

void runAdminCommand(ClientSession& session, const resp::CommandInfo& cmd,
                     std::span<const std::string_view> args, std::string* reply) {
  net::Worker& worker = session.worker();
  switch (cmd.handler) {
    case resp::Handler::kProxyInfo: {
      std::string section = args.size() > 2 ? std::string(args[2]) : std::string();
      for (char& c : section) {
        c = lowerAscii(c);
      }
      resp::appendBulk(*reply, worker.context().control->info(section, true));
      return;
    }
    case resp::Handler::kProxyShards:
      shards(worker.context(), reply);
      return;
    case resp::Handler::kProxySlots:
      slots(worker.context(), reply);
      return;
    case resp::Handler::kProxyConfig:
      if (upperAscii(args[2]) != "GET") {
        reply->append(resp::err::proxyConfigOnlyGet(args[2]));
      } else {
        configGet(worker.context(), args.subspan(3), reply);
      }
      return;
    case resp::Handler::kProxySlowlog:
      if (!slowlog(worker, args.subspan(2), true, reply)) {
        reply->append(resp::err::proxySlowlogUsage(args[2]));
      }
      return;
    case resp::Handler::kProxyReload:
      reload(session, cmd, reply);
      return;
    case resp::Handler::kProxyHealth:
      health(worker.context(), reply);
      return;
    case resp::Handler::kProxyHelp:
      help(reply);
      return;
    default:
      reply->append(resp::err::unknownSubcommand("proxy", cmd.name));
      return;
  }
}

void runSlowlog(ClientSession& session, const resp::CommandInfo& cmd,
                std::span<const std::string_view> args, std::string* reply) {
  if (cmd.handler == resp::Handler::kSlowlogHelp) {
    static constexpr std::string_view kLines[] = {
        "SLOWLOG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "GET [<count>]",
        "    Return top <count> entries from the slowlog (default: 10, -1 mean all).",
        "    Entries are made of:",
        "    id, timestamp, time in microseconds, arguments array, client IP and port,",
        "    client name",
        "LEN",
        "    Return the length of the slowlog.",
        "RESET",
        "    Reset the slowlog.",
        "HELP",
        "    Prints this help.",
    };
    resp::appendStatusLines(*reply, kLines);
    return;
  }
  // The table checks the subcommand's arity (GET's is -2: any count of arguments past it).
  if (!slowlog(session.worker(), args.subspan(1), false, reply)) {
    reply->append(resp::err::subcommandSyntax("slowlog", args[1]));
  }
}

}  // namespace sp::session
