// SendBatch: a turn's client writes as one io_uring submission, or as send(2) calls.
#include "net/send_batch.h"

#include <liburing.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include "core/assert.h"
#include "net/inline_send.h"

namespace sp::net {

namespace {

constexpr int kSendFlags = MSG_DONTWAIT | MSG_NOSIGNAL;
constexpr int kSubmitAttempts = 4;

// send(2) as the batch reports it: bytes written or -errno, EINTR retried, and ENOBUFS read as
// EAGAIN (the socket has no room for now), as libuv reads it.
ssize_t resultOf(ssize_t n) { return n == -ENOBUFS ? -EAGAIN : n; }

ssize_t plainSend(int fd, const char* data, size_t size) {
  for (;;) {
    const ssize_t n = ::send(fd, data, size, kSendFlags);
    if (n >= 0) {
      return n;
    }
    if (errno != EINTR) {
      return resultOf(-errno);
    }
  }
}

}  // namespace

struct SendBatch::Ring {
  io_uring ring{};
  ~Ring() { io_uring_queue_exit(&ring); }
};

SendBatch::SendBatch() = default;
SendBatch::~SendBatch() = default;

void SendBatch::countInto(Counter* ring_on, Counter* submits, Counter* writes) {
  ring_on_ = ring_on;
  submits_ = submits;
  ring_writes_ = writes;
  if (ring_on_ != nullptr) {
    ring_on_->set(ring_ != nullptr ? 1 : 0);
  }
}

namespace {

// One send through `ring` from a socket pair's end `fd` to `peer`: its completion must be posted
// by the time io_uring_submit returns. *res: its result.
bool probeSend(io_uring* ring, int fd, int peer, const char* data, size_t size, int* res,
               std::string* why) {
  io_uring_sqe* sqe = io_uring_get_sqe(ring);
  if (sqe == nullptr) {
    *why = "no submission entry";
    return false;
  }
  io_uring_prep_send(sqe, fd, data, size, kSendFlags);
  const int rc = io_uring_submit(ring);
  if (rc != 1) {
    *why = std::string("submit: ") + std::strerror(rc < 0 ? -rc : EIO);
    return false;
  }
  io_uring_cqe* cqe = nullptr;
  if (io_uring_peek_cqe(ring, &cqe) == 0 && cqe != nullptr) {
    *res = cqe->res;
    io_uring_cqe_seen(ring, cqe);
    return true;
  }
  // Not done inline: the send waits for room. Make room so that it completes before the ring
  // (and the bytes it points at) go away.
  char sink[4096];
  while (::recv(peer, sink, sizeof sink, MSG_DONTWAIT) > 0) {
  }
  __kernel_timespec timeout{1, 0};
  if (io_uring_wait_cqe_timeout(ring, &cqe, &timeout) == 0) {
    io_uring_cqe_seen(ring, cqe);
  }
  *why = "a send did not complete inside its submission";
  return false;
}

}  // namespace

bool sendsCompleteInline(io_uring* ring, std::string* why) {
  int fds[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, fds) != 0) {
    *why = std::string("socketpair: ") + std::strerror(errno);
    return false;
  }
  bool ok = false;
  int res = 0;
  static const char kFill[4096] = {};
  if (probeSend(ring, fds[0], fds[1], kFill, 1, &res, why)) {
    if (res != 1) {
      *why = "a send with room returned " + std::to_string(res);
    } else {
      while (::send(fds[0], kFill, sizeof kFill, kSendFlags) > 0) {
      }
      if (probeSend(ring, fds[0], fds[1], kFill, sizeof kFill, &res, why)) {
        ok = res == -EAGAIN;
        if (!ok) {
          *why = "a send to a full socket returned " + std::to_string(res);
        }
      }
    }
  }
  ::close(fds[0]);
  ::close(fds[1]);
  return ok;
}

bool SendBatch::startRing(unsigned entries, std::string* why) {
  stopRing();
  auto ring = std::make_unique<Ring>();
  // SUBMIT_ALL: a failing entry does not stop the ones behind it (Linux 5.18); older kernels
  // refuse the flag, and a submission that stops short is handled in sendRing.
  int rc = io_uring_queue_init(entries, &ring->ring, IORING_SETUP_SUBMIT_ALL);
  if (rc == -EINVAL) {
    rc = io_uring_queue_init(entries, &ring->ring, 0);
  }
  if (rc < 0) {
    ring.release();  // nothing to tear down
    *why = std::string("io_uring_queue_init: ") + std::strerror(-rc);
    return false;
  }
  if (!sendsCompleteInline(&ring->ring, why)) {
    return false;
  }
  ring_ = std::move(ring);
  ring_entries_ = entries;
  if (ring_on_ != nullptr) {
    ring_on_->set(1);
  }
  return true;
}

bool SendBatch::sendWith(RingLoop* loop, std::string* why) {
  if (!loop->takeSends(this, why)) {
    return false;
  }
  loop->countSendSubmitsInto(submits_);
  loop_ = loop;
  if (ring_on_ != nullptr) {
    ring_on_->set(1);
  }
  return true;
}

void SendBatch::stopRing() {
  ring_.reset();
  if (ring_on_ != nullptr) {
    ring_on_->set(0);
  }
}

void SendBatch::add(int fd, const char* data, size_t size, Sender* sender) {
  SP_ASSERT(open_ && size > 0 && !sender->in_send_batch);
  sender->in_send_batch = true;
  entries_.push_back(Entry{fd, data, size, sender, 0});
}

void SendBatch::forget(Sender* sender) {
  if (!sender->in_send_batch) {
    return;
  }
  sender->in_send_batch = false;
  for (Entry& e : entries_) {
    if (e.sender == sender) {
      e.sender = nullptr;
    }
  }
  for (Flight& f : flights_) {
    if (f.sender == sender) {
      f.sender = nullptr;
      loop_->submitPending(f.epoch);
    }
  }
}

void SendBatch::launch(int fd, const char* data, size_t size, Sender* sender, bool counted) {
  uint32_t index;
  if (!free_flights_.empty()) {
    index = free_flights_.back();
    free_flights_.pop_back();
  } else {
    index = static_cast<uint32_t>(flights_.size());
    flights_.emplace_back();
  }
  flights_[index] = Flight{sender, loop_->prepSend(fd, data, size, index, counted)};
}

void SendBatch::queue(int fd, const char* data, size_t size, Sender* sender) {
  SP_ASSERT(loop_ != nullptr && size > 0 && !sender->in_send_batch);
  sender->in_send_batch = true;
  launch(fd, data, size, sender, false);
}

void SendBatch::sendThroughLoop() {
  size_t queued = 0;
  for (const Entry& e : entries_) {
    if (e.sender != nullptr) {
      launch(e.fd, e.data, e.size, e.sender, true);
      ++queued;
    }
  }
  if (ring_writes_ != nullptr) {
    ring_writes_->add(queued);
  }
  entries_.clear();
}

void SendBatch::onRingSent(uint32_t index, int res) {
  Sender* sender = std::exchange(flights_[index].sender, nullptr);
  free_flights_.push_back(index);
  if (sender != nullptr) {
    sender->in_send_batch = false;
    sender->sent(resultOf(res));
  }
}

void SendBatch::sendPlain(size_t from, size_t to) {
  for (size_t i = from; i < to; ++i) {
    Entry& e = entries_[i];
    if (e.sender != nullptr) {
      e.result = plainSend(e.fd, e.data, e.size);
    }
  }
}

size_t SendBatch::sendRing(size_t from, size_t to) {
  io_uring* ring = &ring_->ring;
  size_t prepared = 0;
  for (size_t i = from; i < to; ++i) {
    const Entry& e = entries_[i];
    if (e.sender == nullptr) {
      continue;  // forgotten: skipped, counted as prepared so the caller moves past it
    }
    io_uring_sqe* sqe = io_uring_get_sqe(ring);
    SP_ASSERT(sqe != nullptr);  // at most ring_entries_ per call, and every one is reaped
    io_uring_prep_send(sqe, e.fd, e.data, e.size, kSendFlags);
    io_uring_sqe_set_data64(sqe, i);
    ++prepared;
  }
  if (prepared == 0) {
    return to - from;
  }
  // One io_uring_enter submits them all; each send is done (or has failed with EAGAIN) inside it.
  size_t submitted = 0;
  for (int attempt = 0; attempt < kSubmitAttempts && submitted < prepared; ++attempt) {
    const int rc = io_uring_submit(ring);
    if (submits_ != nullptr) {
      submits_->add();
    }
    if (rc > 0) {
      submitted += static_cast<size_t>(rc);
    } else if (rc != 0 && rc != -EINTR && rc != -EAGAIN && rc != -EBUSY) {
      break;
    }
  }
  for (size_t reaped = 0; reaped < submitted; ++reaped) {
    io_uring_cqe* cqe = nullptr;
    int rc = io_uring_peek_cqe(ring, &cqe);
    while (rc == -EAGAIN || rc == -EINTR) {
      rc = io_uring_wait_cqe(ring, &cqe);  // not done inline after all: its buffer is in use
    }
    SP_ASSERT(rc == 0 && cqe != nullptr);
    const uint64_t index = io_uring_cqe_get_data64(cqe);
    SP_ASSERT(index >= from && index < to);
    entries_[index].result = resultOf(cqe->res);
    io_uring_cqe_seen(ring, cqe);
  }
  if (ring_writes_ != nullptr) {
    ring_writes_->add(submitted);
  }
  if (submitted == prepared) {
    return to - from;
  }
  // Entries are left in the submission queue: they would go out with the next submission, after
  // their bytes are gone. Drop the ring with them, and send the rest with send(2) from here on.
  size_t done_to = from;
  for (size_t seen = 0; done_to < to; ++done_to) {
    if (entries_[done_to].sender != nullptr && seen++ == submitted) {
      break;
    }
  }
  stopRing();
  return done_to - from;
}

void SendBatch::send() {
  open_ = false;
  if (loop_ != nullptr && loop_->sendsOut() + entries_.size() <= max_loop_sends_) {
    sendThroughLoop();
    return;
  }
  const size_t n = entries_.size();
  size_t done = 0;
  if (n > 1) {
    while (done < n && ring_ != nullptr) {
      done += sendRing(done, std::min<size_t>(n, done + ring_entries_));
    }
  }
  sendPlain(done, n);
  for (Entry& e : entries_) {
    Sender* sender = std::exchange(e.sender, nullptr);
    if (sender != nullptr) {
      sender->in_send_batch = false;
      sender->sent(e.result);
    }
  }
  entries_.clear();
}

}  // namespace sp::net
