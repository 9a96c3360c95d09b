// shardproxy: flags and config, signals, listening sockets, worker threads, the metrics endpoint
// and live reload. Only the main thread takes signals (sigwait): SIGHUP reloads the config file,
// SIGINT/SIGTERM finish the requests in flight and exit.
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <memory>
#include <thread>
#include <vector>

#include <spdlog/spdlog.h>

#include "config/loader.h"
#include "config/topology_builder.h"
#include "config/twemproxy_config.h"
#include "config/value_parser.h"
#include "control/keyspace_poller.h"
#include "control/pool_supervisor.h"
#include "control/proxy_control.h"
#include "control/reload.h"
#include "control/service_notifier.h"
#include "control/stats_collector.h"
#include "control/tls_contexts.h"
#include "control/topology_source.h"
#include "core/allocator.h"
#include "core/log.h"
#include "core/log_sink.h"
#include "core/status.h"
#include "metrics/metrics_server.h"
#include "net/fd_budget.h"
#include "net/health.h"
#include "net/listener.h"
#include "net/proxy_context.h"
#include "net/worker.h"
#include "session/worker_clients.h"

namespace {

constexpr std::chrono::milliseconds kKeyspaceRefresh{2000};

int printErrors(const std::vector<sp::config::ConfigError>& errors) {
  for (const auto& e : errors) {
    std::fprintf(stderr, "shardproxy: %s\n", e.toString().c_str());
  }
  std::fprintf(stderr, "shardproxy: %zu configuration error%s\n", errors.size(),
               errors.size() == 1 ? "" : "s");
  return 2;
}

// "<pid>\n" into `path`, replacing what was there; nothing when no pidfile was asked for.
sp::Status writePidfile(const std::string& path) {
  if (path.empty()) {
    return sp::Status();
  }
  FILE* f = std::fopen(path.c_str(), "we");
  if (f == nullptr) {
    return sp::Status::failure("--pidfile " + path + ": " + std::strerror(errno));
  }
  const bool ok = std::fprintf(f, "%d\n", static_cast<int>(getpid())) > 0;
  if (std::fclose(f) != 0 || !ok) {
    return sp::Status::failure("--pidfile " + path + ": cannot write it");
  }
  return sp::Status();
}

// Ports tried after the default metrics port when it is taken, so that a second proxy on a host
// starts with its own endpoint instead of failing.
constexpr int kMetricsFallbackPorts = 10;

// Starts the metrics endpoint on metrics.listen; *address is where it listens ("" when it does
// not). A metrics.listen that was given must be free (it fails otherwise); the default, when
// taken, moves to the next free port of kMetricsFallbackPorts, or the proxy runs without one.
sp::Status startMetrics(sp::metrics::MetricsServer& server, const sp::config::Config& config,
                        const std::shared_ptr<prometheus::Collectable>& collector,
                        std::string* address) {
  if (config.metrics_listen.empty()) {
    address->clear();
    return sp::Status();
  }
  sp::Status started = server.start(config.metrics_listen, collector);
  if (started.ok()) {
    *address = config.metrics_listen;
    return started;
  }
  if (config.metrics_listen_given) {
    return started;
  }
  std::string host;
  uint16_t port = 0;
  // checked by the validator
  static_cast<void>(sp::config::parseHostPort(config.metrics_listen, &host, &port));
  for (int i = 1; i <= kMetricsFallbackPorts && port + i <= 65535; ++i) {
    const std::string next = sp::config::formatHostPort(host, static_cast<uint16_t>(port + i));
    if (server.start(next, collector).ok()) {
      spdlog::warn(
          "metrics: {} is in use (another shardproxy?); serving /metrics on {} instead; "
          "set metrics.listen or --metrics-listen to choose",
          config.metrics_listen, next);
      *address = next;
      return sp::Status();
    }
  }
  spdlog::warn(
      "metrics: {} and the {} ports after it are in use; running without a metrics "
      "endpoint; set metrics.listen or --metrics-listen to choose one",
      config.metrics_listen, kMetricsFallbackPorts);
  address->clear();
  return sp::Status();
}

// Closes the listening sockets of openListeners and removes the Unix socket's file.
void closeListeners(const sp::config::Config& config,
                    const std::vector<std::vector<sp::net::ListenSocket>>& fds,
                    bool remove_unix_file = true) {
  for (const auto& worker_fds : fds) {
    for (const sp::net::ListenSocket& socket : worker_fds) {
      ::close(socket.fd);
    }
  }
  if (remove_unix_file && !config.listen_unix.empty()) {
    ::unlink(config.listen_unix.c_str());
  }
}

// The ports the listeners bound (0: none), as the kernel chose them for a port 0 request.
struct BoundPorts {
  uint16_t plain = 0;
  uint16_t tls = 0;
};

// One SO_REUSEPORT socket per worker on host:*port, into each (*fds)[i]; *port becomes the port
// bound.
sp::Status openReusePortListeners(const std::string& host, uint16_t* port, bool tls,
                                  std::vector<std::vector<sp::net::ListenSocket>>* fds) {
  if (sp::net::portTaken(host, *port)) {
    return sp::Status::failure(sp::config::formatHostPort(host, *port) + " is already in use");
  }
  for (auto& worker_fds : *fds) {
    uint16_t bound = 0;
    int fd = -1;
    if (sp::Status bound_status = sp::net::bindListenSocket(host, *port, &bound, &fd);
        !bound_status.ok()) {
      return bound_status;
    }
    *port = bound;
    worker_fds.push_back({fd, tls});
  }
  return sp::Status();
}

// Every worker's listening sockets, into (*fds)[i]: its own SO_REUSEPORT sockets on listen.host:
// listen.port and on tls.listen, and a copy of the one Unix socket.
sp::Status openListeners(const sp::config::Config& config,
                         std::vector<std::vector<sp::net::ListenSocket>>* fds, BoundPorts* ports) {
  ports->plain = config.listen_port;
  ports->tls = config.tls_port;
  sp::Status status;
  if (ports->plain != 0) {
    status = openReusePortListeners(config.listen_host, &ports->plain, false, fds);
  }
  const std::string& tls_host = config.tls_host.empty() ? config.listen_host : config.tls_host;
  if (status.ok() && ports->tls != 0) {
    status = openReusePortListeners(tls_host, &ports->tls, true, fds);
  }
  int unix_fd = -1;
  if (status.ok() && !config.listen_unix.empty()) {
    status = sp::net::bindUnixListenSocket(config.listen_unix, config.listen_unix_perm, &unix_fd);
    if (!status.ok()) {
      closeListeners(config, *fds, false);  // the file is another process's, or none
      return status;
    }
  }
  for (auto& worker_fds : *fds) {
    if (!status.ok() || unix_fd < 0) {
      break;
    }
    const int copy = ::fcntl(unix_fd, F_DUPFD_CLOEXEC, 0);
    if (copy < 0) {
      status = sp::Status::failure(std::string("listen.unix: ") + std::strerror(errno));
      break;
    }
    worker_fds.push_back({copy, false});
  }
  const bool unix_bound = unix_fd >= 0;
  if (unix_bound) {
    ::close(unix_fd);
  }
  if (!status.ok()) {
    closeListeners(config, *fds, unix_bound);  // only a socket file this process made
  }
  return status;
}

// "127.0.0.1:6380", "tls:127.0.0.1:6381", "unix:/run/shardproxy.sock", joined by " and ".
std::string describeListeners(const sp::config::Config& config, const BoundPorts& ports) {
  std::vector<std::string> parts;
  if (ports.plain != 0) {
    parts.push_back(sp::config::formatHostPort(config.listen_host, ports.plain));
  }
  if (ports.tls != 0) {
    parts.push_back("tls:" +
                    sp::config::formatHostPort(
                        config.tls_host.empty() ? config.listen_host : config.tls_host, ports.tls));
  }
  if (!config.listen_unix.empty()) {
    parts.push_back("unix:" + config.listen_unix);
  }
  std::string out;
  for (const std::string& part : parts) {
    out += (out.empty() ? "" : " and ") + part;
  }
  return out;
}

int superviseWithPidfile(const sp::config::CommandLine& cmdline,
                         const std::vector<std::string>& pools) {
  if (!cmdline.listen_host.empty() || cmdline.port >= 0) {
    std::fprintf(stderr,
                 "shardproxy: --listen/--port: each pool of %s listens on its own address; "
                 "name one with --pool to move it\n",
                 cmdline.twemproxy_config.c_str());
    return 2;
  }
  if (sp::Status written = writePidfile(cmdline.pidfile); !written.ok()) {
    std::fprintf(stderr, "shardproxy: %s\n", written.message().c_str());
    return 1;
  }
  const int status = sp::control::superviseTwemproxyPools(cmdline, pools);
  if (!cmdline.pidfile.empty()) {
    ::unlink(cmdline.pidfile.c_str());
  }
  return status;
}

}  // namespace

int main(int argc, char** argv) {
  sp::configureAllocator();  // before any large allocation: big buffers stay returnable
  using sp::config::CommandLine;
  CommandLine cmdline;
  auto errors = sp::config::parseCommandLine(argc, argv, &cmdline);
  if (!errors.empty()) {
    printErrors(errors);
    std::fprintf(stderr, "Try 'shardproxy --help'.\n");
    return 2;
  }
  if (cmdline.show_help) {
    std::fputs(sp::config::usage().c_str(), stdout);
    return 0;
  }
  if (cmdline.show_version) {
    std::printf("shardproxy %s\n", SHARDPROXY_VERSION);
    return 0;
  }
  // A nutcracker.yml with several pools and no --pool: one shardproxy per pool, supervised.
  if (!cmdline.twemproxy_config.empty() && cmdline.pool.empty() && !cmdline.check_config) {
    const auto pools = sp::config::twemproxyPoolNames(cmdline.twemproxy_config, &errors);
    if (!errors.empty()) {
      return printErrors(errors);
    }
    if (pools.size() > 1) {
      return superviseWithPidfile(cmdline, pools);
    }
  }
  auto loaded = std::make_shared<sp::config::Config>();
  errors = sp::config::buildConfig(cmdline, loaded.get());
  if (!errors.empty()) {
    return printErrors(errors);
  }
  const std::shared_ptr<const sp::config::Config> config = loaded;
  // The certificate and key files are read here, so --check-config reports them too.
  sp::control::TlsContexts tls;
  if (sp::Status built = sp::control::buildTlsContexts(*config, &tls); !built.ok()) {
    std::fprintf(stderr, "shardproxy: %s\n", built.message().c_str());
    return cmdline.check_config ? 2 : 1;
  }
  if (cmdline.check_config) {
    std::printf("shardproxy: configuration OK (%zu shards)\n", config->shards.size());
    return 0;
  }
  if (sp::Status logging = sp::configureLogging(config->log_file); !logging.ok()) {
    std::fprintf(stderr, "shardproxy: %s\n", logging.message().c_str());
    return 1;
  }
  sp::setLogLevel(config->log_level);
  for (const std::string& note : config->load_notes) {
    spdlog::warn("{}: {}", cmdline.configFile(), note);
  }
  // Sentinel or a Redis Cluster may supply the shards' addresses.
  sp::route::TopologyPtr topology;
  if (sp::Status resolved = sp::control::resolveTopology(loaded.get(), &topology, tls.backend);
      !resolved.ok()) {
    std::fprintf(stderr, "shardproxy: %s\n", resolved.message().c_str());
    return 1;
  }
  auto context = std::make_unique<sp::net::ProxyContext>();
  context->publish(config, topology);
  context->publishTls(tls.server, tls.backend);
  context->start_time_unix = static_cast<uint64_t>(std::time(nullptr));
  context->config_file = cmdline.configFile();
  sp::control::Reloader reloader(*context, cmdline);
  sp::control::ProxyControl control(*context);
  control.setReloader(&reloader);
  context->control = &control;

  int workers = config->workers;
  if (workers == 0) {
    workers = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  }
  // limits.max_clients against the open-files limit: lowered, with a warning, to what fits.
  if (sp::Status budget = sp::net::applyDescriptorBudget(*context, *config, *topology,
                                                         static_cast<size_t>(workers), "start-up");
      !budget.ok()) {
    std::fprintf(stderr, "shardproxy: %s\n", budget.message().c_str());
    return 1;
  }

  // Every thread started from here on (workers, the metrics server's, the keyspace poller)
  // inherits this mask: only the main thread takes signals, through sigwait.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGHUP);
  sigaddset(&signals, SIGUSR1);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  signal(SIGPIPE, SIG_IGN);

  // fds[i]: worker i's listening sockets.
  std::vector<std::vector<sp::net::ListenSocket>> fds(static_cast<size_t>(workers));
  BoundPorts ports;
  if (sp::Status opened = openListeners(*config, &fds, &ports); !opened.ok()) {
    std::fprintf(stderr, "shardproxy: %s\n", opened.message().c_str());
    return 1;
  }
  context->bound_port = ports.plain;
  context->bound_tls_port = ports.tls;
  if (sp::Status written = writePidfile(config->pidfile); !written.ok()) {
    std::fprintf(stderr, "shardproxy: %s\n", written.message().c_str());
    closeListeners(*config, fds);
    return 1;
  }

  std::vector<std::unique_ptr<sp::net::Worker>> pool;
  for (int i = 0; i < workers; ++i) {
    pool.push_back(std::make_unique<sp::net::Worker>(i, *context, std::move(fds[i]),
                                                     sp::session::buildWorkerParts));
    context->workers.push_back(pool.back().get());
  }

  auto collector = std::make_shared<sp::control::StatsCollector>(*context);
  sp::metrics::MetricsServer metrics_server;
  // Health for load balancers and supervisors, beside /metrics.
  auto page = [](const sp::net::HealthStatus& status) {
    return sp::metrics::Page{status.ok ? 200 : 503, status.text};
  };
  metrics_server.addPage("/healthz",
                         [&context, page] { return page(sp::net::liveness(*context)); });
  metrics_server.addPage("/readyz",
                         [&context, page] { return page(sp::net::readiness(*context)); });
  // Workers first, so that /healthz answers 200 from its first request; clients last, so that
  // what they see (INFO's metrics_port) is settled.
  for (auto& w : pool) {
    w->startThread();
  }
  std::string metrics_address;
  if (sp::Status started = startMetrics(metrics_server, *config, collector, &metrics_address);
      !started.ok()) {
    std::fprintf(stderr, "shardproxy: %s\n", started.message().c_str());
    for (auto& w : pool) {
      w->requestStop();
    }
    for (auto& w : pool) {
      w->join();
    }
    return 1;
  }
  context->metrics_port = metrics_server.port();
  for (auto& w : pool) {
    w->startAccepting();
  }
  sp::control::KeyspacePoller keyspace(
      context->keyspace, [&context] { return context->topology(); }, kKeyspaceRefresh,
      [&context] { return context->backendTls(); });
  keyspace.start();
  sp::control::TopologyWatcher watcher(*context);
  control.setTopologyWatcher(&watcher);
  watcher.start();
  const std::string listening = describeListeners(*config, ports);
  spdlog::info("shardproxy {} listening on {} with {} worker{} and {} shard{} ({}){}",
               SHARDPROXY_VERSION, listening, workers, workers == 1 ? "" : "s",
               topology->shardCount(), topology->shardCount() == 1 ? "" : "s",
               topology->placementSummary(),
               metrics_address.empty() ? std::string(", no metrics endpoint")
                                       : ", metrics on http://" + metrics_address + "/metrics");

  // systemd (Type=notify): ready now; with WatchdogSec=, a keep-alive every half period while
  // every worker's loop turns, so the wait for a signal has a timeout.
  sp::control::ServiceNotifier notifier;
  const std::string status =
      "serving on " + listening + " with " + std::to_string(workers) + " workers";
  notifier.ready(status);
  const uint64_t watchdog_ms = notifier.watchdogIntervalMs();
  int sig = 0;
  for (;;) {
    if (watchdog_ms > 0) {
      notifier.watchdog(sp::net::liveness(*context).ok);
      const timespec wait{static_cast<time_t>(watchdog_ms / 1000),
                          static_cast<long>(watchdog_ms % 1000 * 1000000)};
      sig = sigtimedwait(&signals, nullptr, &wait);
      if (sig < 0) {
        continue;  // the period passed (or EINTR)
      }
    } else if (sigwait(&signals, &sig) != 0) {
      continue;
    }
    if (sig == SIGHUP) {
      notifier.reloading();
      reloader.onSignal();
      notifier.ready(status);
      continue;
    }
    if (sig == SIGUSR1) {
      if (sp::Status reopened = sp::reopenLogFile(); reopened.ok()) {
        spdlog::info("SIGUSR1: log file reopened");
      } else {
        spdlog::error("SIGUSR1: {}; still writing to the file open before", reopened.message());
      }
      continue;
    }
    break;
  }
  spdlog::info("{}: finishing in-flight requests (up to {} ms), then exiting",
               sig == SIGINT ? "SIGINT" : "SIGTERM", context->config()->shutdown_timeout_ms);
  notifier.stopping();
  reloader.cancelPending("proxy shutting down");
  watcher.stop();
  // Scrapes stop reading the workers now; civetweb takes a couple of seconds to stop its
  // threads, so that runs while the workers drain.
  collector->detach();
  std::thread metrics_stop([&metrics_server] { metrics_server.stop(); });
  for (auto& w : pool) {
    w->requestStop();
  }
  for (auto& w : pool) {
    w->join();
  }
  control.setTopologyWatcher(nullptr);
  keyspace.stop();
  metrics_stop.join();
  pool.clear();
  if (!config->pidfile.empty()) {
    ::unlink(config->pidfile.c_str());
  }
  if (!config->listen_unix.empty()) {
    ::unlink(config->listen_unix.c_str());
  }
  spdlog::info("shardproxy stopped");
  return 0;
}
