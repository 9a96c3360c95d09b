// One client thread: its loop, its connections, pacing, timeouts and the end of a phase.
#include "bench_thread.h"

#include <sys/timerfd.h>
#include <unistd.h>

#include <cmath>

#include "bench_connection.h"
#include "core/clock.h"
#include "fd_lifecycle.h"

namespace sp::bench {
namespace {

constexpr uint64_t kTickMs = 50;

}  // namespace

BenchThread::BenchThread(const PhaseContext& ctx, uint32_t thread_index, uint32_t first_slot,
                         uint32_t connections, double rate, std::vector<uint64_t> budgets)
    : ctx_(ctx), index_(thread_index), rate_(rate), stats_(ctx.phase->commands.size()) {
  {
    FdLifecycleGuard fds;  // epoll, eventfd and signal pipe
    uv_loop_init(&loop_);
  }
  reconnects_left_ = ctx.options->max_reconnects;
  for (uint32_t i = 0; i < connections; ++i) {
    total_budget_ =
        budgets[i] > UINT64_MAX - total_budget_ ? UINT64_MAX : total_budget_ + budgets[i];
    conns_.push_back(std::make_unique<BenchConnection>(this, i, first_slot + i, budgets[i]));
  }
}

BenchThread::~BenchThread() {
  if (pacer_fd_ >= 0) {
    ::close(pacer_fd_);
  }
}

void BenchThread::run() {
  {
    FdLifecycleGuard fds;  // the loop's eventfd, created with its first async handle
    uv_async_init(&loop_, &stop_async_, &BenchThread::onStopAsync);
  }
  stop_async_.data = this;
  {
    std::lock_guard<std::mutex> lock(async_mu_);
    async_alive_ = true;
  }
  uv_timer_init(&loop_, &tick_timer_);
  tick_timer_.data = this;
  uv_timer_start(&tick_timer_, &BenchThread::onTick, kTickMs, kTickMs);
  uv_timer_init(&loop_, &deadline_timer_);
  deadline_timer_.data = this;
  if (rate_ > 0) {
    {
      FdLifecycleGuard fds;
      pacer_fd_ = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
    }
    if (pacer_fd_ < 0) {
      fail("timerfd_create failed");
    } else {
      uv_poll_init(&loop_, &pacer_poll_, pacer_fd_);
      pacer_poll_.data = this;
      pacer_active_ = true;
    }
  }
  if (!stopping_) {
    if (conns_.empty()) {
      shutdown();
    }
    for (auto& c : conns_) {
      c->connect();
      if (stopping_) {
        break;
      }
    }
  }
  uv_run(&loop_, UV_RUN_DEFAULT);
  // Every handle is closed by now; run once more so their close callbacks have all run.
  uv_run(&loop_, UV_RUN_DEFAULT);
  {
    FdLifecycleGuard fds;  // closes the loop's descriptors
    uv_loop_close(&loop_);
  }
  if (end_ns_ == 0) {
    end_ns_ = monoNanos();
  }
  publishProgress();
  finished_.store(true, std::memory_order_release);
}

void BenchThread::stop() {
  std::lock_guard<std::mutex> lock(async_mu_);
  if (async_alive_) {
    uv_async_send(&stop_async_);
  }
}

void BenchThread::onStopAsync(uv_async_t* handle) {
  auto* self = static_cast<BenchThread*>(handle->data);
  if (!self->stopping_) {
    self->stopping_ = true;
    self->end_ns_ = monoNanos();
    self->shutdown();
  }
}

void BenchThread::onConnectionReady() {
  if (++ready_ == conns_.size()) {
    startLoad();
  }
}

void BenchThread::startLoad() {
  started_ = true;
  start_ns_ = monoNanos();
  if (rate_ > 0) {
    pacer_ = RatePacer(rate_, static_cast<uint32_t>(conns_.size()), start_ns_);
  }
  const double limit_s =
      ctx_.options->test_time_s > 0 ? ctx_.options->test_time_s : ctx_.options->time_limit_s;
  if (limit_s > 0) {
    const auto ms = static_cast<uint64_t>(std::llround(limit_s * 1000));
    uv_timer_start(&deadline_timer_, &BenchThread::onDeadline, ms, 0);
  }
  for (auto& c : conns_) {
    c->fill(start_ns_);
    if (stopping_) {
      return;
    }
    c->drain();  // a zero budget closes at once
  }
  if (pacer_active_) {
    uv_poll_start(&pacer_poll_, UV_READABLE, &BenchThread::onPacer);
    released_slots_ = pacer_.slotsDue(start_ns_);
    armPacer();
  }
}

void BenchThread::armPacer() {
  if (draining_ || stopping_ || released_slots_ >= total_budget_) {
    return;
  }
  const uint64_t at = pacer_.slotTime(released_slots_);
  itimerspec its{};
  its.it_value.tv_sec = static_cast<time_t>(at / 1000000000ull);
  its.it_value.tv_nsec = static_cast<long>(at % 1000000000ull);
  timerfd_settime(pacer_fd_, TFD_TIMER_ABSTIME, &its, nullptr);
}

void BenchThread::onPacer(uv_poll_t* handle, int status, int) {
  auto* self = static_cast<BenchThread*>(handle->data);
  uint64_t expirations = 0;
  const ssize_t got = ::read(self->pacer_fd_, &expirations, sizeof(expirations));
  (void)got;  // EAGAIN on a spurious wake-up is fine: the schedule below is computed from now
  (void)status;
  if (self->stopping_ || self->draining_) {
    return;
  }
  const uint64_t now = monoNanos();
  const uint64_t due = std::min(self->pacer_.slotsDue(now), self->total_budget_);
  const auto n = static_cast<uint64_t>(self->conns_.size());
  if (due - self->released_slots_ >= n) {
    for (auto& c : self->conns_) {
      c->fill(now);
    }
  } else {
    for (uint64_t k = self->released_slots_; k < due; ++k) {
      self->conns_[k % n]->fill(now);
    }
  }
  self->released_slots_ = std::max(self->released_slots_, due);
  self->armPacer();
}

void BenchThread::onDeadline(uv_timer_t* handle) {
  auto* self = static_cast<BenchThread*>(handle->data);
  self->draining_ = true;
  for (auto& c : self->conns_) {
    c->drain();
  }
}

void BenchThread::onTick(uv_timer_t* handle) {
  auto* self = static_cast<BenchThread*>(handle->data);
  self->publishProgress();
  self->checkTimeouts(monoNanos());
}

void BenchThread::checkTimeouts(uint64_t now) {
  const Options& o = *ctx_.options;
  const uint64_t connect_ns = static_cast<uint64_t>(o.connect_timeout_ms) * 1000000;
  const uint64_t request_ns = static_cast<uint64_t>(o.request_timeout_ms) * 1000000;
  for (auto& c : conns_) {
    if (c->connecting() && now - c->connectStartNs() > connect_ns) {
      fail("timed out connecting to " + ctx_.address_text + " after " +
           std::to_string(o.connect_timeout_ms) + " ms" +
           (c->tlsHandshaking() ? " (the TLS handshake did not finish: is it a TLS port?)" : ""));
      return;
    }
    if (c->hasInFlight() && now > c->oldestSendNs() && now - c->oldestSendNs() > request_ns) {
      fail("request timeout: no reply from " + ctx_.address_text + " for " +
           std::to_string(o.request_timeout_ms) + " ms (server stalled or overloaded?)");
      return;
    }
  }
}

void BenchThread::onReplies(uint64_t now) { end_ns_ = now; }

void BenchThread::publishProgress() {
  uint64_t ops = 0;
  uint64_t latency = 0;
  for (const auto& s : stats_) {
    ops += s.ops;
    latency += s.latency.sum();
  }
  progress_latency_ns_.store(latency, std::memory_order_relaxed);
  progress_ops_.store(ops, std::memory_order_relaxed);
}

void BenchThread::onConnectionDone() {
  if (++done_ == conns_.size() && !stopping_) {
    if (end_ns_ == 0 || !started_) {
      end_ns_ = monoNanos();
    }
    shutdown();
  }
}

bool BenchThread::allowReconnect() {
  if (reconnects_left_ == 0) {
    return false;
  }
  reconnects_left_--;
  return true;
}

void BenchThread::fail(std::string message) {
  if (!failed_.load(std::memory_order_relaxed)) {
    error_ = std::move(message);
    failed_.store(true, std::memory_order_release);
  }
  if (!stopping_) {
    stopping_ = true;
    end_ns_ = monoNanos();
    shutdown();
  }
}

void BenchThread::recordMismatch(std::string message) {
  counters_.verify_mismatches++;
  if (counters_.verify_messages.size() < ctx_.options->verify_print) {
    counters_.verify_messages.push_back(std::move(message));
  }
}

void BenchThread::shutdown() {
  if (shut_down_) {
    return;
  }
  shut_down_ = true;
  for (auto& c : conns_) {
    c->abort();
  }
  auto close = [](auto* h) {
    auto* handle = reinterpret_cast<uv_handle_t*>(h);
    if (!uv_is_closing(handle)) {
      uv_close(handle, nullptr);
    }
  };
  {
    std::lock_guard<std::mutex> lock(async_mu_);
    async_alive_ = false;
    close(&stop_async_);
  }
  close(&tick_timer_);
  close(&deadline_timer_);
  if (pacer_active_) {
    close(&pacer_poll_);
  }
}

}  // namespace sp::bench
