// One process per pool, started with posix_spawn from /proc/self/exe and stopped by PID.
#include "control/pool_supervisor.h"

#include <netdb.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <string>
#include <thread>
#include <vector>

#include <spdlog/spdlog.h>

#include "config/twemproxy_config.h"
#include "config/value_parser.h"
#include "control/service_notifier.h"
#include "core/log_sink.h"
#include "net/listener.h"

extern char** environ;

namespace sp::control {
namespace {

constexpr std::chrono::seconds kStartTimeout{30};
constexpr std::chrono::seconds kStopGrace{10};

struct PoolProcess {
  std::string name;
  std::string listen_host;
  uint16_t listen_port = 0;  // 0: the pool listens on listen_unix only
  std::string listen_unix;
  std::string metrics;  // host:port, or "off"
  pid_t pid = -1;
};

// The child's command line: the same file, one pool, its own metrics port; the flags that apply
// to every pool are passed on, the pidfile stays the supervisor's.
std::vector<std::string> childArgs(const config::CommandLine& cmdline, const PoolProcess& pool) {
  std::vector<std::string> args = {
      "shardproxy",       "--twemproxy-config", cmdline.twemproxy_config, "--pool", pool.name,
      "--metrics-listen", pool.metrics};
  if (cmdline.workers >= 0) {
    args.insert(args.end(), {"--workers", std::to_string(cmdline.workers)});
  }
  if (!cmdline.log_level.empty()) {
    args.insert(args.end(), {"--log-level", cmdline.log_level});
  }
  if (!cmdline.log_file.empty()) {
    args.insert(args.end(), {"--log-file", cmdline.log_file});
  }
  if (cmdline.no_io_uring) {
    args.emplace_back("--no-io-uring");
  }
  return args;
}

// The environment without NOTIFY_SOCKET and WATCHDOG_*: only the supervisor talks to systemd.
std::vector<std::string> childEnvironment() {
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string_view entry(*e);
    if (entry.starts_with("NOTIFY_SOCKET=") || entry.starts_with("WATCHDOG_")) {
      continue;
    }
    env.emplace_back(entry);
  }
  return env;
}

bool spawnPool(const config::CommandLine& cmdline, PoolProcess* pool) {
  std::vector<std::string> args = childArgs(cmdline, *pool);
  std::vector<std::string> env = childEnvironment();
  std::vector<char*> argv;
  std::vector<char*> envp;
  for (std::string& a : args) {
    argv.push_back(a.data());
  }
  argv.push_back(nullptr);
  for (std::string& e : env) {
    envp.push_back(e.data());
  }
  envp.push_back(nullptr);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&attr, &none);  // the child blocks what it waits for itself
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK);
  const int rc =
      posix_spawn(&pool->pid, "/proc/self/exe", nullptr, &attr, argv.data(), envp.data());
  posix_spawnattr_destroy(&attr);
  if (rc != 0) {
    spdlog::error("pool {}: cannot start a process: {}", pool->name, std::strerror(rc));
    pool->pid = -1;
    return false;
  }
  return true;
}

// A pool is up when its listen address takes a connection (closed at once).
bool accepts(const std::string& host, uint16_t port) {
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found) != 0) {
    return false;
  }
  bool ok = false;
  for (addrinfo* a = found; a != nullptr && !ok; a = a->ai_next) {
    const int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) {
      continue;
    }
    const timeval limit{0, 200000};
    ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &limit, sizeof(limit));
    ok = ::connect(fd, a->ai_addr, a->ai_addrlen) == 0;
    ::close(fd);
  }
  ::freeaddrinfo(found);
  return ok;
}

void signalAll(const std::vector<PoolProcess>& pools, int sig) {
  for (const PoolProcess& p : pools) {
    if (p.pid > 0) {
      ::kill(p.pid, sig);
    }
  }
}

// Reaps every exited child; returns the first pool (not already stopping) that exited.
const PoolProcess* reap(std::vector<PoolProcess>& pools, int* status_out) {
  const PoolProcess* exited = nullptr;
  for (PoolProcess& p : pools) {
    int status = 0;
    if (p.pid > 0 && ::waitpid(p.pid, &status, WNOHANG) == p.pid) {
      if (exited == nullptr) {
        exited = &p;
        *status_out = status;
      }
      p.pid = 0;  // gone; the name stays for the message
    }
  }
  return exited;
}

void stopAll(std::vector<PoolProcess>& pools, int sig, std::chrono::seconds grace) {
  signalAll(pools, sig);
  const auto deadline = std::chrono::steady_clock::now() + grace;
  for (PoolProcess& p : pools) {
    while (p.pid > 0) {
      int status = 0;
      if (::waitpid(p.pid, &status, WNOHANG) == p.pid) {
        p.pid = 0;
      } else if (std::chrono::steady_clock::now() > deadline) {
        spdlog::warn("pool {}: still running after {} s, killing it", p.name, grace.count());
        ::kill(p.pid, SIGKILL);
        ::waitpid(p.pid, &status, 0);
        p.pid = 0;
      } else {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
    }
  }
}

std::string describe(int status) {
  if (WIFEXITED(status)) {
    return "exited with status " + std::to_string(WEXITSTATUS(status));
  }
  if (WIFSIGNALED(status)) {
    return "was killed by signal " + std::to_string(WTERMSIG(status)) + " (" +
           strsignal(WTERMSIG(status)) + ")";
  }
  return "stopped";
}

}  // namespace

int superviseTwemproxyPools(const config::CommandLine& cmdline,
                            const std::vector<std::string>& names) {
  // Every pool is loaded and checked before anything starts.
  std::vector<PoolProcess> pools;
  std::string metrics_host;
  uint16_t metrics_port = 0;
  config::Config first;
  bool failed = false;
  for (size_t i = 0; i < names.size(); ++i) {
    config::CommandLine one = cmdline;
    one.pool = names[i];
    config::Config c;
    const auto errors = config::buildConfig(one, &c);
    for (const auto& e : errors) {
      std::fprintf(stderr, "shardproxy: %s\n", e.toString().c_str());
    }
    failed = failed || !errors.empty();
    if (i == 0) {
      first = c;
      if (!c.metrics_listen.empty()) {  // checked by the validator
        static_cast<void>(config::parseHostPort(c.metrics_listen, &metrics_host, &metrics_port));
      }
    }
    PoolProcess p{names[i], c.listen_host, c.listen_port, c.listen_unix, "off", -1};
    if (metrics_port != 0 && metrics_port + i <= 65535) {
      p.metrics = config::formatHostPort(metrics_host, static_cast<uint16_t>(metrics_port + i));
    }
    pools.push_back(std::move(p));
  }
  if (failed) {
    return 2;
  }
  if (Status logging = configureLogging(first.log_file); !logging.ok()) {
    std::fprintf(stderr, "shardproxy: %s\n", logging.message().c_str());
    return 1;
  }
  sigset_t signals;
  sigemptyset(&signals);
  for (int s : {SIGTERM, SIGINT, SIGHUP, SIGUSR1, SIGCHLD}) {
    sigaddset(&signals, s);
  }
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  for (PoolProcess& p : pools) {
    if (!spawnPool(cmdline, &p)) {
      stopAll(pools, SIGTERM, kStopGrace);
      return 1;
    }
    spdlog::info("pool {}: pid {} serving {}, metrics {}", p.name, p.pid,
                 p.listen_port != 0 ? config::formatHostPort(p.listen_host, p.listen_port)
                                    : "unix:" + p.listen_unix,
                 p.metrics);
  }
  // Ready when every pool accepts connections (or gave up: then exit like it).
  ServiceNotifier notifier;
  const auto start_deadline = std::chrono::steady_clock::now() + kStartTimeout;
  size_t ready = 0;
  while (ready < pools.size()) {
    int status = 0;
    if (const PoolProcess* gone = reap(pools, &status)) {
      spdlog::error("pool {} {} while starting; stopping the other pools", gone->name,
                    describe(status));
      stopAll(pools, SIGTERM, kStopGrace);
      return 1;
    }
    ready = 0;
    for (const PoolProcess& p : pools) {
      const bool up = p.listen_port != 0 ? accepts(p.listen_host, p.listen_port)
                                         : net::unixSocketAnswers(p.listen_unix);
      ready += up ? 1 : 0;
    }
    if (std::chrono::steady_clock::now() > start_deadline) {
      spdlog::error("{} of {} pools listening after {} s; stopping them", ready, pools.size(),
                    kStartTimeout.count());
      stopAll(pools, SIGTERM, kStopGrace);
      return 1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  notifier.ready("serving " + std::to_string(pools.size()) + " twemproxy pools");
  spdlog::info("serving {} pools of {}", pools.size(), cmdline.twemproxy_config);

  const uint64_t watchdog_ms = notifier.watchdogIntervalMs();
  const uint64_t wait_ms = watchdog_ms > 0 ? std::min<uint64_t>(watchdog_ms, 1000) : 1000;
  for (;;) {
    const timespec wait{static_cast<time_t>(wait_ms / 1000),
                        static_cast<long>(wait_ms % 1000 * 1000000)};
    const int sig = sigtimedwait(&signals, nullptr, &wait);
    int status = 0;
    if (const PoolProcess* gone = reap(pools, &status)) {
      spdlog::error("pool {} {}; stopping the other pools", gone->name, describe(status));
      notifier.stopping();
      stopAll(pools, SIGTERM, kStopGrace);
      return 1;
    }
    if (watchdog_ms > 0) {
      notifier.watchdog(true);
    }
    if (sig == SIGHUP || sig == SIGUSR1) {
      if (sig == SIGUSR1) {
        if (Status reopened = reopenLogFile(); !reopened.ok()) {
          spdlog::error("SIGUSR1: {}; still writing to the file open before", reopened.message());
        }
      }
      spdlog::info("{}: passed on to every pool", sig == SIGHUP ? "SIGHUP" : "SIGUSR1");
      signalAll(pools, sig);
    } else if (sig == SIGTERM || sig == SIGINT) {
      spdlog::info("{}: stopping every pool", sig == SIGTERM ? "SIGTERM" : "SIGINT");
      notifier.stopping();
      stopAll(pools, SIGTERM, std::chrono::seconds(first.shutdown_timeout_ms / 1000) + kStopGrace);
      spdlog::info("every pool stopped");
      return 0;
    }
  }
}

}  // namespace sp::control
