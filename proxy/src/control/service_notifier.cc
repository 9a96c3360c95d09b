// ServiceNotifier (service_notifier.h).
#include "control/service_notifier.h"

#include <systemd/sd-daemon.h>

#include <algorithm>

#include <spdlog/spdlog.h>

namespace sp::control {

ServiceNotifier::ServiceNotifier() {
  uint64_t usec = 0;
  if (sd_watchdog_enabled(0, &usec) > 0 && usec > 0) {
    watchdog_interval_ms_ = std::max<uint64_t>(1, usec / 2000);
  }
}

void ServiceNotifier::ready(const std::string& status) {
  sd_notifyf(0, "READY=1\nSTATUS=%s", status.c_str());
}

void ServiceNotifier::reloading() { sd_notify(0, "RELOADING=1\nSTATUS=reloading"); }

void ServiceNotifier::stopping() {
  sd_notify(0, "STOPPING=1\nSTATUS=finishing in-flight requests");
}

void ServiceNotifier::watchdog(bool alive) {
  if (watchdog_interval_ms_ == 0) {
    return;
  }
  if (alive) {
    sd_notify(0, "WATCHDOG=1");
  } else {
    spdlog::error("a worker is stuck (PROXY HEALTH says which): watchdog keep-alive withheld");
  }
}

}  // namespace sp::control
