// Buffer: a growable byte buffer with a read and a write position, and BufferPool, the per-worker
// free list that lets idle connections hold no buffer of their own. Memory follows the bytes: a
// buffer that grew for a large value gives it back once empty, and the pool keeps a bounded number
// of bytes.
#pragma once

#include <cstddef>
#include <cstring>
#include <memory>
#include <string_view>
#include <utility>
#include <vector>

namespace sp {

// A connection buffer keeps up to this much capacity for the next bytes; a larger one gives its
// memory back once it is (nearly) empty again (Buffer::shrinkIfEmpty, Buffer::shrink), so that one
// large value does not pin its memory for the life of the connection. Small pipelines never
// reach it.
inline constexpr size_t kBufferKeepBytes = 64 * 1024;

// The least storage a buffer allocates: one small reply or request fits, and a connection with
// one such in flight costs about this much besides its session (buffers grow by doubling).
inline constexpr size_t kBufferMinBytes = 1024;

class Buffer {
 public:
  Buffer() = default;
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  const char* readPtr() const { return buf_.get() + rpos_; }
  size_t size() const { return wpos_ - rpos_; }
  bool empty() const { return wpos_ == rpos_; }
  std::string_view view() const { return {readPtr(), size()}; }
  size_t capacity() const { return cap_; }

  // Space after the written bytes, for reading from a socket straight into the buffer.
  char* writePtr() { return buf_.get() + wpos_; }
  size_t writable() const { return cap_ - wpos_; }
  void ensureWritable(size_t n);  // throws std::bad_alloc, leaving the buffer as it was
  // ensureWritable for socket allocation callbacks, which must not throw: false when the memory
  // could not be had (the buffer is unchanged, and its connection should be closed).
  bool tryEnsureWritable(size_t n) noexcept;
  void commit(size_t n) { wpos_ += n; }

  void append(const char* data, size_t n) {
    if (n == 0) {
      return;  // an empty view may carry a null pointer, which memcpy must not see
    }
    ensureWritable(n);
    std::memcpy(buf_.get() + wpos_, data, n);
    wpos_ += n;
  }
  void append(std::string_view s) { append(s.data(), s.size()); }

  // Drops n bytes from the front; an emptied buffer starts again at offset 0.
  void consume(size_t n) {
    rpos_ += n;
    if (rpos_ == wpos_) {
      rpos_ = wpos_ = 0;
    }
  }
  void clear() { rpos_ = wpos_ = 0; }

  // Frees the storage of an empty buffer whose capacity passed `keep` bytes; returns the bytes
  // freed (0 when it kept them). Cheap: one comparison unless there is something to free.
  size_t shrinkIfEmpty(size_t keep) noexcept {
    if (cap_ <= keep || wpos_ != rpos_) {
      return 0;
    }
    const size_t freed = cap_;
    buf_.reset();
    cap_ = rpos_ = wpos_ = 0;
    return freed;
  }
  // shrinkIfEmpty, and also for a buffer that still holds up to keep / 2 bytes: they move to
  // storage just large enough (when that cannot be had, nothing changes). Only where nothing
  // points into the buffer, e.g. not while a socket write of it is in flight. Returns the bytes
  // given back.
  size_t shrink(size_t keep) noexcept;

  void swap(Buffer& other) noexcept {
    std::swap(buf_, other.buf_);
    std::swap(cap_, other.cap_);
    std::swap(rpos_, other.rpos_);
    std::swap(wpos_, other.wpos_);
  }

 private:
  std::unique_ptr<char[]> buf_;
  size_t cap_ = 0;
  size_t rpos_ = 0;
  size_t wpos_ = 0;
};

// Recycles buffers within one worker thread, bounded in bytes of capacity so that neither one
// 64 MB value nor a burst of thousands of clients with 1 MB requests pins its memory for the life
// of the worker. At rest the free buffers hold at most `max_bytes` (limits.buffer_pool_bytes).
// While busy they may hold up to kBusyFactor times that, so that a steady load whose buffers are
// in use at once only part of each loop turn does not free and allocate them every turn; what
// sits unused through a whole trim() interval beyond `max_bytes` is freed then. A buffer larger
// than `max_retained_capacity` is never kept.
class BufferPool {
 public:
  static constexpr size_t kDefaultMaxBytes = 4 << 20;
  static constexpr size_t kBusyFactor = 16;

  explicit BufferPool(size_t max_bytes = kDefaultMaxBytes, size_t max_retained_capacity = 1 << 20)
      : max_bytes_(max_bytes), max_retained_capacity_(max_retained_capacity) {}
  ~BufferPool();
  BufferPool(const BufferPool&) = delete;
  BufferPool& operator=(const BufferPool&) = delete;

  Buffer* acquire();
  void release(Buffer* buffer);
  // Periodic (the worker's trim timer): frees the free buffers beyond `max_bytes` that no
  // acquire() needed since the last call, least recently used first.
  void trim();
  // A new bound (a reload): free buffers beyond it are freed at once.
  void setMaxBytes(size_t max_bytes);

  size_t freeCount() const { return free_.size(); }
  size_t liveCount() const { return live_; }
  size_t retainedBytes() const { return retained_bytes_; }  // capacity of the free buffers
  // Capacity freed (not kept) since the last call: the worker gives memory back to the system
  // when it is large.
  size_t takeFreedBytes() { return std::exchange(freed_bytes_, 0); }

 private:
  void drop(Buffer* buffer);
  void dropOldest(size_t bytes);  // from the bottom of the free stack, at least `bytes`

  size_t max_bytes_;
  size_t max_retained_capacity_;
  size_t live_ = 0;
  size_t retained_bytes_ = 0;
  size_t low_water_ = 0;  // least retained_bytes_ since the last trim()
  size_t freed_bytes_ = 0;
  std::vector<Buffer*> free_;  // a stack: the most recently released last
};

}  // namespace sp
