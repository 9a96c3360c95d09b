// CONFIG GET through the shards with the proxy's own parameters, and CONFIG SET's sorting of
// parameters between the proxy, the shards and refusal.
#include "session/config_commands.h"

#include <algorithm>
#include <charconv>
#include <climits>
#include <cstdio>
#include <memory>
#include <utility>
#include <vector>

#include <spdlog/spdlog.h>

#include "core/ascii.h"
#include "net/fd_budget.h"
#include "net/publish.h"
#include "net/worker.h"
#include "resp/encoder.h"
#include "resp/errors.h"
#include "session/admin_commands.h"
#include "session/client_session.h"
#include "session/keyspace_fanout.h"

namespace sp::session {
namespace {

// The proxy's own parameters. CONFIG GET answers them from the configuration in force (the
// ProxyContext's: a CONFIG SET shows at once, before the workers have applied it) and they
// replace the shards' entries. requirepass, masterauth and masteruser are answered "": neither
// the proxy's password nor its shards' is ever shown (as PROXY CONFIG GET hides them).
using ConfigValue = std::string (*)(const config::Config& config, const net::ProxyContext& context);

struct ConfigParam {
  std::string_view name;
  ConfigValue value;
  // Whether the proxy answers it under this config (nullptr: always); otherwise the shards do.
  bool (*applies)(const config::Config& config) = nullptr;

  bool appliesTo(const config::Config& config) const {
    return applies == nullptr || applies(config);
  }
};

// The tls-* parameters are the proxy's own once it has a TLS listener; without one they are the
// shards' (redis-server's defaults), as they were before.
constexpr bool (*kTlsListener)(const config::Config&) = [](const config::Config& c) {
  return c.tls_port != 0;
};

constexpr ConfigValue kNoValue = [](const config::Config&, const net::ProxyContext&) {
  return std::string();
};

const ConfigParam kConfigParams[] = {
    {"bind", [](const config::Config& c, const net::ProxyContext&) { return c.listen_host; }},
    {"port",
     [](const config::Config& c, const net::ProxyContext& x) {
       return std::to_string(x.bound_port != 0 ? x.bound_port : c.listen_port);
     }},
    {"unixsocket", [](const config::Config& c, const net::ProxyContext&) { return c.listen_unix; }},
    {"unixsocketperm",
     [](const config::Config& c, const net::ProxyContext&) {
       char octal[8];
       std::snprintf(octal, sizeof octal, "%o", c.listen_unix_perm);
       return std::string(octal);
     }},
    {"tls-port",
     [](const config::Config& c, const net::ProxyContext& x) {
       return std::to_string(x.bound_tls_port != 0 ? x.bound_tls_port : c.tls_port);
     },
     kTlsListener},
    {"tls-cert-file",
     [](const config::Config& c, const net::ProxyContext&) { return c.tls_server.cert_file; },
     kTlsListener},
    {"tls-key-file",
     [](const config::Config& c, const net::ProxyContext&) { return c.tls_server.key_file; },
     kTlsListener},
    {"tls-ca-cert-file",
     [](const config::Config& c, const net::ProxyContext&) { return c.tls_server.ca_cert_file; },
     kTlsListener},
    {"tls-auth-clients",
     [](const config::Config& c, const net::ProxyContext&) {
       switch (c.tls_server.auth_clients) {
         case tls::AuthClients::kNo:
           return std::string("no");
         case tls::AuthClients::kOptional:
           return std::string("optional");
         case tls::AuthClients::kYes:
           break;
       }
       return std::string("yes");
     },
     kTlsListener},
    {"tls-protocols",
     [](const config::Config& c, const net::ProxyContext&) { return c.tls_server.protocols; },
     kTlsListener},
    {"tls-ciphers",
     [](const config::Config& c, const net::ProxyContext&) { return c.tls_server.ciphers; },
     kTlsListener},
    {"tls-ciphersuites",
     [](const config::Config& c, const net::ProxyContext&) { return c.tls_server.ciphersuites; },
     kTlsListener},
    {"databases", [](const config::Config&, const net::ProxyContext&) { return std::string("1"); }},
    {"maxclients",
     [](const config::Config& c, const net::ProxyContext& x) {
       // As INFO says: lowered to what the open-files limit allows (net/fd_budget.h).
       return std::to_string(
           std::min(c.limits.max_clients, x.max_clients.load(std::memory_order_relaxed)));
     }},
    {"timeout", [](const config::Config& c,
                   const net::ProxyContext&) { return std::to_string(c.limits.timeout); }},
    {"tcp-keepalive",
     [](const config::Config& c, const net::ProxyContext&) {
       return std::to_string(c.limits.tcp_keepalive);
     }},
    {"proto-max-bulk-len",
     [](const config::Config& c, const net::ProxyContext&) {
       return std::to_string(c.limits.max_bulk_len);
     }},
    {"cluster-enabled",
     [](const config::Config&, const net::ProxyContext&) { return std::string("no"); }},
    {"slowlog-log-slower-than",
     [](const config::Config& c, const net::ProxyContext&) {
       // -1 (CONFIG SET's "never") is kept as the largest threshold.
       return c.slowlog_threshold_us == UINT64_MAX ? std::string("-1")
                                                   : std::to_string(c.slowlog_threshold_us);
     }},
    {"slowlog-max-len", [](const config::Config& c,
                           const net::ProxyContext&) { return std::to_string(c.slowlog_max_len); }},
    {"requirepass", kNoValue},
    {"masterauth", kNoValue},
    {"masteruser", kNoValue},
};

const ConfigParam* findConfigParam(std::string_view name, const config::Config& config) {
  for (const ConfigParam& p : kConfigParams) {
    if (equalsIgnoreCase(name, p.name) && p.appliesTo(config)) {
      return &p;
    }
  }
  return nullptr;
}

bool hasGlob(std::string_view pattern) {
  return pattern.find_first_of("*?[\\") != std::string_view::npos;
}

// The proxy's own parameters matching any of `patterns`: a RESP2 array of name, value pairs.
std::string ownConfigEntries(const net::Worker& worker,
                             std::span<const std::string_view> patterns) {
  const net::ProxyContext& context = worker.context();
  const auto config = context.config();
  std::vector<const ConfigParam*> found;
  for (const ConfigParam& p : kConfigParams) {
    if (!p.appliesTo(*config)) {
      continue;
    }
    for (std::string_view pattern : patterns) {
      if (globMatch(pattern, p.name)) {
        found.push_back(&p);
        break;
      }
    }
  }
  std::string out;
  resp::appendArrayHeader(out, static_cast<int64_t>(found.size() * 2));
  for (const ConfigParam* p : found) {
    resp::appendBulk(out, p->name);
    resp::appendBulk(out, p->value(*config, context));
  }
  return out;
}

// Parameters CONFIG SET never sends to the shards, and why: they would cut the proxy off its
// shards (addresses, credentials, replication, protected mode, the shards' client limits), they
// name files on the shards' hosts, or they are the proxy's own and fixed.
struct RefusedParam {
  std::string_view name;  // a prefix when it ends with '-'
  std::string_view reason;
};

constexpr std::string_view kCredentials =
    "the proxy authenticates to its shards with backend.password and its clients with "
    "auth.password (set them in the config file and reload)";
constexpr std::string_view kAddress = "the proxy reaches each shard at its configured address";
constexpr std::string_view kShardPath = "a path on each shard's host, not the proxy's to change";
constexpr std::string_view kShardLimit = "the shards could close the proxy's shared connections";

constexpr RefusedParam kRefusedParams[] = {
    {"requirepass", kCredentials},
    {"masterauth", kCredentials},
    {"masteruser", kCredentials},
    {"port", kAddress},
    {"tls-port", kAddress},
    {"tls-", "the proxy's TLS settings are its own: change them in the config file and reload"},
    {"bind", kAddress},
    {"bind-source-addr", kAddress},
    {"unixsocket", kAddress},
    {"unixsocketperm", kAddress},
    {"protected-mode", "the shards could refuse the proxy's connections"},
    {"replicaof", "a shard turned replica refuses the writes the proxy sends it"},
    {"slaveof", "a shard turned replica refuses the writes the proxy sends it"},
    {"dir", kShardPath},
    {"dbfilename", kShardPath},
    {"appendfilename", kShardPath},
    {"appenddirname", kShardPath},
    {"logfile", kShardPath},
    {"pidfile", kShardPath},
    {"cluster-", "cluster settings are the shards' own (the proxy is not a cluster node)"},
    {"rename-command", "renamed commands would no longer reach the shards"},
    {"client-output-buffer-limit", kShardLimit},
    {"maxmemory-clients", kShardLimit},
    {"databases", "the proxy serves database 0 only"},
    {"proto-max-bulk-len",
     "the proxy's limit is limits.max_bulk_len (set it in the config file and reload); the "
     "shards' must stay at least as large"},
};

// The proxy's parameters that CONFIG SET changes (on the proxy only), with redis-server's ranges.
struct ProxySetting {
  std::string_view name;
  int64_t min;
  int64_t max;
};

constexpr ProxySetting kProxySettings[] = {
    {"timeout", 0, INT_MAX},           {"tcp-keepalive", 0, INT_MAX},
    {"maxclients", 1, UINT32_MAX},     {"slowlog-log-slower-than", -1, INT64_MAX},
    {"slowlog-max-len", 0, INT64_MAX},
};

const ProxySetting* findProxySetting(std::string_view name) {
  for (const ProxySetting& s : kProxySettings) {
    if (equalsIgnoreCase(name, s.name)) {
      return &s;
    }
  }
  return nullptr;
}

// maxmemory below this is refused whatever the shards' usage is known to be.
constexpr uint64_t kMinMaxMemory = 1 << 20;

bool parseInt64(std::string_view text, int64_t* out) {
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return !text.empty() && ec == std::errc() && end == text.data() + text.size();
}

// redis-server's memtoull: a byte count with an optional unit (b, k, kb, m, mb, g, gb; k = 1000,
// kb = 1024, any case).
bool parseMemory(std::string_view text, uint64_t* out) {
  size_t digits = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') {
    ++digits;
  }
  uint64_t n = 0;
  if (digits == 0 || std::from_chars(text.data(), text.data() + digits, n).ec != std::errc()) {
    return false;
  }
  static constexpr std::pair<std::string_view, uint64_t> kUnits[] = {
      {"", 1},        {"b", 1},        {"k", 1000},       {"kb", 1024},
      {"m", 1000000}, {"mb", 1 << 20}, {"g", 1000000000}, {"gb", 1ull << 30}};
  for (const auto& [unit, mul] : kUnits) {
    if (equalsIgnoreCase(text.substr(digits), unit)) {
      if (n > UINT64_MAX / mul) {
        return false;
      }
      *out = n * mul;
      return true;
    }
  }
  return false;
}

}  // namespace

void ConfigCommands::get(ClientSession& session, const resp::CommandInfo& cmd,
                         std::span<const std::string_view> args, std::string* reply) {
  net::Worker& worker = session.worker();
  const std::span<const std::string_view> patterns = args.subspan(2);
  std::string own = ownConfigEntries(worker, patterns);
  const std::shared_ptr<const config::Config> config = worker.context().config();
  const bool proxy_only = std::all_of(patterns.begin(), patterns.end(), [&](std::string_view p) {
    return !hasGlob(p) && findConfigParam(p, *config) != nullptr;
  });
  if (proxy_only) {
    *reply = std::move(own);
    return;
  }
  PendingRequest* request = session.deferReply(&cmd);
  request->protocol = session.protocol();
  std::string command;
  resp::appendCommand(command, args);
  sendConfigGet(worker, session.id(), request, command, std::move(own));
}

ConfigCommands::Target ConfigCommands::setTarget(const net::Worker& worker,
                                                 std::string_view parameter, std::string_view value,
                                                 resp::err::ErrorReply* refusal) {
  if (const ProxySetting* setting = findProxySetting(parameter)) {
    int64_t v = 0;
    if (!parseInt64(value, &v)) {
      *refusal =
          resp::err::configSetFailed(parameter, "argument couldn't be parsed into an integer");
      return Target::kRefused;
    }
    if (v < setting->min || v > setting->max) {
      *refusal = resp::err::configSetFailed(
          parameter, "argument must be between " + std::to_string(setting->min) + " and " +
                         std::to_string(setting->max) + " inclusive");
      return Target::kRefused;
    }
    return Target::kProxy;
  }
  for (const RefusedParam& r : kRefusedParams) {
    const bool prefix = r.name.ends_with('-');
    if (prefix ? parameter.size() >= r.name.size() &&
                     equalsIgnoreCase(parameter.substr(0, r.name.size()), r.name)
               : equalsIgnoreCase(parameter, r.name)) {
      *refusal =
          resp::err::configSetFailed(parameter, "refused by shardproxy: " + std::string(r.reason));
      return Target::kRefused;
    }
  }
  // maxmemory below what a shard holds now: every write there would fail with OOM (or evict
  // until it fits). Each shard gets the whole value; the shards' usage is the poller's (INFO).
  uint64_t bytes = 0;
  if (equalsIgnoreCase(parameter, "maxmemory") && parseMemory(value, &bytes) && bytes > 0 &&
      bytes < kMinMaxMemory) {
    *refusal = resp::err::configSetFailed(parameter,
                                          "refused by shardproxy: below 1mb, less than an empty "
                                          "redis-server uses: every write would fail with OOM");
    return Target::kRefused;
  }
  if (equalsIgnoreCase(parameter, "maxmemory") && bytes > 0) {
    for (const net::ShardKeyspace& shard : worker.context().keyspace.snapshot()) {
      uint64_t used = 0;
      if (shard.ok && shard.number("used_memory", &used) && bytes < used) {
        *refusal = resp::err::configSetFailed(
            parameter, "refused by shardproxy: " + std::to_string(bytes) +
                           " bytes is less than what shard " + shard.shard + " uses now (" +
                           std::to_string(used) +
                           " bytes): its writes would fail with OOM (each shard gets the value)");
        return Target::kRefused;
      }
    }
  }
  return Target::kShards;
}

bool ConfigCommands::applyToProxy(
    net::Worker& worker, std::span<const std::pair<std::string_view, std::string_view>> settings,
    resp::err::ErrorReply* refusal) {
  if (settings.empty()) {
    return true;
  }
  net::ProxyContext& context = worker.context();
  std::string applied;
  // From the configuration in force when it is published: another CONFIG SET, a reload or a
  // failover at the same moment is kept, not overwritten with an older copy.
  const bool published = net::updatePublished(context, [&](net::Published& p) {
    auto fresh = std::make_shared<config::Config>(*p.config);
    for (const auto& [parameter, value] : settings) {
      int64_t v = 0;
      parseInt64(value, &v);  // validated by configSetTarget
      const std::string_view name = findProxySetting(parameter)->name;
      if (name == "timeout") {
        fresh->limits.timeout = static_cast<uint32_t>(v);
      } else if (name == "tcp-keepalive") {
        fresh->limits.tcp_keepalive = static_cast<uint32_t>(v);
      } else if (name == "maxclients") {
        fresh->limits.max_clients = static_cast<uint32_t>(v);
      } else if (name == "slowlog-log-slower-than") {
        fresh->slowlog_threshold_us = v < 0 ? UINT64_MAX : static_cast<uint64_t>(v);
      } else if (name == "slowlog-max-len") {
        fresh->slowlog_max_len = static_cast<uint32_t>(std::min<int64_t>(v, UINT32_MAX));
      }
      applied += (applied.empty() ? "" : " ") + std::string(name) + " " + std::string(value);
    }
    if (fresh->limits.max_clients != p.config->limits.max_clients) {
      // As redis-server: refused when the open-files limit cannot take that many clients.
      const net::FdBudget budget = net::planDescriptors(
          fresh->limits.max_clients,
          net::reservedDescriptors(*fresh, *p.topology, context.workers.size()));
      if (budget.reduced()) {
        *refusal = resp::err::configSetFailed(
            "maxclients",
            "The operating system is not able to handle the specified number "
            "of clients, try with " +
                std::to_string(budget.max_clients));
        return false;
      }
      context.max_clients.store(budget.max_clients, std::memory_order_relaxed);
    }
    p.config = std::move(fresh);
    return true;
  });
  if (!published) {
    return false;
  }
  spdlog::info("worker {}: CONFIG SET {} applied to the proxy (until the next reload)",
               worker.index(), applied);
  return true;
}

}  // namespace sp::session
