// DeferredQueue: items due at a later loop time, each handed to a callback once due, by one timer
// (net/timers.h) armed for the earliest. Items that come due together are taken out before the
// callback runs, so a callback may push again. Loop thread only.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <string_view>
#include <utility>
#include <vector>

#include "net/timers.h"

namespace sp::net {

template <typename Item>
class DeferredQueue {
 public:
  using Fire = std::function<void(Item& item)>;

  DeferredQueue() = default;
  DeferredQueue(const DeferredQueue&) = delete;
  DeferredQueue& operator=(const DeferredQueue&) = delete;

  // Before the first push, on the loop's thread; `name` names its timer (Timers::timer).
  void init(Timers& timers, std::string_view name, Fire fire) {
    timers_ = &timers;
    fire_ = std::move(fire);
    timer_ = timers.timer(name, [this] { onTimer(); });
  }

  // `item` comes due delay_ms from the loop's current time. Not after close().
  void push(uint64_t delay_ms, Item item) {
    const uint64_t due = timers_->nowMs() + delay_ms;
    entries_.push_back(Entry{due, std::move(item)});
    if (!armed_ || due < timer_due_) {
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
    timer_.reset();
    armed_ = false;
    return items;
  }

 private:
  struct Entry {
    uint64_t due_ms;  // loop time
    Item item;
  };

  void arm(uint64_t due_ms) {
    const uint64_t now = timers_->nowMs();
    timer_due_ = due_ms;
    armed_ = true;
    timer_->start(due_ms > now ? due_ms - now : 0);
  }

  void onTimer() {
    armed_ = false;
    const uint64_t now = timers_->nowMs();
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

  Timers* timers_ = nullptr;
  Fire fire_;
  std::unique_ptr<Timer> timer_;
  bool armed_ = false;
  uint64_t timer_due_ = 0;  // while armed_
  std::vector<Entry> entries_;
};

}  // namespace sp::net
