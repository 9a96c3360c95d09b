// The control plane behind net::ControlPlane.
#include "control/proxy_control.h"

#include "control/info_report.h"
#include "control/reload.h"
#include "control/topology_source.h"

namespace sp::control {

std::string ProxyControl::info(std::string_view sections, bool admin) const {
  return infoReport(context_, sections, admin);
}

void ProxyControl::resetInfo() { resetInfoCounters(context_); }

void ProxyControl::requestReload(std::function<void(const net::ReloadOutcome&)> done) {
  if (reloader_ == nullptr) {
    done(net::ReloadOutcome{false, "no reloader"});
    return;
  }
  reloader_->request(std::move(done));
}

void ProxyControl::requestTopologyRefresh() {
  if (TopologyWatcher* watcher = watcher_.load()) {
    watcher->requestRefresh();
  }
}

}  // namespace sp::control
