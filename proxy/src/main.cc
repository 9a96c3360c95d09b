// shardproxy: flags and config, signals, listening sockets, worker threads.
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <ctime>
#include <memory>
#include <thread>
#include <vector>

#include <spdlog/spdlog.h>

#include "config/loader.h"
#include "config/topology_builder.h"
#include "core/log.h"
#include "net/listener.h"
#include "net/proxy_context.h"
#include "net/worker.h"

namespace {

int printErrors(const std::vector<sp::config::ConfigError>& errors) {
  for (const auto& e : errors) {
    std::fprintf(stderr, "shardproxy: %s\n", e.toString().c_str());
  }
  std::fprintf(stderr, "shardproxy: %zu configuration error%s\n", errors.size(),
               errors.size() == 1 ? "" : "s");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
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
  auto context = std::make_unique<sp::net::ProxyContext>();
  errors = sp::config::buildConfig(cmdline, &context->config);
  if (!errors.empty()) {
    return printErrors(errors);
  }
  const sp::config::Config& config = context->config;
  if (cmdline.check_config) {
    std::printf("shardproxy: configuration OK (%zu shards)\n", config.shards.size());
    return 0;
  }
  sp::setLogLevel(config.log_level);
  context->topology = sp::config::makeTopology(config);
  context->start_time_unix = static_cast<uint64_t>(std::time(nullptr));

  int workers = config.workers;
  if (workers == 0) {
    workers = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  }

  // Workers inherit this mask: only the main thread takes signals, through sigwait.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  signal(SIGPIPE, SIG_IGN);

  std::vector<int> fds;
  uint16_t port = config.listen_port;
  for (int i = 0; i < workers; ++i) {
    std::string error;
    uint16_t bound = 0;
    int fd = sp::net::bindListenSocket(config.listen_host, port, &bound, &error);
    if (fd < 0) {
      std::fprintf(stderr, "shardproxy: %s\n", error.c_str());
      for (int open_fd : fds) {
        close(open_fd);
      }
      return 1;
    }
    port = bound;
    fds.push_back(fd);
  }
  context->bound_port = port;

  std::vector<std::unique_ptr<sp::net::Worker>> pool;
  for (int i = 0; i < workers; ++i) {
    pool.push_back(std::make_unique<sp::net::Worker>(i, *context, fds[i]));
    context->workers.push_back(pool.back().get());
  }
  for (auto& w : pool) {
    w->startThread();
  }
  spdlog::info("shardproxy {} listening on {}:{} with {} worker{} and {} shard{}",
               SHARDPROXY_VERSION, config.listen_host, port, workers, workers == 1 ? "" : "s",
               config.shards.size(), config.shards.size() == 1 ? "" : "s");

  for (;;) {
    int sig = 0;
    if (sigwait(&signals, &sig) != 0) {
      continue;
    }
    if (sig == SIGHUP) {
      spdlog::warn("SIGHUP: live reload is not supported yet; configuration unchanged");
      continue;
    }
    spdlog::info("{}: finishing in-flight requests (up to {} ms), then exiting",
                 sig == SIGINT ? "SIGINT" : "SIGTERM", config.shutdown_timeout_ms);
    break;
  }
  for (auto& w : pool) {
    w->requestStop();
  }
  for (auto& w : pool) {
    w->join();
  }
  pool.clear();
  spdlog::info("shardproxy stopped");
  return 0;
}
