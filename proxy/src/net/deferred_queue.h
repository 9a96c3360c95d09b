// DeferredQueue: items due at a later loop time, each handed to a callback once due, by one uv
// timer armed for the earliest. Items that come due together are taken out before the callback
// runs, so a callback may push again. Loop thread only.
#pragma once

#include <uv.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

namespace sp::net {

template <typename Item>
class DeferredQueue {
 public:
  using Fire = std::function<void(Item& item)>;

  DeferredQueue() = default;
  DeferredQueue(const DeferredQueue&) = delete;
  DeferredQueue& operator=(const DeferredQueue&) = delete;

  // Before the first push, on the loop's thread.
  void init(uv_loop_t* loop, Fire fire) {
    loop_ = loop;
    fire_ = std::move(fire);
    uv_timer_init(loop_, &timer_);
    timer_.data = this;
  }

  // `item` comes due delay_ms from the loop's current time. Not after close().
  void push(uint64_t delay_ms, Item item) {
    const uint64_t due = uv_now(loop_) + delay_ms;
    entries_.push_back(Entry{due, std::move(item)});
    if (!uv_is_active(reinterpret_cast<uv_handle_t*>(&timer_)) || due < timer_due_) {
      arm(due);
    }
  }

  size_t size() const { return entries_.size(); }

  // Takes out every waiting item, due or not, and closes the timer (shutdown).
  std::vector<Item> close() {
    std::vector<Item> items;
    for (Entry& e : entries_) {
      items.push_back(std::move(e.item));
    }
    entries_.clear();
    if (loop_ != nullptr) {
      uv_timer_stop(&timer_);
      uv_close(reinterpret_cast<uv_handle_t*>(&timer_), nullptr);
      loop_ = nullptr;
    }
    return items;
  }

 private:
  struct Entry {
    uint64_t due_ms;  // loop time
    Item item;
  };

  void arm(uint64_t due_ms) {
    const uint64_t now = uv_now(loop_);
    timer_due_ = due_ms;
    uv_timer_start(
        &timer_, [](uv_timer_t* t) { static_cast<DeferredQueue*>(t->data)->onTimer(); },
        due_ms > now ? due_ms - now : 0, 0);
  }

  void onTimer() {
    const uint64_t now = uv_now(loop_);
    std::vector<Item> due;
    std::vector<Entry> later;
    uint64_t next = UINT64_MAX;
    for (Entry& e : entries_) {
      if (e.due_ms > now) {
        next = std::min(next, e.due_ms);
        later.push_back(std::move(e));
      } else {
        due.push_back(std::move(e.item));
      }
    }
    entries_.swap(later);
    if (!entries_.empty()) {
      arm(next);
    }
    for (Item& item : due) {
      fire_(item);
    }
  }

  uv_loop_t* loop_ = nullptr;
  Fire fire_;
  uv_timer_t timer_{};
  uint64_t timer_due_ = 0;  // while timer_ is active
  std::vector<Entry> entries_;
};

}  // namespace sp::net
