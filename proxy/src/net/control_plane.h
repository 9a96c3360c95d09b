// ControlPlane: what the runtime asks of the control plane (control/), which sits above it. The
// workers and sessions reach reload, the topology watcher and the INFO text only through this
// interface, which main installs in the ProxyContext (control::ProxyControl) before the workers
// start; tests install the same or a fake.
#pragma once

#include <functional>
#include <string>
#include <string_view>

namespace sp::net {

struct ReloadOutcome {
  bool ok = false;
  std::string message;  // why it failed (every error, "; "-separated), or notes on success
};

class ControlPlane {
 public:
  virtual ~ControlPlane() = default;

  // INFO: the reply text for `sections`, space-separated section names in any case, as INFO takes
  // them ("" or "default": the default sections; "all" or "everything": every section, the
  // commandstats and latencystats included; unknown names add nothing). `admin` false (a
  // non-admin user of auth.users) leaves out the shards section, which names the backends.
  virtual std::string info(std::string_view sections, bool admin) const = 0;
  // CONFIG RESETSTAT's part in the proxy: INFO's counters start again from 0.
  virtual void resetInfo() = 0;
  // PROXY RELOAD, from any thread: whether this proxy can reload (it runs from a configuration
  // file, with a reloader); then requestReload, whose done(outcome) runs on the main thread once
  // the reload is over.
  virtual bool canReload() const = 0;
  virtual void requestReload(std::function<void(const ReloadOutcome&)> done) = 0;
  // Cluster mode, any thread: a MOVED reply or a failed node asks for a CLUSTER SLOTS refresh
  // soon (cheap and coalesced; nothing when no watcher runs).
  virtual void requestTopologyRefresh() = 0;
};

}  // namespace sp::net
