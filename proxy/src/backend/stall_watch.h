// StallWatch: when a backend connection with requests outstanding counts as stalled.
//
// A connection is stalled when it has requests outstanding and no byte has moved on it, in
// either direction, for its limit: backend.timeout_ms, or backend.slow_timeout_ms while one of
// backend.slow_commands (scripts, functions, ...) is outstanding. A byte moves when a reply is
// read, when a write is handed to the kernel or completes, or when the bytes waiting to go out
// shrink: libuv's write queue (a large request going out) or the kernel's send queue (the shard
// taking the last megabytes of a request whose write has already completed for libuv). A shard
// that is slow but still sending or taking bytes is never stalled; a SIGSTOPped or wedged one is,
// one limit after its last byte.
//
//   requests   ....[ outstanding ........................................ ]....
//   writes         wwwwwwwwwwwww                     (a 200 MB SET going out)
//   reads                           r        rrrrr   (replies, or a large one arriving)
//   idle clock     0...........0....0........00000....... >= limit: stalled
//                  ^ starts when requests become outstanding, restarts at every byte moved
//
// The connection checks the clock from a timer, armed once when requests become outstanding and
// re-armed for the time left, so progress itself never touches the timer heap. Pure logic: the
// caller passes the loop's clock, so it is tested with made-up times.
#pragma once

#include <cstddef>
#include <cstdint>

namespace sp::backend {

class StallWatch {
 public:
  static constexpr size_t kUnknown = static_cast<size_t>(-1);

  // The clock (re)starts at now_ms with `write_queue` bytes queued for writing in libuv and
  // `kernel_queue` in the kernel (kUnknown where not read): requests became outstanding (or the
  // connection came up with some), or a write was handed to libuv or completed (whatever moved
  // then moved, and the queues shrink from there).
  void restart(uint64_t now_ms, size_t write_queue, size_t kernel_queue = kUnknown) {
    last_ms_ = now_ms;
    write_queue_ = write_queue;
    kernel_queue_ = kernel_queue;
  }

  // A reply was read or a write completed.
  void progress(uint64_t now_ms) { last_ms_ = now_ms; }

  // How long nothing has moved (meaningful while requests are outstanding).
  uint64_t idleMs(uint64_t now_ms) const { return now_ms >= last_ms_ ? now_ms - last_ms_ : 0; }

  // At a timer check: 0 when nothing has moved for `limit_ms`, otherwise how long to wait before
  // checking again. `write_queue` is how many bytes are accepted for writing and not yet written;
  // `kernel_queue` how many the kernel still holds for the shard (SIOCOUTQ), or kUnknown.
  uint64_t check(uint64_t now_ms, size_t write_queue, size_t kernel_queue, uint64_t limit_ms) {
    if (write_queue < write_queue_ ||
        (kernel_queue_ != kUnknown && kernel_queue != kUnknown && kernel_queue < kernel_queue_)) {
      last_ms_ = now_ms;  // a large write is moving
    }
    write_queue_ = write_queue;
    kernel_queue_ = kernel_queue;
    const uint64_t idle = now_ms >= last_ms_ ? now_ms - last_ms_ : 0;
    return idle >= limit_ms ? 0 : limit_ms - idle;
  }

 private:
  uint64_t last_ms_ = 0;            // when a byte last moved (or the clock started)
  size_t write_queue_ = 0;          // the write queue at the last check
  size_t kernel_queue_ = kUnknown;  // the kernel's send queue at the last check
};

}  // namespace sp::backend
