// A control plane for tests of the runtime (net/control_plane.h): it answers INFO with a fixed
// text, counts what it is asked, and reloads only when a test says it can, answering each request
// with the outcome the test set.
#pragma once

#include <atomic>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "net/control_plane.h"

namespace sp::fakes {

class FakeControlPlane final : public net::ControlPlane {
 public:
  std::string info(std::string_view sections, bool admin) const override {
    std::lock_guard<std::mutex> lock(mu_);
    info_requests_.push_back(std::string(sections) + (admin ? "" : " (not admin)"));
    return "# Fake\r\nsections:" + std::string(sections) + "\r\n";
  }
  void resetInfo() override { ++resets; }
  bool canReload() const override { return can_reload; }
  void requestReload(std::function<void(const net::ReloadOutcome&)> done) override {
    ++reloads;
    done(outcome);
  }
  void requestTopologyRefresh() override { ++topology_refreshes; }

  std::vector<std::string> infoRequests() const {
    std::lock_guard<std::mutex> lock(mu_);
    return info_requests_;
  }

  std::atomic<bool> can_reload{false};
  net::ReloadOutcome outcome{true, ""};  // set before the reload is requested
  std::atomic<int> resets{0};
  std::atomic<int> reloads{0};
  std::atomic<int> topology_refreshes{0};

 private:
  mutable std::mutex mu_;
  mutable std::vector<std::string> info_requests_;  // guarded by mu_
};

}  // namespace sp::fakes
