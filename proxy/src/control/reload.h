// Live reload (SIGHUP or PROXY RELOAD). On the main thread, off every worker's loop: re-read the
// config file with the original command-line overrides, validate it whole, build a new immutable
// Topology, publish both in the net::ProxyContext and hand them to each worker through its mailbox
// (Worker::applyConfig swaps between loop iterations and reconciles its backend connections).
// An invalid file is rejected whole: nothing changes, the errors are logged and counted
// (shardproxy_config_reloads_total{result="failure"}). Keys that need a restart (listen.*,
// workers, metrics.listen) keep their running values, with a warning.
#pragma once

#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "config/loader.h"
#include "net/control_plane.h"

namespace sp::net {
struct ProxyContext;
}

namespace sp::control {

using net::ReloadOutcome;

class Reloader {
 public:
  Reloader(net::ProxyContext& context, config::CommandLine cmdline);

  // Main thread. `trigger` names the cause in the log ("SIGHUP", "PROXY RELOAD").
  ReloadOutcome reload(std::string_view trigger);

  // Any thread: asks the main thread to reload (it wakes it with SIGHUP); done(outcome) runs on
  // the main thread once the new configuration has been handed to the workers.
  void request(std::function<void(const ReloadOutcome&)> done);

  // Main thread, on SIGHUP: one reload for the signal and every request queued before it.
  void onSignal();

  // Main thread, at shutdown: answers the queued requests without reloading; later requests are
  // answered at once.
  void cancelPending(const std::string& why);

 private:
  // A reload that stops at `why`: logged, counted, the running configuration kept.
  ReloadOutcome refuse(std::string_view trigger, const std::string& why);

  net::ProxyContext& context_;
  config::CommandLine cmdline_;
  std::mutex mu_;
  std::vector<std::function<void(const ReloadOutcome&)>> pending_;  // guarded by mu_
  bool closed_ = false;                                             // guarded by mu_
};

}  // namespace sp::control
