// Timers on a clock the test moves (net/timers.h's seam): a worker given these with
// Worker::useTimers keeps real sockets but takes every timer (its sweeps, the shard connections'
// timeouts and delays, deferred replies) and the clients' idle clock from a clock that stands
// still until advance(). Tests pick timers out by name prefix ("shard.", "worker.ping").
// Everything here runs on the worker's thread (tests call it through fakes::onWorker).
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <string_view>
#include <utility>
#include <vector>

#include "net/timers.h"

namespace sp::fakes {

class FakeTimers final : public net::Timers {
 public:
  FakeTimers() : Timers(&now_ms_) {}

  std::unique_ptr<net::Timer> timer(std::string_view name, std::function<void()> fire) override {
    return std::make_unique<FakeTimer>(this, name, std::move(fire));
  }

  // Moves the clock forward by `ms`, firing every timer that falls due on the way, earliest
  // first (timers armed by a callback fire too when they fall due within the same advance).
  void advance(uint64_t ms) {
    const uint64_t until = now_ms_ + ms;
    while (FakeTimer* next = earliestDueBy(until)) {
      now_ms_ = std::max(now_ms_, next->due_ms);
      next->armed = false;
      const std::function<void()> fire = next->fire;  // the callback may destroy the timer
      fire();
    }
    now_ms_ = until;
  }

  // How many timers whose name starts with `prefix` ("shard.", "worker.ping") are armed, and
  // when the next of them is due (0: none).
  size_t armedCount(std::string_view prefix) const {
    return static_cast<size_t>(
        std::count_if(timers_.begin(), timers_.end(),
                      [&](const FakeTimer* t) { return t->armed && t->name.starts_with(prefix); }));
  }
  uint64_t nextDueInMs(std::string_view prefix) const {
    const FakeTimer* next = earliestDueBy(UINT64_MAX, prefix);
    return next == nullptr ? 0 : next->due_ms - now_ms_;
  }

 private:
  struct FakeTimer final : net::Timer {
    FakeTimer(FakeTimers* owner, std::string_view n, std::function<void()> f)
        : timers(owner), name(n), fire(std::move(f)) {
      timers->timers_.push_back(this);
    }
    ~FakeTimer() override { std::erase(timers->timers_, this); }
    void start(uint64_t delay_ms) override {
      armed = true;
      due_ms = timers->now_ms_ + delay_ms;
      order = timers->next_order_++;
    }
    void stop() override { armed = false; }

    FakeTimers* timers;
    std::string_view name;  // a literal
    std::function<void()> fire;
    bool armed = false;
    uint64_t due_ms = 0;
    uint64_t order = 0;  // libuv's tie-break: earlier start first
  };

  FakeTimer* earliestDueBy(uint64_t until, std::string_view prefix = {}) const {
    FakeTimer* best = nullptr;
    for (FakeTimer* t : timers_) {
      if (t->armed && t->due_ms <= until && t->name.starts_with(prefix) &&
          (best == nullptr || t->due_ms < best->due_ms ||
           (t->due_ms == best->due_ms && t->order < best->order))) {
        best = t;
      }
    }
    return best;
  }
  void refresh() override {}

  uint64_t now_ms_ = 1'000'000;  // far from 0, as a loop's clock is
  uint64_t next_order_ = 0;
  std::vector<FakeTimer*> timers_;
};

}  // namespace sp::fakes
