// Buffer: a growable byte buffer with a read and a write position, and BufferPool, the per-worker
// free list that lets idle connections hold no buffer of their own.
#pragma once

#include <cstddef>
#include <cstring>
#include <memory>
#include <string_view>
#include <utility>
#include <vector>

namespace sp {

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

// Recycles buffers within one worker thread. Buffers that grew large are freed instead of kept,
// so one 64 MB value does not pin 64 MB for the life of the worker.
class BufferPool {
 public:
  explicit BufferPool(size_t max_retained_capacity = 1 << 20, size_t max_free = 4096)
      : max_retained_capacity_(max_retained_capacity), max_free_(max_free) {}
  ~BufferPool();
  BufferPool(const BufferPool&) = delete;
  BufferPool& operator=(const BufferPool&) = delete;

  Buffer* acquire();
  void release(Buffer* buffer);
  size_t freeCount() const { return free_.size(); }
  size_t liveCount() const { return live_; }

 private:
  size_t max_retained_capacity_;
  size_t max_free_;
  size_t live_ = 0;
  std::vector<Buffer*> free_;
};

}  // namespace sp
