// RingLoop: multishot receives into provided buffers, and the worker's wait in io_uring_enter
// with libuv's epoll descriptor polled through the ring.
#include "net/ring_loop.h"

#include <liburing.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <utility>

#include "core/assert.h"
#include "net/inline_send.h"

namespace sp::net {

namespace {

constexpr unsigned kEntries = 512;
constexpr unsigned kCompletionEntries = 8192;
constexpr unsigned kBufferCount = 64;  // per pool; a power of two
constexpr size_t kBufferSize = 16 * 1024;
constexpr uint64_t kPollTag = UINT64_MAX;         // the poll of libuv's descriptor
constexpr uint64_t kIgnoreTag = UINT64_MAX - 1;   // cancels: their own completions say nothing
constexpr uint64_t kSendTag = uint64_t{1} << 32;  // | the sink's index: a send
constexpr int kSendFlags = MSG_DONTWAIT | MSG_NOSIGNAL;
// Incremental consumption of provided buffers (Linux 6.12; liburing 2.3 names neither): a
// receive takes only the bytes it needs from the current buffer, and the completion says, with
// kBufferMore, that the kernel goes on filling the same buffer after them.
constexpr uint16_t kIncrementalRing = 2;   // IOU_PBUF_RING_INC
constexpr uint32_t kBufferMore = 1U << 4;  // IORING_CQE_F_BUF_MORE

std::string errnoText(const char* what, int err) {
  return std::string(what) + ": " + std::strerror(err);
}

__kernel_timespec timespecOf(int ms) {
  __kernel_timespec ts{};
  ts.tv_sec = ms / 1000;
  ts.tv_nsec = static_cast<long long>(ms % 1000) * 1000000;
  return ts;
}

}  // namespace

// One provided-buffer ring the kernel takes receive buffers from (its buffer group). Where the
// kernel consumes buffers incrementally, a 16 KiB buffer holds the bytes of many receives (a
// request of a few hundred bytes takes only those), so a turn in which hundreds of clients send
// does not run out of buffers; otherwise each receive takes a whole buffer, and a receive that
// finds none left ends and is armed again after the turn.
struct BufferPool {
  io_uring_buf_ring* buffers = nullptr;
  char* memory = nullptr;  // kBufferCount buffers of kBufferSize
  uint16_t group = 0;
  bool registered = false;
  bool incremental = false;
  uint32_t used[kBufferCount] = {};  // incremental: bytes of each buffer already delivered

  bool setUp(io_uring* ring, uint16_t group_id, bool try_incremental, std::string* why) {
    group = group_id;
    void* ring_memory = nullptr;
    if (posix_memalign(&ring_memory, 4096, kBufferCount * sizeof(io_uring_buf)) != 0) {
      *why = "out of memory";
      return false;
    }
    buffers = static_cast<io_uring_buf_ring*>(ring_memory);
    memory = static_cast<char*>(std::malloc(kBufferCount * kBufferSize));
    if (memory == nullptr) {
      *why = "out of memory";
      return false;
    }
    io_uring_buf_ring_init(buffers);
    incremental = try_incremental && registerRing(ring, kIncrementalRing) == 0;
    // Whole buffers where not asked for, or where the kernel refuses the flag (before 6.12).
    const int rc = incremental ? 0 : registerRing(ring, 0);
    if (rc < 0) {
      *why = errnoText("provided buffers", -rc);
      return false;
    }
    registered = true;
    for (unsigned id = 0; id < kBufferCount; ++id) {
      give(static_cast<uint16_t>(id));
    }
    return true;
  }

  int registerRing(io_uring* ring, uint16_t flags) {
    io_uring_buf_reg reg{};
    reg.ring_addr = reinterpret_cast<uintptr_t>(buffers);
    reg.ring_entries = kBufferCount;
    reg.bgid = group;
    // The kernel's flags follow bgid (liburing 2.3 calls the field "pad", later ones "flags").
    std::memcpy(reinterpret_cast<char*>(&reg) + offsetof(io_uring_buf_reg, bgid) + sizeof reg.bgid,
                &flags, sizeof flags);
    return io_uring_register_buf_ring(ring, &reg, 0);
  }

  void tearDown(io_uring* ring) {
    if (registered) {
      io_uring_unregister_buf_ring(ring, group);
    }
    std::free(buffers);
    std::free(memory);
  }

  char* buffer(uint16_t id) { return memory + static_cast<size_t>(id) * kBufferSize; }

  // Where the bytes of a completion that carries buffer `id` start.
  const char* data(uint16_t id) { return buffer(id) + used[id]; }

  // After a completion that carried buffer `id` (`res` bytes, its `flags`) has been read: the
  // buffer goes back to the kernel once the kernel is done with it.
  void settle(uint16_t id, int res, uint32_t flags) {
    if (!incremental) {
      give(id);
      return;
    }
    if (res <= 0) {
      // Nothing was taken: the buffer is still the kernel's current one (kernels before the
      // fix of zero-length transfers leave out kBufferMore here; giving it again would put it
      // in the ring twice).
      return;
    }
    if ((flags & kBufferMore) != 0) {
      used[id] += static_cast<uint32_t>(res);
      return;
    }
    used[id] = 0;
    give(id);
  }

  void give(uint16_t id) {
    io_uring_buf_ring_add(buffers, buffer(id), kBufferSize, id,
                          io_uring_buf_ring_mask(kBufferCount), 0);
    io_uring_buf_ring_advance(buffers, 1);
  }
};

struct RingLoop::Ring {
  io_uring ring{};
  bool initialised = false;
  // Clients and shard connections take from separate pools: a burst of client uploads that
  // holds every client buffer must not keep the shards' replies (everyone's) from being read.
  BufferPool pools[2];

  ~Ring() {
    if (initialised) {
      for (BufferPool& pool : pools) {
        pool.tearDown(&ring);
      }
      io_uring_queue_exit(&ring);
    }
  }

  RingLoop* owner = nullptr;  // told of a submission made here

  // A free submission entry; a full queue is submitted first.
  io_uring_sqe* sqe() {
    io_uring_sqe* s = io_uring_get_sqe(&ring);
    if (s == nullptr) {
      io_uring_submit(&ring);
      if (owner != nullptr) {
        owner->noteSubmitted();
      }
      s = io_uring_get_sqe(&ring);
    }
    SP_ASSERT(s != nullptr);
    return s;
  }

  void prepRecv(int fd, uint64_t data, const BufferPool& pool) {
    io_uring_sqe* s = sqe();
    io_uring_prep_recv_multishot(s, fd, nullptr, 0, 0);
    s->flags |= IOSQE_BUFFER_SELECT;
    s->buf_group = pool.group;
    io_uring_sqe_set_data64(s, data);
  }

  void prepCancel(uint64_t data) {
    io_uring_sqe* s = sqe();
    io_uring_prep_cancel64(s, data, 0);
    io_uring_sqe_set_data64(s, kIgnoreTag);
  }

  // Waits up to `ms` for one completion; false when none came.
  bool waitOne(int ms, io_uring_cqe** cqe) {
    __kernel_timespec ts = timespecOf(ms);
    return io_uring_submit_and_wait_timeout(&ring, cqe, 1, &ts, nullptr) >= 0 && *cqe != nullptr;
  }

  // A multishot receive on one end of a socket pair must deliver a byte written to the other,
  // into a provided buffer, and stay armed; its cancel must end it.
  bool probe(std::string* why) {
    int sv[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
      *why = errnoText("socketpair", errno);
      return false;
    }
    const bool ok = probeOn(sv[0], sv[1], why);
    ::close(sv[0]);
    ::close(sv[1]);
    return ok;
  }

  bool probeOn(int fd, int peer, std::string* why) {
    BufferPool& pool = pools[0];
    prepRecv(fd, 1, pool);
    if (const int rc = io_uring_submit(&ring); rc != 1) {
      *why = errnoText("submit", rc < 0 ? -rc : EIO);
      return false;
    }
    if (::write(peer, "x", 1) != 1) {
      *why = errnoText("write", errno);
      return false;
    }
    io_uring_cqe* cqe = nullptr;
    if (!waitOne(1000, &cqe)) {
      *why = "a multishot receive delivered nothing";
      return false;
    }
    const int res = cqe->res;
    const uint32_t flags = cqe->flags;
    io_uring_cqe_seen(&ring, cqe);
    if (res != 1 || (flags & IORING_CQE_F_BUFFER) == 0 || (flags & IORING_CQE_F_MORE) == 0) {
      *why = res < 0 ? errnoText("multishot receive", -res)
                     : std::string("a multishot receive ended after one delivery");
      return false;
    }
    pool.settle(static_cast<uint16_t>(flags >> IORING_CQE_BUFFER_SHIFT), res, flags);
    prepCancel(1);
    for (;;) {  // until the receive's last completion
      if (!waitOne(1000, &cqe)) {
        *why = "a cancelled receive never ended";
        return false;
      }
      const uint64_t data = io_uring_cqe_get_data64(cqe);
      const int r = cqe->res;
      const uint32_t f = cqe->flags;
      io_uring_cqe_seen(&ring, cqe);
      if ((f & IORING_CQE_F_BUFFER) != 0) {
        pool.settle(static_cast<uint16_t>(f >> IORING_CQE_BUFFER_SHIFT), r, f);
      }
      if (data == 1 && (f & IORING_CQE_F_MORE) == 0) {
        return true;
      }
    }
  }
};

RingLoop::RingLoop() = default;
RingLoop::~RingLoop() = default;

bool RingLoop::incrementalBuffers() const {
  return ring_ != nullptr && ring_->pools[0].incremental;
}

bool RingLoop::start(uv_loop_t* loop, std::function<void()> turn_end, std::string* why) {
#if defined(__SANITIZE_THREAD__)
  // ThreadSanitizer orders threads through read(2) and write(2) on a socket, and cannot see a
  // read the kernel does inside io_uring_enter: every request would look like a race.
  *why = "a ThreadSanitizer build reads through libuv";
  return false;
#endif
  auto r = std::make_unique<Ring>();
  io_uring_params params{};
  // Deferred task work: completions are run when this thread waits in io_uring_enter, never by
  // interrupting another system call (which would cost a second epoll_wait or read).
  params.flags = IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN | IORING_SETUP_CQSIZE |
                 IORING_SETUP_SUBMIT_ALL;
  params.cq_entries = kCompletionEntries;
  if (const int rc = io_uring_queue_init_params(kEntries, &r->ring, &params); rc < 0) {
    *why = errnoText("io_uring_setup", -rc);
    return false;
  }
  r->initialised = true;
  if ((params.features & IORING_FEAT_EXT_ARG) == 0) {
    *why = "io_uring_enter takes no timeout";
    return false;
  }
  for (uint16_t group = 0; group < 2; ++group) {
    if (!r->pools[group].setUp(&r->ring, static_cast<uint16_t>(group + 1), incremental_, why)) {
      return false;
    }
  }
  if (!r->probe(why)) {
    return false;
  }
  ring_ = std::move(r);
  ring_->owner = this;
  loop_ = loop;
  turn_end_ = std::move(turn_end);
  return true;
}

RingLoop::Slot RingLoop::add(int fd, Reader* reader, Source source) {
  Slot slot;
  if (!free_.empty()) {
    slot = free_.back();
    free_.pop_back();
  } else {
    slot = static_cast<Slot>(entries_.size());
    entries_.emplace_back();
  }
  Entry& e = entries_[slot];
  e = Entry{};
  e.reader = reader;
  e.fd = fd;
  e.pool = static_cast<uint8_t>(source);
  e.want = true;
  arm(slot);
  return slot;
}

void RingLoop::arm(Slot slot) {
  Entry& e = entries_[slot];
  if (e.armed) {
    return;
  }
  ring_->prepRecv(e.fd, slot, ring_->pools[e.pool]);
  e.armed = true;
  e.armed_epoch = submit_epoch_;
  e.cancelled = false;
  ++armed_;
}

void RingLoop::cancel(Slot slot) {
  Entry& e = entries_[slot];
  if (e.armed && !e.cancelled) {
    ring_->prepCancel(slot);
    e.cancelled = true;
  }
}

void RingLoop::pause(Slot slot) {
  entries_[slot].want = false;
  cancel(slot);
}

void RingLoop::resume(Slot slot) {
  Entry& e = entries_[slot];
  e.want = true;
  if (e.end != kNoEnd) {
    ends_.push_back(slot);  // the end that came while paused is told on the next turn
    return;
  }
  if (!e.armed) {
    arm(slot);
  }
}

void RingLoop::remove(Slot slot) {
  Entry& e = entries_[slot];
  e.reader = nullptr;
  e.want = false;
  if (!e.armed) {
    release(slot);
    return;
  }
  cancel(slot);  // released on the receive's last completion
  if (e.armed_epoch == submit_epoch_) {
    // The receive has not reached the kernel yet, and the socket closes next: submitted later,
    // it would find the number taken by the next socket opened and read that one's bytes. The
    // receive and its cancel go in now, while the number is still this socket's.
    submit();
  }
}

void RingLoop::submit() {
  io_uring_submit(&ring_->ring);
  noteSubmitted();
}

void RingLoop::noteSubmitted() {
  ++submit_epoch_;
  sends_queued_ = 0;
  if (counted_queued_) {
    counted_queued_ = false;
    if (send_submits_ != nullptr) {
      send_submits_->add();
    }
  }
}

bool RingLoop::takeSends(SendSink* sink, std::string* why) {
  if (!sendsCompleteInline(&ring_->ring, why)) {
    return false;
  }
  send_sink_ = sink;
  return true;
}

uint64_t RingLoop::prepSend(int fd, const char* data, size_t size, uint32_t index, bool counted) {
  SP_ASSERT(send_sink_ != nullptr);
  io_uring_sqe* s = ring_->sqe();
  io_uring_prep_send(s, fd, data, std::min(size, kMaxSend), kSendFlags);
  io_uring_sqe_set_data64(s, kSendTag | index);
  ++sends_;
  ++sends_queued_;
  counted_queued_ = counted_queued_ || counted;
  return submit_epoch_;
}

void RingLoop::submitPending(uint64_t epoch) {
  if (epoch == submit_epoch_) {
    submit();
  }
}

void RingLoop::release(Slot slot) {
  entries_[slot] = Entry{};
  free_.push_back(slot);
}

void RingLoop::onCompletion(uint64_t data, int res, uint32_t flags) {
  if (data == kIgnoreTag) {
    return;
  }
  if (data == kPollTag) {
    poll_armed_ = false;
    uv_due_ = true;
    return;
  }
  if ((data & ~uint64_t{UINT32_MAX}) == kSendTag) {
    --sends_;
    send_sink_->onRingSent(static_cast<uint32_t>(data), res);
    return;
  }
  const auto slot = static_cast<Slot>(data);
  if ((flags & IORING_CQE_F_BUFFER) != 0) {
    const auto id = static_cast<uint16_t>(flags >> IORING_CQE_BUFFER_SHIFT);
    BufferPool& pool = ring_->pools[entries_[slot].pool];
    if (res > 0 && entries_[slot].reader != nullptr) {
      if (reads_ != nullptr) {
        reads_->add();
      }
      // The reader may add, pause or remove entries: entries_ is indexed afresh below.
      entries_[slot].reader->onRingData(pool.data(id), static_cast<size_t>(res));
    }
    pool.settle(id, res, flags);
  }
  if ((flags & IORING_CQE_F_MORE) != 0) {
    return;
  }
  Entry& e = entries_[slot];
  e.armed = false;
  --armed_;
  if (e.reader == nullptr) {
    release(slot);
    return;
  }
  if (res > 0 || res == -ECANCELED) {
    if (e.want) {
      arm(slot);  // ended by a cancel that resume() overtook, or by the kernel (a full queue)
    }
    return;
  }
  if (res == -ENOBUFS) {
    if (e.want) {
      rearm_.push_back(slot);  // once this turn's buffers are back
    }
    return;
  }
  // End of stream or an error. While paused it waits, as libuv would not have read it yet.
  e.end = res;
  if (e.want) {
    ends_.push_back(slot);
  }
}

void RingLoop::armPoll() {
  if (poll_armed_ || uv_done_) {
    return;
  }
  io_uring_sqe* s = ring_->sqe();
  io_uring_prep_poll_add(s, uv_backend_fd(loop_), POLLIN);
  io_uring_sqe_set_data64(s, kPollTag);
  poll_armed_ = true;
}

void RingLoop::runLibuv(uv_run_mode mode) {
  uv_due_ = false;
  if (uv_run(loop_, mode) == 0) {
    uv_done_ = true;
    if (poll_armed_) {
      ring_->prepCancel(kPollTag);
    }
  }
}

bool RingLoop::turn() {
  if (uv_due_ && !uv_done_) {
    runLibuv(UV_RUN_NOWAIT);
  }
  if (uv_done_ && armed_ == 0 && sends_ == 0 && !poll_armed_ && ends_.empty()) {
    io_uring_submit(&ring_->ring);  // cancels of what has ended need no answer
    return false;
  }
  if (!uv_done_ && armed_ == 0 && sends_ == 0 && ends_.empty() && rearm_.empty()) {
    // Nothing reads or sends through the ring (no connections, or only TLS ones, all quiet):
    // libuv's own wait then costs one system call less than the ring's wait followed by libuv's
    // turn. A receive added meanwhile (a client accepted) is submitted with the next turn's wait;
    // sends queued by this libuv turn make the next turn the ring's.
    if (io_uring_sq_ready(&ring_->ring) > 0) {
      submit();
    }
    runLibuv(UV_RUN_ONCE);
    return true;
  }
  int timeout = uv_done_ ? -1 : uv_backend_timeout(loop_);
  if (!ends_.empty() || !rearm_.empty()) {
    timeout = 0;
  }
  if (timeout == 0) {
    uv_due_ = !uv_done_;
  }
  armPoll();
  io_uring* ring = &ring_->ring;
  // Sends complete inside the call that submits them (takeSends checked that), so the
  // completions of every send not yet told are in the queue once this call has submitted them:
  // it waits for one completion beyond those, so that a turn's replies go out with the wait
  // for the next request.
  const auto wait_nr = static_cast<unsigned>(1 + sends_);
  noteSubmitted();  // the wait below submits everything queued
  if (timeout == 0) {
    io_uring_submit_and_get_events(ring);
  } else if (timeout < 0) {
    io_uring_submit_and_wait(ring, wait_nr);
  } else {
    io_uring_cqe* cqe = nullptr;
    __kernel_timespec ts = timespecOf(timeout);
    if (io_uring_submit_and_wait_timeout(ring, &cqe, wait_nr, &ts, nullptr) == -ETIME) {
      uv_due_ = true;  // a libuv timer is due
    }
  }
  uv_update_time(loop_);
  while (io_uring_cq_ready(ring) > 0) {
    io_uring_cqe* cqe = nullptr;
    if (io_uring_peek_cqe(ring, &cqe) != 0 || cqe == nullptr) {
      break;
    }
    const uint64_t data = io_uring_cqe_get_data64(cqe);
    const int res = cqe->res;
    const uint32_t flags = cqe->flags;
    io_uring_cqe_seen(ring, cqe);
    onCompletion(data, res, flags);
  }
  scratch_.swap(ends_);
  for (Slot slot : scratch_) {
    Entry& e = entries_[slot];
    if (e.reader != nullptr && e.want && e.end != kNoEnd) {
      const int end = e.end;
      e.end = kNoEnd;
      e.want = false;
      e.reader->onRingEnd(end);
    }
  }
  scratch_.clear();
  scratch_.swap(rearm_);
  for (Slot slot : scratch_) {
    if (entries_[slot].reader != nullptr && entries_[slot].want) {
      arm(slot);
    }
  }
  scratch_.clear();
  if (turn_end_) {
    turn_end_();
  }
  return true;
}

void RingLoop::run() {
  while (turn()) {
  }
}

}  // namespace sp::net
