// RingLoop over real socket pairs and a real libuv loop: bytes reach their reader whole and in
// order (more at once than the ring has buffers, too), the end of a stream is told once, a paused
// reader hears nothing (not even the end) until it resumes, a removed reader hears nothing and
// its receive ends before run() returns, and libuv's timers and async handles keep working while
// the worker waits in io_uring_enter. A SendBatch that sends through the loop: its writes go to
// the kernel with the next wait (or when submitted), each sender is told its own result at the
// next turn, a write forgotten before that wait is submitted at once, so it never reaches the
// socket that next takes its number, and a batch too large for the loop's completion queue goes
// through the batch's own ring at once.
#include "net/ring_loop.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "net/send_batch.h"
#include "unit/net/socket_pair.h"

namespace sp::net {
namespace {

using Clock = std::chrono::steady_clock;

class RecordingReader final : public RingLoop::Reader {
 public:
  void onRingData(const char* data, size_t size) override { got.append(data, size); }
  void onRingEnd(int error) override {
    ++ends;
    end = error;
  }
  std::string got;
  int ends = 0;
  int end = 1;
};

class RecordingSender final : public SendBatch::Sender {
 public:
  void sent(ssize_t result) override { results.push_back(result); }
  std::vector<ssize_t> results;
};

using Pair = SocketPair;

// Each test runs with buffers the kernel consumes incrementally (where it can) and with
// whole-buffer receives.
class RingLoopTest : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    ring_.preferIncrementalBuffers(GetParam());
    uv_loop_init(&loop_);
    // A repeating timer keeps libuv's loop alive and bounds every wait.
    uv_timer_init(&loop_, &tick_);
    tick_.data = this;
    uv_timer_start(
        &tick_, [](uv_timer_t* t) { ++static_cast<RingLoopTest*>(t->data)->ticks_; }, 5, 5);
    std::string why;
    if (!ring_.start(
            &loop_, [this] { ++turn_ends_; }, &why)) {
      started_ = false;
      GTEST_SKIP() << "io_uring reads not usable here: " << why;
    }
    ring_.countInto(&reads_);
  }
  void TearDown() override {
    uv_close(reinterpret_cast<uv_handle_t*>(&tick_), nullptr);
    if (started_) {
      ring_.run();  // returns once the loop is closed and every receive has ended
    } else {
      uv_run(&loop_, UV_RUN_DEFAULT);
    }
    EXPECT_EQ(uv_loop_close(&loop_), 0);
  }
  // Turns until `done` holds (2 s at most).
  template <typename Done>
  bool turnUntil(Done done) {
    const auto deadline = Clock::now() + std::chrono::seconds(2);
    while (!done() && Clock::now() < deadline) {
      EXPECT_TRUE(ring_.turn());
    }
    return done();
  }
  void turnFor(std::chrono::milliseconds span) {
    const auto deadline = Clock::now() + span;
    while (Clock::now() < deadline) {
      EXPECT_TRUE(ring_.turn());
    }
  }

  uv_loop_t loop_{};
  uv_timer_t tick_{};
  RingLoop ring_;
  bool started_ = true;
  int ticks_ = 0;
  int turn_ends_ = 0;
  Counter reads_;
  SendBatch sends_;  // after ring_: its last completions are read in TearDown
};

TEST_P(RingLoopTest, BytesArriveInOrderAndTheEndIsToldOnce) {
  Pair pair;
  RecordingReader reader;
  const RingLoop::Slot slot = ring_.add(pair.fds[0], &reader);
  pair.write("SET a 1\r\n");
  ASSERT_TRUE(turnUntil([&] { return reader.got.size() == 9; }));
  pair.write("GET a\r\n");
  pair.closePeer();
  ASSERT_TRUE(turnUntil([&] { return reader.ends > 0; }));
  EXPECT_EQ(reader.got, "SET a 1\r\nGET a\r\n");
  EXPECT_EQ(reader.end, 0);
  turnFor(std::chrono::milliseconds(30));
  EXPECT_EQ(reader.ends, 1);
  EXPECT_GE(reads_.get(), 2u);
  EXPECT_GT(turn_ends_, 0);
  ring_.remove(slot);
}

TEST_P(RingLoopTest, MoreBytesAtOnceThanTheRingHasBuffersArriveWholeAndInOrder) {
  Pair pair;
  int size = 4 << 20;  // the socket pair buffers what the ring's 1 MiB cannot take at once
  ASSERT_EQ(setsockopt(pair.fds[1], SOL_SOCKET, SO_SNDBUF, &size, sizeof size), 0);
  RecordingReader reader;
  const RingLoop::Slot slot = ring_.add(pair.fds[0], &reader);
  std::string sent;
  for (int i = 0; sent.size() < (3u << 20); ++i) {
    sent += std::to_string(i) + ",";
  }
  size_t off = 0;
  const auto deadline = Clock::now() + std::chrono::seconds(5);
  while (reader.got.size() < sent.size() && Clock::now() < deadline) {
    if (off < sent.size()) {
      const ssize_t n = ::send(pair.fds[1], sent.data() + off, sent.size() - off, MSG_DONTWAIT);
      off += n > 0 ? static_cast<size_t>(n) : 0;
    }
    ASSERT_TRUE(ring_.turn());
  }
  EXPECT_EQ(reader.got.size(), sent.size());
  EXPECT_TRUE(reader.got == sent) << "bytes reordered or lost";
  ring_.remove(slot);
}

TEST_P(RingLoopTest, SmallReceivesFromManySocketsShareBuffers) {
  // 600 sockets each have a few bytes waiting: far more receives than the client pool has
  // buffers (64). Consumed incrementally, one buffer takes the bytes of hundreds of them, and
  // every socket's bytes arrive in the first turns; with whole buffers, the receives that find
  // none left are armed again turn after turn.
  constexpr int kPairs = 600;
  std::vector<std::unique_ptr<Pair>> pairs;
  std::vector<RecordingReader> readers(kPairs);
  std::vector<RingLoop::Slot> slots;
  for (int i = 0; i < kPairs; ++i) {
    pairs.push_back(std::make_unique<Pair>());
    pairs.back()->write("GET k" + std::to_string(i) + ";");
    slots.push_back(ring_.add(pairs.back()->fds[0], &readers[i]));
  }
  const auto all_read = [&] {
    for (int i = 0; i < kPairs; ++i) {
      if (readers[i].got != "GET k" + std::to_string(i) + ";") {
        return false;
      }
    }
    return true;
  };
  for (int turn = 0; turn < 2 && !all_read(); ++turn) {
    ASSERT_TRUE(ring_.turn());
  }
  if (ring_.incrementalBuffers()) {
    EXPECT_TRUE(all_read());
  } else {
    EXPECT_FALSE(all_read());  // two turns' 128 buffers cannot hold 600 receives
  }
  ASSERT_TRUE(turnUntil(all_read));
  if (!GetParam()) {
    EXPECT_FALSE(ring_.incrementalBuffers());
  }
  for (RingLoop::Slot slot : slots) {
    ring_.remove(slot);
  }
}

TEST_P(RingLoopTest, APausedReaderHearsNothingUntilItResumes) {
  Pair pair;
  RecordingReader reader;
  const RingLoop::Slot slot = ring_.add(pair.fds[0], &reader);
  ring_.pause(slot);
  turnFor(std::chrono::milliseconds(20));
  pair.write("PING\r\n");
  turnFor(std::chrono::milliseconds(50));
  EXPECT_EQ(reader.got, "");
  ring_.resume(slot);
  ASSERT_TRUE(turnUntil([&] { return reader.got == "PING\r\n"; }));
  // The end of the stream waits for a resume as well.
  ring_.pause(slot);
  turnFor(std::chrono::milliseconds(20));
  pair.closePeer();
  turnFor(std::chrono::milliseconds(50));
  EXPECT_EQ(reader.ends, 0);
  ring_.resume(slot);
  ASSERT_TRUE(turnUntil([&] { return reader.ends == 1; }));
  EXPECT_EQ(reader.end, 0);
  ring_.remove(slot);
}

TEST_P(RingLoopTest, ARemovedReaderHearsNothingAndItsSlotIsReused) {
  Pair first;
  RecordingReader gone;
  const RingLoop::Slot slot = ring_.add(first.fds[0], &gone);
  ring_.remove(slot);
  first.write("late");
  turnFor(std::chrono::milliseconds(50));
  EXPECT_EQ(gone.got, "");
  EXPECT_EQ(gone.ends, 0);
  // The slot comes back once its receive has ended, and serves the next reader.
  Pair second;
  RecordingReader next;
  EXPECT_EQ(ring_.add(second.fds[0], &next), slot);
  second.write("fresh");
  ASSERT_TRUE(turnUntil([&] { return next.got == "fresh"; }));
  EXPECT_EQ(gone.got, "");
  ring_.remove(slot);
}

TEST_P(RingLoopTest, LibuvTimersAndAsyncHandlesRunWhileTheLoopWaitsInTheRing) {
  struct Async {
    uv_async_t handle{};
    std::atomic<int> calls{0};
  } async;
  uv_async_init(&loop_, &async.handle, [](uv_async_t* h) {
    auto* a = static_cast<Async*>(h->data);
    ++a->calls;
    uv_close(reinterpret_cast<uv_handle_t*>(h), nullptr);
  });
  async.handle.data = &async;
  std::thread poster([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    uv_async_send(&async.handle);
  });
  const int ticks_before = ticks_;
  ASSERT_TRUE(turnUntil([&] { return async.calls.load() == 1 && ticks_ >= ticks_before + 3; }));
  poster.join();
}

TEST_P(RingLoopTest, ManyReadersEachGetTheirOwnBytes) {
  constexpr int kPairs = 200;
  std::vector<std::unique_ptr<Pair>> pairs;
  std::vector<RecordingReader> readers(kPairs);
  std::vector<RingLoop::Slot> slots;
  for (int i = 0; i < kPairs; ++i) {
    pairs.push_back(std::make_unique<Pair>());
    slots.push_back(ring_.add(pairs.back()->fds[0], &readers[i]));
  }
  for (int round = 0; round < 3; ++round) {
    for (int i = 0; i < kPairs; ++i) {
      pairs[i]->write(std::to_string(i) + ":" + std::to_string(round) + ";");
    }
  }
  ASSERT_TRUE(turnUntil([&] {
    for (int i = 0; i < kPairs; ++i) {
      const std::string want =
          std::to_string(i) + ":0;" + std::to_string(i) + ":1;" + std::to_string(i) + ":2;";
      if (readers[i].got != want) {
        return false;
      }
    }
    return true;
  }));
  for (RingLoop::Slot slot : slots) {
    ring_.remove(slot);
  }
}

TEST_P(RingLoopTest, ASocketClosedBeforeItsReceiveWasSubmittedLeavesItsNumbersNextOwnerAlone) {
  // A connection accepted and closed in the same turn: its receive is still waiting to be
  // submitted when its socket closes, and the next socket opened gets the same number. Every
  // byte sent to that next socket must reach its own reader.
  RecordingReader gone;
  auto first = std::make_unique<Pair>();
  const int number = first->fds[0];
  const RingLoop::Slot old_slot = ring_.add(first->fds[0], &gone);
  ring_.remove(old_slot);
  first.reset();  // closes both ends, freeing the numbers
  Pair second;
  ASSERT_EQ(std::min(second.fds[0], second.fds[1]), number) << "the number was not reused";
  const int reused = second.fds[0] == number ? 0 : 1;
  RecordingReader next;
  const RingLoop::Slot slot = ring_.add(second.fds[reused], &next);
  const int peer = second.fds[1 - reused];
  const std::string sent = "GET a\r\nGET b\r\nGET c\r\n";
  ASSERT_EQ(::write(peer, sent.data(), sent.size()), static_cast<ssize_t>(sent.size()));
  ASSERT_TRUE(turnUntil([&] { return next.got.size() >= sent.size(); })) << next.got;
  EXPECT_EQ(next.got, sent);
  EXPECT_EQ(gone.got, "");
  ring_.remove(slot);
}

TEST_P(RingLoopTest, ClientUploadsThatHoldEveryClientBufferDoNotHoldUpAShardReply) {
  // 60 clients each have 64 KiB waiting, far more than the clients' 1 MiB of buffers: their
  // receives run out of buffers turn after turn. A shard connection's reply must still be read
  // in the first turns, from its own pool.
  constexpr int kClients = 60;
  std::vector<std::unique_ptr<Pair>> clients;
  std::vector<RecordingReader> client_readers(kClients);
  std::vector<RingLoop::Slot> slots;
  const std::string upload(64 * 1024, 'u');
  for (int i = 0; i < kClients; ++i) {
    clients.push_back(std::make_unique<Pair>());
    int size = 1 << 20;
    ASSERT_EQ(setsockopt(clients.back()->fds[1], SOL_SOCKET, SO_SNDBUF, &size, sizeof size), 0);
    clients.back()->write(upload);
    slots.push_back(ring_.add(clients.back()->fds[0], &client_readers[i]));
  }
  Pair shard;
  RecordingReader shard_reader;
  slots.push_back(ring_.add(shard.fds[0], &shard_reader, RingLoop::Source::kShard));
  shard.write("+OK\r\n");
  for (int turn = 0; turn < 3 && shard_reader.got.empty(); ++turn) {
    ASSERT_TRUE(ring_.turn());
  }
  EXPECT_EQ(shard_reader.got, "+OK\r\n");
  // And every client's upload arrives whole in the end.
  ASSERT_TRUE(turnUntil([&] {
    for (const RecordingReader& r : client_readers) {
      if (r.got.size() < upload.size()) {
        return false;
      }
    }
    return true;
  }));
  for (const RecordingReader& r : client_readers) {
    EXPECT_EQ(r.got, upload);
  }
  for (RingLoop::Slot slot : slots) {
    ring_.remove(slot);
  }
}

TEST_P(RingLoopTest, SendsGoOutWithTheNextWaitAndEachSenderHearsItsOwnResultThen) {
  Counter ring_on, submits, writes;
  sends_.countInto(&ring_on, &submits, &writes);
  std::string why;
  ASSERT_TRUE(sends_.sendWith(&ring_, &why)) << why;
  EXPECT_EQ(ring_on.get(), 1u);
  EXPECT_TRUE(sends_.ringActive());
  constexpr int kPairs = 20;
  std::vector<std::unique_ptr<Pair>> pairs;
  std::vector<RecordingSender> senders(kPairs);
  std::vector<std::string> payloads;
  sends_.open();
  for (int i = 0; i < kPairs; ++i) {
    pairs.push_back(std::make_unique<Pair>());
    payloads.push_back("+reply " + std::to_string(i) + std::string(static_cast<size_t>(i), 'x'));
  }
  pairs[3]->fill();  // this one has no room: EAGAIN
  for (int i = 0; i < kPairs; ++i) {
    sends_.add(pairs[i]->fds[0], payloads[i].data(), payloads[i].size(), &senders[i]);
  }
  sends_.send();
  EXPECT_FALSE(sends_.collecting());
  // Queued, not sent: nothing has reached a peer and no sender has been told.
  for (int i = 0; i < kPairs; ++i) {
    EXPECT_TRUE(senders[i].results.empty());
    EXPECT_TRUE(senders[i].in_send_batch);
    if (i != 3) {
      EXPECT_EQ(pairs[i]->drain(), "");
    }
  }
  ASSERT_TRUE(turnUntil([&] {
    return std::all_of(senders.begin(), senders.end(),
                       [](const RecordingSender& s) { return !s.results.empty(); });
  }));
  for (int i = 0; i < kPairs; ++i) {
    ASSERT_EQ(senders[i].results.size(), 1u) << i;
    EXPECT_FALSE(senders[i].in_send_batch);
    if (i == 3) {
      EXPECT_EQ(senders[i].results[0], -EAGAIN);
      continue;
    }
    EXPECT_EQ(senders[i].results[0], static_cast<ssize_t>(payloads[i].size())) << i;
    EXPECT_EQ(pairs[i]->drain(), payloads[i]) << i;
  }
  EXPECT_EQ(writes.get(), static_cast<uint64_t>(kPairs));
  EXPECT_EQ(submits.get(), 1u);  // all of them went with one wait
}

TEST_P(RingLoopTest, ABatchTooLargeForTheLoopsRingGoesThroughTheBatchsOwnRingAtOnce) {
  std::string why;
  if (!sends_.startRing(8, &why)) {
    GTEST_SKIP() << "io_uring not usable here: " << why;
  }
  ASSERT_TRUE(sends_.sendWith(&ring_, &why)) << why;
  sends_.limitLoopSends(4);
  constexpr int kPairs = 6;
  std::vector<std::unique_ptr<Pair>> pairs;
  std::vector<RecordingSender> senders(kPairs);
  const std::string reply = "+OK\r\n";
  sends_.open();
  for (int i = 0; i < kPairs; ++i) {
    pairs.push_back(std::make_unique<Pair>());
    sends_.add(pairs[i]->fds[0], reply.data(), reply.size(), &senders[i]);
  }
  sends_.send();
  // Sent and told before send() returned, as without a loop; nothing is left on the loop's ring.
  for (int i = 0; i < kPairs; ++i) {
    EXPECT_EQ(senders[i].results, std::vector<ssize_t>{static_cast<ssize_t>(reply.size())}) << i;
    EXPECT_EQ(pairs[i]->drain(), reply) << i;
  }
  EXPECT_EQ(ring_.sendsOut(), 0u);
  // A batch that fits still goes with the loop's wait.
  RecordingSender small;
  sends_.open();
  sends_.add(pairs[0]->fds[0], reply.data(), reply.size(), &small);
  sends_.send();
  EXPECT_TRUE(small.results.empty());
  EXPECT_EQ(ring_.sendsOut(), 1u);
  ASSERT_TRUE(turnUntil([&] { return !small.results.empty(); }));
  EXPECT_EQ(pairs[0]->drain(), reply);
}

TEST_P(RingLoopTest, AQueuedSendGoesOutWhenSubmittedAndItsSenderIsToldAtTheNextTurn) {
  std::string why;
  ASSERT_TRUE(sends_.sendWith(&ring_, &why)) << why;
  Pair pair;
  RecordingSender sender;
  const std::string command = "*1\r\n$4\r\nPING\r\n";
  sends_.queue(pair.fds[0], command.data(), command.size(), &sender);
  EXPECT_EQ(pair.drain(), "");  // queued: not in the kernel yet
  sends_.submitQueued();
  EXPECT_EQ(pair.drain(), command);  // one submission sent it, before any wait
  EXPECT_TRUE(sender.results.empty());
  ASSERT_TRUE(turnUntil([&] { return !sender.results.empty(); }));
  EXPECT_EQ(sender.results, std::vector<ssize_t>{static_cast<ssize_t>(command.size())});
  EXPECT_FALSE(sender.in_send_batch);
}

TEST_P(RingLoopTest, ASendForgottenBeforeItsWaitNeverReachesTheNextOwnerOfItsSocketNumber) {
  std::string why;
  ASSERT_TRUE(sends_.sendWith(&ring_, &why)) << why;
  auto closing = std::make_unique<Pair>();
  const int number = closing->fds[0];
  RecordingSender gone;
  const std::string bytes = "+a reply for a client that has gone\r\n";
  sends_.open();
  sends_.add(number, bytes.data(), bytes.size(), &gone);
  sends_.send();
  sends_.forget(&gone);  // the session closes: its socket is closed right after
  ::close(closing->fds[0]);
  closing->fds[0] = -1;
  Pair next;  // the next socket opened takes the number
  ASSERT_EQ(::dup2(next.fds[0], number), number);
  turnFor(std::chrono::milliseconds(30));
  EXPECT_EQ(next.drain(), "");  // nothing arrived through the socket that took the number
  if (next.fds[0] != number) {
    ::close(number);
  }
  EXPECT_TRUE(gone.results.empty());
  EXPECT_FALSE(gone.in_send_batch);
}

INSTANTIATE_TEST_SUITE_P(BufferModes, RingLoopTest, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& mode) {
                           return std::string(mode.param ? "Incremental" : "WholeBuffers");
                         });

}  // namespace
}  // namespace sp::net
