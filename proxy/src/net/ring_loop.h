// RingLoop: a worker's socket reads through io_uring, and the loop's wait. Each plain client
// socket and shard connection keeps one multishot receive armed on the worker's ring, with
// buffers the kernel picks from a provided-buffer ring (one for clients, one for shard
// connections, so that client uploads cannot starve the shards' replies), so a read costs no
// system call. Where the kernel consumes those buffers incrementally (Linux 6.12), a receive
// takes only the bytes it needs, so one buffer serves many small requests. The worker then
// waits in io_uring_enter instead of epoll_wait: libuv's own epoll descriptor is polled through
// the ring, and the libuv loop runs (without blocking) only when that descriptor is ready or a
// libuv timer or idle handle is due. A turn whose completions delivered requests or replies
// ends with the flush batch, as libuv's check phase would run it. While no receive is armed (no
// connections yet, or only TLS ones, which libuv reads), the worker waits in libuv's own uv_run
// instead, which costs one system call less per turn. Without the kernel features (multishot
// receive, provided buffers, deferred task work), start() says why and the worker keeps libuv's
// reads and uv_run. Loop thread only.
#pragma once

#include <uv.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/counter.h"

namespace sp::net {

class RingLoop {
 public:
  // The receiving end of a socket's reads.
  class Reader {
   public:
    // `size` > 0 bytes arrived; `data` is valid during the call only.
    virtual void onRingData(const char* data, size_t size) = 0;
    // Reads ended: 0 at end of stream, else a negative errno (libuv's UV_E* codes on Linux).
    // No call follows for this slot unless it is armed again.
    virtual void onRingEnd(int error) = 0;

   protected:
    ~Reader() = default;
  };

  using Slot = uint32_t;
  // Whose socket it is: each kind takes buffers from a pool of its own.
  enum class Source : uint8_t { kClient = 0, kShard = 1 };
  static constexpr Slot kNoSlot = UINT32_MAX;

  RingLoop();
  ~RingLoop();
  RingLoop(const RingLoop&) = delete;
  RingLoop& operator=(const RingLoop&) = delete;

  // Sets up the ring and its buffers and checks, on a socket pair, that a multishot receive
  // delivers. False with *why when the kernel lacks a feature: the worker keeps libuv's reads.
  // `turn_end` runs after each batch of completions (the worker's flush batch).
  bool start(uv_loop_t* loop, std::function<void()> turn_end, std::string* why);
  bool active() const { return ring_ != nullptr; }
  // Before start(): false keeps whole-buffer receives even where the kernel could consume
  // buffers incrementally (for tests of that path).
  void preferIncrementalBuffers(bool on) { incremental_ = on; }
  // Started, with buffers the kernel consumes incrementally.
  bool incrementalBuffers() const;
  // `reads` counts the receive completions that delivered bytes.
  void countInto(Counter* reads) { reads_ = reads; }

  // Starts reading `fd` into `reader`. The slot names it in the calls below.
  Slot add(int fd, Reader* reader, Source source = Source::kClient);
  // Stops and restarts delivery (back-pressure). Bytes the kernel had already taken when pause()
  // was called may still be delivered: the reader buffers them.
  void pause(Slot slot);
  void resume(Slot slot);
  // The reader goes away: nothing is delivered to it from now on. Call before closing the fd.
  void remove(Slot slot);

  // Sends on the ring, for the worker's SendBatch: a send queued here goes to the kernel with
  // the next wait (or submitPending()), so a turn's replies cost no system call of their own.
  // Each completion is told to the sink with the index given here.
  class SendSink {
   public:
    virtual void onRingSent(uint32_t index, int res) = 0;

   protected:
    ~SendSink() = default;
  };
  // Checks that a send on this ring completes inside its submission (MSG_DONTWAIT), which the
  // sink relies on: then `sink` is told the completions of prepSend's sends. False with *why.
  bool takeSends(SendSink* sink, std::string* why);
  // Queues a send of `size` bytes at `data` (MSG_DONTWAIT | MSG_NOSIGNAL; at most kMaxSend of
  // them, the rest is a short write); the bytes must stay put until it is submitted. Returns the
  // submission it goes out with (for submitPending). `counted`: its submission counts as one
  // that carried sends (countSendSubmitsInto).
  uint64_t prepSend(int fd, const char* data, size_t size, uint32_t index, bool counted);
  static constexpr size_t kMaxSend = size_t{1} << 30;
  // Submits what is queued now if submission `epoch` has not gone out yet (a send whose socket
  // is about to close, or whose bytes are about to go).
  void submitPending(uint64_t epoch);
  // Submits the queued sends now, rather than with the next wait.
  void submitSends() {
    if (sends_queued_ > 0) {
      submit();
    }
  }
  // Sends whose completion has not been told yet.
  size_t sendsOut() const { return sends_; }
  // Counts the io_uring_enter calls that carried counted sends.
  void countSendSubmitsInto(Counter* submits) { send_submits_ = submits; }

  // Runs the loop until libuv's loop has nothing left and every receive has ended.
  void run();

  // One wait and its completions; for tests that drive the loop step by step. Returns false
  // once the loop is done.
  bool turn();

 private:
  struct Ring;
  static constexpr int kNoEnd = 1;  // Entry::end: no end held back
  struct Entry {
    Reader* reader = nullptr;
    int fd = -1;
    bool want = false;         // delivery wanted (added and not paused)
    bool armed = false;        // a receive is in the kernel
    bool cancelled = false;    // its cancel was submitted
    uint8_t pool = 0;          // Source: the buffer pool its receives take from
    uint64_t armed_epoch = 0;  // submit_epoch_ when its receive was queued
    int end = kNoEnd;          // an end of stream or error not yet told (it came while paused)
  };

  void arm(Slot slot);
  void cancel(Slot slot);
  void release(Slot slot);
  void submit();         // what is queued goes to the kernel now
  void noteSubmitted();  // what was queued has gone to the kernel
  void onCompletion(uint64_t data, int res, uint32_t flags);
  void armPoll();
  // One libuv turn; notes when libuv's loop has nothing left.
  void runLibuv(uv_run_mode mode);

  std::unique_ptr<Ring> ring_;
  uv_loop_t* loop_ = nullptr;
  std::function<void()> turn_end_;
  std::vector<Entry> entries_;
  std::vector<Slot> free_;
  std::vector<Slot> rearm_;  // receives that ran out of buffers, armed again after the turn
  std::vector<Slot> ends_;   // ends to tell at the end of the turn
  std::vector<Slot> scratch_;
  size_t armed_ = 0;             // receives in the kernel
  size_t sends_ = 0;             // sends whose completion has not been told yet
  unsigned sends_queued_ = 0;    // sends waiting in the submission queue
  bool counted_queued_ = false;  // a counted one among them
  SendSink* send_sink_ = nullptr;
  Counter* send_submits_ = nullptr;
  uint64_t submit_epoch_ = 0;  // advances with every submission: an entry armed in the current
                               // epoch has not reached the kernel yet
  bool poll_armed_ = false;    // the poll of libuv's descriptor is in the kernel
  bool uv_due_ = true;         // libuv's loop has work: run it before the next wait
  bool uv_done_ = false;       // libuv's loop has nothing left
  bool incremental_ = true;    // ask for incrementally consumed buffers
  Counter* reads_ = nullptr;
};

}  // namespace sp::net
