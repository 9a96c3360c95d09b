// FlushBatch: resume, flush shard connections, flush clients (their writes sent together), once
// per loop turn.
#include "net/flush_batch.h"

namespace sp::net {

void FlushBatch::start(uv_loop_t* loop) {
  uv_check_init(loop, &check_);
  check_.data = this;
  uv_check_start(&check_, [](uv_check_t* c) { static_cast<FlushBatch*>(c->data)->run(); });
  uv_idle_init(loop, &idle_);
  started_ = true;
}

void FlushBatch::close() {
  if (closed_) {
    return;
  }
  closed_ = true;
  if (!started_) {
    return;
  }
  uv_check_stop(&check_);
  uv_close(reinterpret_cast<uv_handle_t*>(&check_), nullptr);
  idle_active_ = false;
  uv_idle_stop(&idle_);
  uv_close(reinterpret_cast<uv_handle_t*>(&idle_), nullptr);
}

// Work marked outside the poll phase must not wait for it: a PING queued by the ping timer, or a
// reply produced by a timer or the mailbox, would otherwise sit until the poll returned for some
// other reason (up to the next timer, i.e. the request timeout). The idle handle makes the coming
// poll not block; run() stops it once everything is flushed.
void FlushBatch::wake() {
  if (!idle_active_ && started_ && !closed_) {
    idle_active_ = true;
    uv_idle_start(&idle_, [](uv_idle_t*) {});
  }
}

template <typename Fn>
void FlushBatch::drain(std::vector<Flushable*>* queue, Fn fn) {
  running_.swap(*queue);
  for (Flushable* f : running_) {
    fn(f);
  }
  running_.clear();
}

void FlushBatch::run() {
  // Everything parsed this turn has been queued; send it, one write per connection.
  for (int round = 0; round < kRounds && pending(); ++round) {
    drain(&resumes_, [](Flushable* f) { f->resume(); });
    drain(&shards_, [](Flushable* f) { f->flush(); });
    // Shard commands queued on the worker's ring go to the kernel now, in one call, so that the
    // shards work on them while the clients' replies are written: sent with the wait instead,
    // they reached the shards later, in smaller batches, and the worker slept more often.
    sends_.submitQueued();
    if (!clients_.empty()) {
      sends_.open();
      drain(&clients_, [](Flushable* f) { f->flush(); });
      sends_.send();
    }
  }
  if (pending() && !closed_) {
    wake();
  } else if (idle_active_) {
    idle_active_ = false;
    uv_idle_stop(&idle_);
  }
}

}  // namespace sp::net
