// LoopTimers: each Timer's uv_timer_t and callback live on the heap until uv_close's callback, so
// an owner may destroy a timer at any point, within that timer's own callback included.
#include "net/timers.h"

#include <utility>

namespace sp::net {
namespace {

struct TimerHandle {
  uv_timer_t timer{};
  std::function<void()> fire;
};

class LoopTimer final : public Timer {
 public:
  LoopTimer(uv_loop_t* loop, std::function<void()> fire) : handle_(new TimerHandle) {
    handle_->fire = std::move(fire);
    uv_timer_init(loop, &handle_->timer);
    handle_->timer.data = handle_;
  }
  ~LoopTimer() override {
    uv_close(reinterpret_cast<uv_handle_t*>(&handle_->timer),
             [](uv_handle_t* h) { delete static_cast<TimerHandle*>(h->data); });
  }
  LoopTimer(const LoopTimer&) = delete;
  LoopTimer& operator=(const LoopTimer&) = delete;

  void start(uint64_t delay_ms) override {
    uv_timer_start(
        &handle_->timer, [](uv_timer_t* t) { static_cast<TimerHandle*>(t->data)->fire(); },
        delay_ms, 0);
  }
  void stop() override { uv_timer_stop(&handle_->timer); }

 private:
  TimerHandle* handle_;
};

}  // namespace

std::unique_ptr<Timer> LoopTimers::timer(std::string_view /*name*/, std::function<void()> fire) {
  return std::make_unique<LoopTimer>(loop_, std::move(fire));
}

}  // namespace sp::net
