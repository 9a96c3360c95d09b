// SendBatch: a loop turn's client writes, sent together. FlushBatch opens the batch before it
// flushes the client sessions and sends it after them; a session's flush() adds its one write
// (fd, bytes) instead of writing at once. Three ways out, best first:
// - Through the worker's RingLoop (sendWith): the writes are queued on the loop's ring and go to
//   the kernel with the loop's next wait, so a turn's replies cost no system call of their own.
//   Each sender is told its result when the loop reads the completion, early in the next turn;
//   until then the bytes stay put and the sender adds nothing (it waits for sent()). Shard
//   connections queue their writes on the same ring (queue(), then submitQueued()). A batch
//   that would leave more than kMaxLoopSends sends out on the loop's ring takes the next way
//   instead: their completions, with the turn's receives, must fit the loop's completion queue
//   (one that overflows ends multishot receives and costs the kernel an allocation each).
// - Through the batch's own ring (startRing): the turn's writes go to the kernel in one
//   io_uring_enter instead of one send(2) each; a batch of one is a plain send(2).
// - send(2) for each.
// Every send is MSG_DONTWAIT, so it completes inside the call that submits it, and no buffer is
// referenced after that call; in the last two ways the results (bytes written or -errno, as
// send(2) would give) reach each Sender before send() returns. Loop thread only.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/counter.h"
#include "net/ring_loop.h"

namespace sp::net {

class SendBatch final : public RingLoop::SendSink {
 public:
  // A connection whose write waits in the batch.
  class Sender {
   public:
    // The write's result: bytes written (possibly short), or -errno (-EAGAIN: none; never
    // -EPIPE's signal). The bytes may be released or reused from here on.
    virtual void sent(ssize_t result) = 0;

    bool in_send_batch = false;  // added and not yet reported (or forgotten)

   protected:
    ~Sender() = default;
  };

  SendBatch();
  ~SendBatch();
  SendBatch(const SendBatch&) = delete;
  SendBatch& operator=(const SendBatch&) = delete;

  // Sets up a ring of `entries` submissions and checks that sends on it complete inside the
  // submitting call (a send with room is done; a send to a full socket fails with EAGAIN). False
  // with *why when io_uring is unavailable or behaves otherwise: the batch then uses send(2).
  bool startRing(unsigned entries, std::string* why);
  void stopRing();  // from now on send(2)
  // From now on the writes go out through `loop`'s ring with its waits (see above); the batch's
  // own ring (if started) stays for batches too large for the loop's. False with *why when sends
  // there would not complete inside their submission: the batch then stays as it was.
  bool sendWith(RingLoop* loop, std::string* why);
  bool ringActive() const { return ring_ != nullptr || loop_ != nullptr; }
  // The most sends a batch may leave out on the loop's ring (kMaxLoopSends unless set).
  void limitLoopSends(size_t max) { max_loop_sends_ = max; }
  // Where the batch reports: `ring_on` 1 while the ring is in use, else 0; `submits` counts the
  // io_uring_enter calls that submitted writes, `writes` the writes sent through the ring.
  void countInto(Counter* ring_on, Counter* submits, Counter* writes);

  void open() { open_ = true; }  // from now on add() collects
  bool collecting() const { return open_; }
  // Queues `size` bytes at `data` for `fd` (size > 0); they must stay put until `sender` is told.
  void add(int fd, const char* data, size_t size, Sender* sender);
  // Sends what was added, in order, and closes the batch; tells each sender its result (through
  // a loop: once the loop has the completion). A sender may add nothing during its sent(): the
  // batch is closed by then.
  void send();
  // Through a loop only (sendsWithLoop()): queues one write now, outside any batch, to go out
  // with submitQueued() or the loop's next wait, and tells `sender` later, as for a batch's
  // writes. Not counted as a client write. (Shard connections send their commands this way.)
  bool sendsWithLoop() const { return loop_ != nullptr; }
  void queue(int fd, const char* data, size_t size, Sender* sender);
  // Through a loop: what queue() queued goes to the kernel now (one system call for them all).
  void submitQueued() {
    if (loop_ != nullptr) {
      loop_->submitSends();
    }
  }
  // The sender's connection is closing: its write is dropped unsent, and it is not told. (A
  // write already queued on the loop's ring goes to the kernel now, while its socket and bytes
  // are still there.)
  void forget(Sender* sender);

  // The loop read a write's completion (RingLoop::SendSink).
  void onRingSent(uint32_t index, int res) override;

 private:
  struct Entry {
    int fd;
    const char* data;
    size_t size;
    Sender* sender;  // nullptr once forgotten
    ssize_t result;
  };
  struct Ring;
  static constexpr size_t kMaxLoopSends = 1024;
  // A write queued on the loop's ring, until its completion.
  struct Flight {
    Sender* sender;  // nullptr once forgotten
    uint64_t epoch;  // the loop's submission it goes out with
  };

  void sendPlain(size_t from, size_t to);
  // Sends entries [from, to) (at most the ring's size) through the ring; returns how many were
  // submitted (the rest are left to the caller).
  size_t sendRing(size_t from, size_t to);
  void sendThroughLoop();
  void launch(int fd, const char* data, size_t size, Sender* sender, bool counted);

  std::unique_ptr<Ring> ring_;
  unsigned ring_entries_ = 0;
  bool open_ = false;
  std::vector<Entry> entries_;
  RingLoop* loop_ = nullptr;
  size_t max_loop_sends_ = kMaxLoopSends;
  std::vector<Flight> flights_;  // indexed by the loop's send index
  std::vector<uint32_t> free_flights_;
  Counter* ring_on_ = nullptr;
  Counter* submits_ = nullptr;
  Counter* ring_writes_ = nullptr;
};

}  // namespace sp::net
