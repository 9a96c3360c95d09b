// IntrusiveQueue: a FIFO of objects linked through a member pointer, so queueing never allocates.
#pragma once

#include <cstddef>

namespace sp {

template <typename T, T* T::*Next>
class IntrusiveQueue {
 public:
  bool empty() const { return head_ == nullptr; }
  size_t size() const { return size_; }
  T* front() const { return head_; }
  T* back() const { return tail_; }

  void push(T* item) {
    item->*Next = nullptr;
    if (tail_ != nullptr) {
      tail_->*Next = item;
    } else {
      head_ = item;
    }
    tail_ = item;
    ++size_;
  }

  void pushFront(T* item) {
    item->*Next = head_;
    head_ = item;
    if (tail_ == nullptr) {
      tail_ = item;
    }
    ++size_;
  }

  // Puts item just before `before`, which must be queued (found by a walk from the front: for
  // short queues). False, and nothing queued, when `before` is not in the queue.
  bool insertBefore(T* item, T* before) {
    if (before == nullptr) {
      return false;
    }
    if (head_ == before) {
      pushFront(item);
      return true;
    }
    for (T* at = head_; at != nullptr; at = at->*Next) {
      if (at->*Next == before) {
        item->*Next = before;
        at->*Next = item;
        ++size_;
        return true;
      }
    }
    return false;
  }

  T* pop() {
    T* item = head_;
    if (item != nullptr) {
      head_ = item->*Next;
      if (head_ == nullptr) {
        tail_ = nullptr;
      }
      item->*Next = nullptr;
      --size_;
    }
    return item;
  }

 private:
  T* head_ = nullptr;
  T* tail_ = nullptr;
  size_t size_ = 0;
};

// A free list of T reused within one thread.
template <typename T>
class ObjectPool {
 public:
  ObjectPool() = default;
  ObjectPool(const ObjectPool&) = delete;
  ObjectPool& operator=(const ObjectPool&) = delete;
  ~ObjectPool() {
    while (free_ != nullptr) {
      Node* n = free_;
      free_ = n->next_free;
      delete n;
    }
  }

  T* acquire() {
    ++live_;
    if (free_ == nullptr) {
      return &(new Node())->value;
    }
    Node* n = free_;
    free_ = n->next_free;
    return &n->value;
  }

  // The object keeps its members (and their capacity); the caller resets what matters.
  void release(T* value) {
    --live_;
    Node* n = reinterpret_cast<Node*>(value);
    n->next_free = free_;
    free_ = n;
  }

  size_t live() const { return live_; }

 private:
  struct Node {
    T value;  // first member: a T* is a Node*
    Node* next_free = nullptr;
  };
  Node* free_ = nullptr;
  size_t live_ = 0;
};

}  // namespace sp
