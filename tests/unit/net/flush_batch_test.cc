// FlushBatch with fake connections: each round resumes, then flushes shard connections, then
// clients; a connection marked twice runs once; work that a flush marks runs in the next round of
// the same check phase; a connection that keeps re-marking itself stops after the round limit and
// waits for the next turn; the clients' writes go out together after the round's last client
// flush; and work marked by a timer goes out in that same loop turn, without the poll blocking.
#include "net/flush_batch.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>
#include <uv.h>

#include <functional>
#include <string>
#include <vector>

namespace sp::net {
namespace {

// Records what the batch ran, in order, in a shared log.
class FakeConn final : public Flushable {
 public:
  FakeConn(std::string name, std::vector<std::string>* log) : name_(std::move(name)), log_(log) {}
  void flush() override {
    dirty = false;
    log_->push_back("flush " + name_);
    if (on_flush) {
      on_flush();
    }
  }
  void resume() override {
    resume_pending = false;
    log_->push_back("resume " + name_);
  }
  std::function<void()> on_flush;

 private:
  std::string name_;
  std::vector<std::string>* log_;
};

TEST(FlushBatchTest, ResumesThenFlushesShardsThenClientsOnceEach) {
  std::vector<std::string> log;
  FlushBatch batch;
  FakeConn client("client", &log);
  FakeConn shard("shard", &log);
  FakeConn reader("reader", &log);
  batch.markClient(&client);
  batch.markClient(&client);
  batch.markShard(&shard);
  batch.markResume(&reader);
  batch.markResume(&reader);
  batch.run();
  EXPECT_EQ(log, (std::vector<std::string>{"resume reader", "flush shard", "flush client"}));
  log.clear();
  batch.run();  // nothing left marked
  EXPECT_TRUE(log.empty());
}

TEST(FlushBatchTest, WorkAFlushMarksRunsInTheNextRoundOfTheSamePhase) {
  std::vector<std::string> log;
  FlushBatch batch;
  FakeConn client("client", &log);
  FakeConn shard("shard", &log);
  // A client flush that queues a request to a shard (as a failed write answering a FIFO might).
  client.on_flush = [&] { batch.markShard(&shard); };
  batch.markClient(&client);
  batch.run();
  EXPECT_EQ(log, (std::vector<std::string>{"flush client", "flush shard"}));
}

// A client whose flush puts its write in the batch's SendBatch, as ClientSession does.
class BatchedClient final : public Flushable, public SendBatch::Sender {
 public:
  BatchedClient(std::string name, FlushBatch* batch, int fd, std::vector<std::string>* log)
      : name_(std::move(name)), batch_(batch), fd_(fd), log_(log) {}
  void flush() override {
    dirty = false;
    log_->push_back("flush " + name_);
    EXPECT_TRUE(batch_->sends().collecting());
    batch_->sends().add(fd_, name_.data(), name_.size(), this);
  }
  void sent(ssize_t result) override {
    log_->push_back("sent " + name_ + " " + std::to_string(result));
  }

 private:
  std::string name_;
  FlushBatch* batch_;
  int fd_;
  std::vector<std::string>* log_;
};

TEST(FlushBatchTest, ClientWritesGoOutTogetherAfterTheRoundsLastClientFlush) {
  int fds[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, fds), 0);
  std::vector<std::string> log;
  FlushBatch batch;
  std::string why;
  batch.sends().startRing(8, &why);  // either way, the order below holds
  EXPECT_FALSE(batch.sends().collecting());
  BatchedClient a("a", &batch, fds[0], &log);
  BatchedClient b("bb", &batch, fds[0], &log);
  batch.markClient(&a);
  batch.markClient(&b);
  batch.run();
  EXPECT_EQ(log, (std::vector<std::string>{"flush a", "flush bb", "sent a 1", "sent bb 2"}));
  EXPECT_FALSE(batch.sends().collecting());
  char got[8] = {};
  EXPECT_EQ(::recv(fds[1], got, sizeof got, 0), 3);
  EXPECT_EQ(std::string(got, 3), "abb");
  ::close(fds[0]);
  ::close(fds[1]);
}

TEST(FlushBatchTest, AConnectionThatKeepsMarkingItselfWaitsForTheNextTurnAfterTheRoundLimit) {
  std::vector<std::string> log;
  FlushBatch batch;
  FakeConn busy("busy", &log);
  busy.on_flush = [&] { batch.markClient(&busy); };
  batch.markClient(&busy);
  batch.run();
  EXPECT_EQ(log.size(), 8u);  // one flush per round
  EXPECT_TRUE(busy.dirty);    // still marked: the next turn takes it
  busy.on_flush = nullptr;
  log.clear();
  batch.run();
  EXPECT_EQ(log, (std::vector<std::string>{"flush busy"}));
}

TEST(FlushBatchTest, WorkMarkedByATimerGoesOutInThatLoopTurn) {
  uv_loop_t loop;
  ASSERT_EQ(uv_loop_init(&loop), 0);
  std::vector<std::string> log;
  FlushBatch batch;
  batch.start(&loop);
  FakeConn client("client", &log);
  struct Context {
    FlushBatch* batch;
    FakeConn* client;
  } context{&batch, &client};
  uv_timer_t timer;
  uv_timer_init(&loop, &timer);
  timer.data = &context;
  uv_timer_start(
      &timer,
      [](uv_timer_t* t) {
        auto* c = static_cast<Context*>(t->data);
        c->batch->markClient(c->client);
      },
      0, 0);
  // A second timer far away: a poll that blocked would wait for it.
  uv_timer_t far;
  uv_timer_init(&loop, &far);
  uv_timer_start(
      &far, [](uv_timer_t*) {}, 60000, 0);
  uv_update_time(&loop);
  const uint64_t before = uv_hrtime();
  uv_run(&loop, UV_RUN_ONCE);
  EXPECT_EQ(log, (std::vector<std::string>{"flush client"}));
  EXPECT_LT(uv_hrtime() - before, 5'000'000'000ull);  // far from the 60 s timer
  // Closing stops the batch: nothing marked afterwards runs.
  batch.close();
  uv_close(reinterpret_cast<uv_handle_t*>(&timer), nullptr);
  uv_close(reinterpret_cast<uv_handle_t*>(&far), nullptr);
  uv_run(&loop, UV_RUN_DEFAULT);
  EXPECT_EQ(uv_loop_close(&loop), 0);
}

}  // namespace
}  // namespace sp::net
