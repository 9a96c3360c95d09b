// ProxyControl: the control plane as the runtime sees it (net/control_plane.h). main builds one
// before the workers start and hands it the reloader and, once it runs, the topology watcher.
#pragma once

#include <atomic>
#include <functional>
#include <string>
#include <string_view>

#include "net/control_plane.h"

namespace sp::net {
struct ProxyContext;
}

namespace sp::control {

class Reloader;
class TopologyWatcher;

class ProxyControl final : public net::ControlPlane {
 public:
  explicit ProxyControl(net::ProxyContext& context) : context_(context) {}

  // Main thread, before the workers start; nullptr (the default): PROXY RELOAD is unavailable.
  void setReloader(Reloader* reloader) { reloader_ = reloader; }
  // Main thread, once the watcher runs and before it stops (nullptr again).
  void setTopologyWatcher(TopologyWatcher* watcher) { watcher_.store(watcher); }

  std::string info(std::string_view sections, bool admin) const override;
  void resetInfo() override;
  bool canReload() const override { return reloader_ != nullptr; }
  // Without a reloader, done is answered at once with the refusal.
  void requestReload(std::function<void(const net::ReloadOutcome&)> done) override;
  void requestTopologyRefresh() override;

 private:
  net::ProxyContext& context_;
  Reloader* reloader_ = nullptr;
  std::atomic<TopologyWatcher*> watcher_{nullptr};
};

}  // namespace sp::control
