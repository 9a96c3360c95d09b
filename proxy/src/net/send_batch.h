// SendBatch: a loop turn's client writes, sent together. FlushBatch opens the batch before it
// flushes the client sessions and sends it after them; a session's flush() adds its one write
// (fd, bytes) instead of writing at once. With a ring (io_uring), the turn's writes go to the
// kernel in one io_uring_enter instead of one send(2) each; without one, or for a batch of one,
// each is a plain send(2). Every send is MSG_DONTWAIT, so it completes inside that call: the
// results (bytes written or -errno, as send(2) would give) reach each Sender before send()
// returns, and no buffer is referenced after it. Loop thread only.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/counter.h"

namespace sp::net {

class SendBatch {
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
  bool ringActive() const { return ring_ != nullptr; }
  // Where the batch reports: `ring_on` 1 while the ring is in use, else 0; `submits` counts the
  // io_uring_enter calls that submitted writes, `writes` the writes sent through the ring.
  void countInto(Counter* ring_on, Counter* submits, Counter* writes);

  void open() { open_ = true; }  // from now on add() collects
  bool collecting() const { return open_; }
  // Queues `size` bytes at `data` for `fd` (size > 0); they must stay put until `sender` is told.
  void add(int fd, const char* data, size_t size, Sender* sender);
  // Sends what was added, in order, tells each sender its result, and closes the batch. A sender
  // may add nothing during its sent(): the batch is closed by then.
  void send();
  // The sender's connection is closing: its write is dropped unsent, and it is not told.
  void forget(Sender* sender);

 private:
  struct Entry {
    int fd;
    const char* data;
    size_t size;
    Sender* sender;  // nullptr once forgotten
    ssize_t result;
  };
  struct Ring;

  void sendPlain(size_t from, size_t to);
  // Sends entries [from, to) (at most the ring's size) through the ring; returns how many were
  // submitted (the rest are left to the caller).
  size_t sendRing(size_t from, size_t to);

  std::unique_ptr<Ring> ring_;
  unsigned ring_entries_ = 0;
  bool open_ = false;
  std::vector<Entry> entries_;
  Counter* ring_on_ = nullptr;
  Counter* submits_ = nullptr;
  Counter* ring_writes_ = nullptr;
};

}  // namespace sp::net
