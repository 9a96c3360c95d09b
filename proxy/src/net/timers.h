// The clock and one-shot timers of a worker's loop, behind a seam so that unit tests drive time
// (tests/fakes/fake_timers.h) while the sockets stay real. The worker's sweeps (health pings, idle
// clients, the shutdown drain, memory trim), the shard connections (connect timeouts, reconnect and
// ejection delays, stall checks), deferred replies and cluster retries, and the clients' idle clock
// all take their time from here; a periodic owner re-arms its timer from the callback.
//
// nowMs() is the loop's time as libuv caches it at the start of each turn, read inline;
// freshNowMs() reads the clock now. A Timer fires its callback once, on the loop's thread, delay_ms
// after start(); start() re-arms it, stop() disarms it, and destroying it disarms it for good (its
// callback never runs after that; destroying it from within that callback is safe).
#pragma once

#include <uv.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string_view>

namespace sp::net {

class Timer {
 public:
  virtual ~Timer() = default;
  virtual void start(uint64_t delay_ms) = 0;
  virtual void stop() = 0;
};

class Timers {
 public:
  virtual ~Timers() = default;
  uint64_t nowMs() const { return *now_ms_; }
  uint64_t freshNowMs() {
    refresh();
    return *now_ms_;
  }
  // `name` (a literal: "worker.ping", "shard.link", ...) says what the timer is for; fakes let a
  // test pick timers out by it, the loop's ignore it.
  virtual std::unique_ptr<Timer> timer(std::string_view name, std::function<void()> fire) = 0;

 protected:
  explicit Timers(const uint64_t* now_ms) : now_ms_(now_ms) {}
  virtual void refresh() = 0;

 private:
  const uint64_t* now_ms_;  // libuv's cached loop time, or a fake's
};

// The real ones: uv_timer_t on `loop`, whose time they read.
class LoopTimers final : public Timers {
 public:
  explicit LoopTimers(uv_loop_t* loop) : Timers(&loop->time), loop_(loop) {}
  std::unique_ptr<Timer> timer(std::string_view name, std::function<void()> fire) override;

 private:
  void refresh() override { uv_update_time(loop_); }
  uv_loop_t* loop_;
};

}  // namespace sp::net
