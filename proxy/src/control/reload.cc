// Reloader: validate, publish, post to the workers; count and log the outcome.
#include "control/reload.h"

#include <signal.h>
#include <unistd.h>

#include <ctime>
#include <memory>

#include <spdlog/spdlog.h>

#include "config/topology_builder.h"
#include "control/tls_contexts.h"
#include "control/topology_source.h"
#include "core/log.h"
#include "net/fd_budget.h"
#include "net/proxy_context.h"
#include "net/publish.h"
#include "net/worker.h"

namespace sp::control {

using net::ProxyContext;

namespace {

// Keeps the running value of a key that only a restart can change; notes the difference.
template <typename T>
void keep(const char* key, const T& running, T* fresh, std::string* notes) {
  if (*fresh != running) {
    notes->append(notes->empty() ? "" : "; ");
    notes->append(key);
    notes->append(" changed: needs a restart, keeping the running value");
    *fresh = running;
  }
}

}  // namespace

Reloader::Reloader(ProxyContext& context, config::CommandLine cmdline)
    : context_(context), cmdline_(std::move(cmdline)) {}

ReloadOutcome Reloader::refuse(std::string_view trigger, const std::string& why) {
  spdlog::error("reload ({}): {}; the running configuration is unchanged", trigger, why);
  context_.reloads.failed.fetch_add(1);
  context_.reloads.last_ok.store(false);
  ReloadOutcome outcome;
  outcome.message = why;
  return outcome;
}

ReloadOutcome Reloader::reload(std::string_view trigger) {
  ReloadOutcome outcome;
  auto fresh = std::make_shared<config::Config>();
  std::vector<config::ConfigError> errors;
  if (cmdline_.configFile().empty()) {
    errors.push_back({"--config", "no configuration file to reload (started from flags alone)"});
  } else {
    errors = config::buildConfig(cmdline_, fresh.get());
  }
  if (!errors.empty()) {
    for (const auto& e : errors) {
      spdlog::error("reload ({}): {}", trigger, e.toString());
      outcome.message += (outcome.message.empty() ? "" : "; ") + e.toString();
    }
    spdlog::error("reload ({}): {} error{}{}; the running configuration is unchanged", trigger,
                  errors.size(), errors.size() == 1 ? "" : "s",
                  cmdline_.configFile().empty() ? "" : " in " + cmdline_.configFile());
    context_.reloads.failed.fetch_add(1);
    context_.reloads.last_ok.store(false);
    return outcome;
  }
  const std::shared_ptr<const config::Config> running = context_.config();
  std::string notes;
  keep("listen.host", running->listen_host, &fresh->listen_host, &notes);
  keep("listen.port", running->listen_port, &fresh->listen_port, &notes);
  keep("listen.unix", running->listen_unix, &fresh->listen_unix, &notes);
  keep("listen.unix_perm", running->listen_unix_perm, &fresh->listen_unix_perm, &notes);
  keep("workers", running->workers, &fresh->workers, &notes);
  keep("io_uring", running->io_uring, &fresh->io_uring, &notes);
  keep("metrics.listen", running->metrics_listen, &fresh->metrics_listen, &notes);
  keep("tls.listen", running->tls_port, &fresh->tls_port, &notes);
  keep("tls.listen", running->tls_host, &fresh->tls_host, &notes);
  if (!notes.empty()) {
    spdlog::warn("reload ({}): {}", trigger, notes);
  }
  // The certificate files are read again: a renewed certificate applies to new connections.
  TlsContexts tls;
  if (Status built = buildTlsContexts(*fresh, &tls); !built.ok()) {
    return refuse(trigger, built.message());
  }
  route::TopologyPtr topology;
  // The sentinels and seeds are asked over the new backend TLS context.
  if (Status resolved = resolveTopology(fresh.get(), &topology, tls.backend); !resolved.ok()) {
    return refuse(trigger, resolved.message());
  }
  if (Status budget = applyDescriptorBudget(context_, *fresh, *topology, context_.workers.size(),
                                            "reload (" + std::string(trigger) + ")");
      !budget.ok()) {
    return refuse(trigger, budget.message());
  }
  const route::TopologyPtr old = context_.topology();
  size_t changed = 0;
  for (size_t i = 0; i < topology->shardCount(); ++i) {
    const auto& s = topology->shards()[i];
    const bool same = old != nullptr && i < old->shardCount() && old->shards()[i].name == s.name &&
                      old->shards()[i].host == s.host && old->shards()[i].port == s.port;
    changed += same ? 0 : 1;
  }
  setLogLevel(fresh->log_level);
  context_.publishTls(tls.server, tls.backend);
  publishTopology(context_, fresh, topology);
  context_.reloads.succeeded.fetch_add(1);
  context_.reloads.last_ok.store(true);
  context_.reloads.last_success_unix.store(static_cast<uint64_t>(std::time(nullptr)));
  spdlog::info("reload ({}): {} applied: {} shard{}, {} new or moved", trigger,
               cmdline_.configFile(), topology->shardCount(),
               topology->shardCount() == 1 ? "" : "s", changed);
  outcome.ok = true;
  outcome.message = notes;
  return outcome;
}

void Reloader::request(std::function<void(const ReloadOutcome&)> done) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!closed_) {
      pending_.push_back(std::move(done));
      done = nullptr;
    }
  }
  if (done) {
    ReloadOutcome outcome;
    outcome.message = "proxy shutting down";
    done(outcome);
    return;
  }
  // Every thread blocks SIGHUP; the main thread takes it in sigwait.
  ::kill(::getpid(), SIGHUP);
}

void Reloader::onSignal() {
  std::vector<std::function<void(const ReloadOutcome&)>> waiting;
  {
    std::lock_guard<std::mutex> lock(mu_);
    waiting.swap(pending_);
  }
  const ReloadOutcome outcome = reload(waiting.empty() ? "SIGHUP" : "PROXY RELOAD");
  for (auto& done : waiting) {
    done(outcome);
  }
}

void Reloader::cancelPending(const std::string& why) {
  std::vector<std::function<void(const ReloadOutcome&)>> waiting;
  {
    std::lock_guard<std::mutex> lock(mu_);
    closed_ = true;
    waiting.swap(pending_);
  }

  ReloadOutcome outcome;
  outcome.message = why;
  for (auto& done : waiting) {
    done(outcome);
  }
}

}  // namespace sp::control
