// Buffer growth and the buffer pool.
#include "core/buffer.h"

#include <algorithm>
#include <new>

namespace sp {

void Buffer::ensureWritable(size_t n) {
  if (cap_ - wpos_ >= n) {
    return;
  }
  const size_t used = wpos_ - rpos_;
  if (rpos_ > 0 && cap_ - used >= n && used <= cap_ / 2) {
    std::memmove(buf_.get(), buf_.get() + rpos_, used);
    rpos_ = 0;
    wpos_ = used;
    return;
  }
  size_t new_cap = std::max<size_t>({cap_ * 2, used + n, kBufferMinBytes});
  std::unique_ptr<char[]> grown(new char[new_cap]);
  if (used > 0) {
    std::memcpy(grown.get(), buf_.get() + rpos_, used);
  }
  buf_ = std::move(grown);
  cap_ = new_cap;
  rpos_ = 0;
  wpos_ = used;
}

size_t Buffer::shrink(size_t keep) noexcept {
  const size_t used = wpos_ - rpos_;
  if (cap_ <= keep || used > keep / 2) {
    return 0;
  }
  if (used == 0) {
    return shrinkIfEmpty(keep);
  }
  const size_t new_cap = std::max<size_t>(used, kBufferMinBytes);
  std::unique_ptr<char[]> smaller(new (std::nothrow) char[new_cap]);
  if (smaller == nullptr) {
    return 0;
  }
  std::memcpy(smaller.get(), buf_.get() + rpos_, used);
  const size_t freed = cap_ - new_cap;
  buf_ = std::move(smaller);
  cap_ = new_cap;
  rpos_ = 0;
  wpos_ = used;
  return freed;
}

bool Buffer::tryEnsureWritable(size_t n) noexcept {
  try {
    ensureWritable(n);
    return true;
  } catch (const std::bad_alloc&) {
    return false;
  }
}

BufferPool::~BufferPool() {
  for (Buffer* b : free_) {
    delete b;
  }
}

Buffer* BufferPool::acquire() {
  ++live_;
  if (free_.empty()) {
    return new Buffer();
  }
  Buffer* b = free_.back();
  free_.pop_back();
  retained_bytes_ -= b->capacity();
  low_water_ = std::min(low_water_, retained_bytes_);
  return b;
}

void BufferPool::release(Buffer* buffer) {
  if (buffer == nullptr) {
    return;
  }
  --live_;
  const size_t cap = buffer->capacity();
  if (cap > max_retained_capacity_ || retained_bytes_ + cap > max_bytes_ * kBusyFactor) {
    drop(buffer);
    return;
  }
  buffer->clear();
  free_.push_back(buffer);
  retained_bytes_ += cap;
}

void BufferPool::trim() {
  if (retained_bytes_ > max_bytes_) {
    dropOldest(std::min(low_water_, retained_bytes_ - max_bytes_));
  }
  low_water_ = retained_bytes_;
}

void BufferPool::setMaxBytes(size_t max_bytes) {
  max_bytes_ = max_bytes;
  if (retained_bytes_ > max_bytes_) {
    dropOldest(retained_bytes_ - max_bytes_);
  }
  low_water_ = std::min(low_water_, retained_bytes_);
}

void BufferPool::dropOldest(size_t bytes) {
  size_t n = 0;
  size_t dropped = 0;
  while (n < free_.size() && dropped < bytes) {
    dropped += free_[n]->capacity();
    drop(free_[n]);
    ++n;
  }
  free_.erase(free_.begin(), free_.begin() + static_cast<std::ptrdiff_t>(n));
  retained_bytes_ -= dropped;
}

void BufferPool::drop(Buffer* buffer) {
  freed_bytes_ += buffer->capacity();
  delete buffer;
}

}  // namespace sp
