// FlushBatch: a worker's output batching. Client sessions and shard connections that have bytes
// to send mark themselves dirty; sessions with buffered input that could not be read on mark
// themselves for resuming. A uv_check_t, run after every I/O callback of the loop turn, then
// resumes the marked sessions, flushes the shard connections and then the client sessions, each
// with one write, for a few rounds while flushing produces more (a failed shard answers its
// FIFO). A uv_idle_t keeps the next poll from blocking while marked work remains, so work marked
// by a timer or the mailbox goes out in the same turn. The client sessions' writes of a round
// go out together through sends() (net/send_batch.h); where the worker's ring carries writes,
// the shard connections' writes of a round are submitted together right after they are flushed,
// and the clients' go with the ring's next wait. Loop thread only.
#pragma once

#include <uv.h>

#include <vector>

#include "net/send_batch.h"

namespace sp::net {

// A connection the batch flushes (and, for a client session, resumes).
class Flushable {
 public:
  virtual void flush() = 0;  // writes what is queued, once per turn
  virtual void resume() {}   // re-processes buffered input (client sessions)

  bool dirty = false;           // marked for flush() this turn
  bool resume_pending = false;  // marked for resume() this turn

 protected:
  ~Flushable() = default;
};

class FlushBatch {
 public:
  FlushBatch() = default;
  FlushBatch(const FlushBatch&) = delete;
  FlushBatch& operator=(const FlushBatch&) = delete;

  void start(uv_loop_t* loop);  // on the loop's thread
  void close();                 // nothing is flushed after this

  // A client session with bytes to send.
  void markClient(Flushable* client) {
    if (!client->dirty) {
      client->dirty = true;
      clients_.push_back(client);
      wake();
    }
  }
  // A shard connection with bytes to send.
  void markShard(Flushable* shard) {
    if (!shard->dirty) {
      shard->dirty = true;
      shards_.push_back(shard);
      wake();
    }
  }
  // A client session whose buffered input can be processed now.
  void markResume(Flushable* client) {
    if (!client->resume_pending) {
      client->resume_pending = true;
      resumes_.push_back(client);
      wake();
    }
  }

  // Where client sessions put their write while the batch flushes them (collecting() is true
  // then); the writes go out after the last client of the round.
  SendBatch& sends() { return sends_; }

  // The check phase; public for tests that drive a batch without a loop turn.
  void run();
  // run() between start() and close(): the ring loop's end of turn.
  void runIfStarted() {
    if (started_ && !closed_) {
      run();
    }
  }

 private:
  static constexpr int kRounds = 8;

  void wake();
  bool pending() const { return !resumes_.empty() || !shards_.empty() || !clients_.empty(); }
  // Runs `fn` on every entry of `queue` marked so far (new marks wait for the next round).
  template <typename Fn>
  void drain(std::vector<Flushable*>* queue, Fn fn);

  uv_check_t check_{};
  uv_idle_t idle_{};
  bool idle_active_ = false;
  bool started_ = false;
  bool closed_ = false;
  std::vector<Flushable*> clients_;
  std::vector<Flushable*> shards_;
  std::vector<Flushable*> resumes_;
  std::vector<Flushable*> running_;  // the round's entries, swapped out of a queue
  SendBatch sends_;
};

}  // namespace sp::net
