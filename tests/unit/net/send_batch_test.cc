// SendBatch over real socket pairs, with the ring and with send(2): every write reaches its own
// socket whole and in order, each sender is told its own result (short writes, EAGAIN into a full
// socket, EPIPE without a SIGPIPE, EBADF for one that holds the others back from nothing), a
// forgotten write is not sent, a batch larger than the ring goes out whole, and the counters say
// what went through the ring.
#include "net/send_batch.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <memory>
#include <string>
#include <vector>

#include "unit/net/socket_pair.h"

namespace sp::net {
namespace {

class RecordingSender final : public SendBatch::Sender {
 public:
  void sent(ssize_t result) override { results.push_back(result); }
  std::vector<ssize_t> results;
};

using Pair = SocketPair;

// Runs each test with the ring (where the kernel allows it) and without.
class SendBatchTest : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    batch_.countInto(&ring_on_, &submits_, &writes_);
    if (GetParam()) {
      std::string why;
      if (!batch_.startRing(8, &why)) {
        GTEST_SKIP() << "io_uring not usable here: " << why;
      }
      EXPECT_EQ(ring_on_.get(), 1u);
    } else {
      EXPECT_EQ(ring_on_.get(), 0u);
    }
  }
  bool ring() const { return GetParam(); }

  SendBatch batch_;
  Counter ring_on_, submits_, writes_;
};

TEST_P(SendBatchTest, EveryWriteReachesItsSocketAndEverySenderHearsItsResult) {
  constexpr int kPairs = 20;  // more than the ring's 8 entries: several submissions
  std::vector<std::unique_ptr<Pair>> pairs;
  std::vector<RecordingSender> senders(kPairs);
  std::vector<std::string> payloads;
  batch_.open();
  EXPECT_TRUE(batch_.collecting());
  for (int i = 0; i < kPairs; ++i) {
    pairs.push_back(std::make_unique<Pair>());
    payloads.push_back("+reply " + std::to_string(i) + std::string(static_cast<size_t>(i), 'x'));
  }
  for (int i = 0; i < kPairs; ++i) {
    batch_.add(pairs[i]->fds[0], payloads[i].data(), payloads[i].size(), &senders[i]);
    EXPECT_TRUE(senders[i].in_send_batch);
  }
  EXPECT_TRUE(senders[0].results.empty());  // nothing is sent before send()
  EXPECT_EQ(pairs[0]->drain(), "");
  batch_.send();
  EXPECT_FALSE(batch_.collecting());
  for (int i = 0; i < kPairs; ++i) {
    ASSERT_EQ(senders[i].results.size(), 1u) << i;
    EXPECT_EQ(senders[i].results[0], static_cast<ssize_t>(payloads[i].size())) << i;
    EXPECT_FALSE(senders[i].in_send_batch);
    EXPECT_EQ(pairs[i]->drain(), payloads[i]) << i;
  }
  EXPECT_EQ(writes_.get(), ring() ? static_cast<uint64_t>(kPairs) : 0u);
  EXPECT_EQ(submits_.get(), ring() ? 3u : 0u);  // 8 + 8 + 4
}

TEST_P(SendBatchTest, SeveralWritesToOneSocketKeepTheirOrder) {
  Pair pair;
  std::vector<RecordingSender> senders(5);
  const std::vector<std::string> parts = {"a", "bb", "ccc", "dddd", "eeeee"};
  batch_.open();
  for (size_t i = 0; i < parts.size(); ++i) {
    batch_.add(pair.fds[0], parts[i].data(), parts[i].size(), &senders[i]);
  }
  batch_.send();
  EXPECT_EQ(pair.drain(), "abbcccddddeeeee");
}

TEST_P(SendBatchTest, FullSocketShortWriteAndClosedPeerAreEachReportedToTheirOwnSender) {
  Pair full, roomy, shorter, closed;
  full.fill();
  // shorter: empty, so the big write goes in part.
  closed.closePeer();
  const std::string big(4 << 20, 'v');  // more than a socket pair buffers
  const std::string small = "+OK\r\n";
  RecordingSender s_full, s_roomy, s_short, s_closed;
  batch_.open();
  batch_.add(full.fds[0], small.data(), small.size(), &s_full);
  batch_.add(roomy.fds[0], small.data(), small.size(), &s_roomy);
  batch_.add(shorter.fds[0], big.data(), big.size(), &s_short);
  batch_.add(closed.fds[0], small.data(), small.size(), &s_closed);
  batch_.send();  // no SIGPIPE: the test process is still here
  ASSERT_EQ(s_full.results.size(), 1u);
  EXPECT_EQ(s_full.results[0], -EAGAIN);
  ASSERT_EQ(s_roomy.results.size(), 1u);
  EXPECT_EQ(s_roomy.results[0], static_cast<ssize_t>(small.size()));
  ASSERT_EQ(s_short.results.size(), 1u);
  EXPECT_GT(s_short.results[0], 0);
  EXPECT_LT(s_short.results[0], static_cast<ssize_t>(big.size()));
  ASSERT_EQ(s_closed.results.size(), 1u);
  EXPECT_EQ(s_closed.results[0], -EPIPE);
  EXPECT_EQ(roomy.drain(), small);
}

TEST_P(SendBatchTest, ABadDescriptorFailsAloneAndTheOthersGoOut) {
  Pair before, after;
  int gone[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, gone), 0);
  ::close(gone[0]);
  ::close(gone[1]);
  RecordingSender s_before, s_bad, s_after;
  batch_.open();
  batch_.add(before.fds[0], "one", 3, &s_before);
  batch_.add(gone[0], "two", 3, &s_bad);
  batch_.add(after.fds[0], "three", 5, &s_after);
  batch_.send();
  ASSERT_EQ(s_bad.results.size(), 1u);
  EXPECT_EQ(s_bad.results[0], -EBADF);
  EXPECT_EQ(before.drain(), "one");
  EXPECT_EQ(after.drain(), "three");
  EXPECT_TRUE(batch_.ringActive() == ring());  // a failed send is not a failed submission
}

TEST_P(SendBatchTest, AForgottenWriteIsNeitherSentNorReported) {
  Pair kept, dropped;
  RecordingSender s_kept, s_dropped;
  batch_.open();
  batch_.add(dropped.fds[0], "dropped", 7, &s_dropped);
  batch_.add(kept.fds[0], "kept", 4, &s_kept);
  batch_.forget(&s_dropped);
  EXPECT_FALSE(s_dropped.in_send_batch);
  batch_.forget(&s_dropped);  // twice is harmless
  batch_.send();
  EXPECT_TRUE(s_dropped.results.empty());
  EXPECT_EQ(dropped.drain(), "");
  ASSERT_EQ(s_kept.results.size(), 1u);
  EXPECT_EQ(kept.drain(), "kept");
  EXPECT_EQ(writes_.get(), ring() ? 1u : 0u);
}

TEST_P(SendBatchTest, ABatchOfOneIsAPlainSend) {
  Pair pair;
  RecordingSender sender;
  batch_.open();
  batch_.add(pair.fds[0], "+PONG\r\n", 7, &sender);
  batch_.send();
  EXPECT_EQ(pair.drain(), "+PONG\r\n");
  EXPECT_EQ(submits_.get(), 0u);
  EXPECT_EQ(writes_.get(), 0u);
}

TEST_P(SendBatchTest, AfterStopRingTheBatchUsesSend) {
  batch_.stopRing();
  EXPECT_FALSE(batch_.ringActive());
  EXPECT_EQ(ring_on_.get(), 0u);
  Pair a, b;
  RecordingSender sa, sb;
  batch_.open();
  batch_.add(a.fds[0], "a", 1, &sa);
  batch_.add(b.fds[0], "b", 1, &sb);
  batch_.send();
  EXPECT_EQ(a.drain(), "a");
  EXPECT_EQ(b.drain(), "b");
  EXPECT_EQ(submits_.get(), 0u);
}

INSTANTIATE_TEST_SUITE_P(RingAndSend, SendBatchTest, ::testing::Bool(),
                         [](const auto& param_info) { return param_info.param ? "Ring" : "Send"; });

}  // namespace
}  // namespace sp::net
