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
  size_t new_cap = std::max<size_t>({cap_ * 2, used + n, 4096});
  std::unique_ptr<char[]> grown(new char[new_cap]);
  if (used > 0) {
    std::memcpy(grown.get(), buf_.get() + rpos_, used);
  }
  buf_ = std::move(grown);
  cap_ = new_cap;
  rpos_ = 0;
  wpos_ = used;
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
  return b;
}

void BufferPool::release(Buffer* buffer) {
  if (buffer == nullptr) {
    return;
  }
  --live_;
  if (buffer->capacity() > max_retained_capacity_ || free_.size() >= max_free_) {
    delete buffer;
    return;
  }
  buffer->clear();
  free_.push_back(buffer);
}

}  // namespace sp
