// Redis Sentinel as the source of each shard's primary address: a one-shot query at start-up and
// a watcher thread that follows +switch-master events. Control path only (BlockingClient, plain or
// TLS, on its own thread); the workers learn of a switch through the proxy's reload path.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "core/status.h"
#include "tls/tls_context.h"

namespace sp::route {

struct SentinelAddress {
  std::string host;
  uint16_t port = 0;
};

// Asks the sentinels in turn for `master`'s primary (SENTINEL get-master-addr-by-name); the first
// that knows it answers. `tls`: the client context for the sentinels (nullptr: plain). The failure
// names every sentinel's.
Status querySentinelPrimary(const std::vector<SentinelAddress>& sentinels,
                            const std::string& password, const std::string& master,
                            const std::shared_ptr<const tls::TlsContext>& tls, std::string* host,
                            uint16_t* port);

// Subscribes to +switch-master on one sentinel at a time (moving to the next when one fails) and
// calls on_switch(master, host, port) for the masters it watches. After every (re)subscription it
// re-queries each master, so a switch that happened while it was disconnected is not missed.
class SentinelWatcher {
 public:
  using OnSwitch =
      std::function<void(const std::string& master, const std::string& host, uint16_t port)>;
  // The TLS context for the next connection to a sentinel (nullptr: plain); asked on every
  // (re)connection, so one rebuilt by a reload is taken up.
  using TlsSource = std::function<std::shared_ptr<const tls::TlsContext>()>;

  SentinelWatcher(std::vector<SentinelAddress> sentinels, std::string password,
                  std::vector<std::string> masters, TlsSource tls, OnSwitch on_switch);
  ~SentinelWatcher();
  SentinelWatcher(const SentinelWatcher&) = delete;
  SentinelWatcher& operator=(const SentinelWatcher&) = delete;

  void start();
  void stop();  // joins the thread; safe to call twice

 private:
  void run();
  bool watchedMaster(const std::string& name) const;

  std::vector<SentinelAddress> sentinels_;
  std::string password_;
  std::vector<std::string> masters_;
  TlsSource tls_;
  OnSwitch on_switch_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace sp::route
