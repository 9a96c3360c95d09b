// ServiceNotifier: the systemd service protocol (sd_notify, libsystemd) for Type=notify units:
// READY=1 once the workers serve, RELOADING=1 / READY=1 around a reload, STOPPING=1 on the way
// out, and WATCHDOG=1 keep-alives while /healthz would answer 200. Outside systemd
// (NOTIFY_SOCKET unset) every call is a no-op. Main thread only.
#pragma once

#include <cstdint>
#include <string>

namespace sp::control {

class ServiceNotifier {
 public:
  ServiceNotifier();

  void ready(const std::string& status);
  void reloading();
  void stopping();
  // The service manager's watchdog (WatchdogSec=): how often to call watchdog(), in ms (half
  // the timeout); 0 when there is no watchdog.
  uint64_t watchdogIntervalMs() const { return watchdog_interval_ms_; }
  // One keep-alive, only when `alive` (a stuck worker lets the watchdog fire).
  void watchdog(bool alive);

 private:
  uint64_t watchdog_interval_ms_ = 0;
};

}  // namespace sp::control
