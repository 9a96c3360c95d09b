// ShardLink (backend/shard_link.h), the connection core under both shard connection kinds, driven
// by a recording role against a scripted shard: the link comes up and hands over each reply whole
// and in order, however the shard splits it across reads; a write too large for the socket is
// queued and reported once written, delivered whole; commands queued while a write is out (one
// that waits for the worker ring's next wait) follow it in order, and a link closed with such a
// write queued still sends it and hears nothing more; a refused connect is a connect failure, a
// hang-up and a malformed reply are link failures (the latter counted); a host that does not
// resolve fails at once; a role that closes the link while replies wait gets no more of them;
// and a closed link, once its close has completed, connects again and frames its replies afresh.
#include "backend/shard_link.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "fakes/scripted_shard.h"
#include "fakes/worker_harness.h"
#include "net/worker.h"
#include "resp/parse_status.h"
#include "route/topology.h"

namespace sp::backend {
namespace {

using fakes::onWorker;
using fakes::ScriptedShard;
using Argv = ScriptedShard::Argv;

// Records each step the link reports, in order, as text ("up", "reply:+OK\r\n", "written",
// "backed-up", "failed:connect:<why>", "failed:link:<why>", "closed"). Lives on the worker's
// thread; the test reads the record under the mutex. With close_on_reply, the first reply closes
// the link.
class RecordingRole : public ShardLink::Role {
 public:
  void onLinkHandshaking() override { record("handshaking"); }
  void onLinkUp() override {
    record("up");
    link->flush();
  }
  void onLinkRead(size_t nread) override { bytes_read += nread; }
  void onLinkReply(std::string_view reply) override {
    record("reply:" + std::string(reply));
    if (close_on_reply) {
      link->close(false);
    }
  }
  void onLinkWritten() override {
    record("written");
    link->flush();
  }
  void onLinkFlushWanted() override { link->flush(); }
  void onLinkBackedUp() override { record("backed-up"); }
  void onLinkFailed(std::string_view reason, ShardLink::Failure kind) override {
    record(std::string("failed:") + (kind == ShardLink::Failure::kConnect ? "connect:" : "link:") +
           std::string(reason));
    link->close(false);
  }
  void onLinkClosed() override { record("closed"); }

  std::vector<std::string> steps() {
    std::lock_guard lock(mu_);
    return steps_;
  }
  bool waitFor(const std::string& step) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    for (;;) {
      for (const std::string& s : steps()) {
        if (s == step) {
          return true;
        }
      }
      if (std::chrono::steady_clock::now() > deadline) {
        return false;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  }

  std::unique_ptr<ShardLink> link;
  bool close_on_reply = false;
  size_t bytes_read = 0;

 private:
  void record(std::string step) {
    std::lock_guard lock(mu_);
    steps_.push_back(std::move(step));
  }
  std::mutex mu_;
  std::vector<std::string> steps_;
};

// A worker (for its loop, read buffer and counters) and a link on it whose role records.
struct LinkHarness {
  explicit LinkHarness(uint16_t port) : harness(fakes::oneShard(port), fakes::noPings) {}
  ~LinkHarness() {
    // The link closed and its close completed, then destroyed on the worker's thread.
    auto closed = [&] {
      return onWorker<bool>(harness.worker(), [&](net::Worker&) {
        if (role.link == nullptr) {
          return true;
        }
        if (role.link->state() != ShardLink::State::kClosed) {
          role.link->close(false);
        }
        if (role.link->closing()) {
          return false;
        }
        role.link.reset();
        return true;
      });
    };
    while (!closed()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  }
  LinkHarness(const LinkHarness&) = delete;
  LinkHarness& operator=(const LinkHarness&) = delete;

  // Connects to `address` with `bytes` queued to go out once up; what connect() returned.
  bool connect(const route::ShardAddress& address, const std::string& bytes = "") {
    return onWorker<bool>(harness.worker(), [&](net::Worker& w) {
      if (role.link == nullptr) {
        role.link = std::make_unique<ShardLink>(w, role, 16 * 1024, 0);
      }
      role.link->out().append(bytes);
      return role.link->connect(address);
    });
  }
  route::ShardAddress at(uint16_t port) const { return {"s0", "127.0.0.1", port}; }

  fakes::WorkerHarness harness;
  RecordingRole role;
};

std::string command(const std::string& name, const std::string& arg = "") {
  if (arg.empty()) {
    return "*1\r\n$" + std::to_string(name.size()) + "\r\n" + name + "\r\n";
  }
  return "*2\r\n$" + std::to_string(name.size()) + "\r\n" + name + "\r\n$" +
         std::to_string(arg.size()) + "\r\n" + arg + "\r\n";
}

std::vector<std::string> replies(const std::vector<std::string>& steps) {
  std::vector<std::string> out;
  for (const std::string& s : steps) {
    if (s.starts_with("reply:")) {
      out.push_back(s.substr(6));
    }
  }
  return out;
}

TEST(ShardLinkTest, RepliesArriveWholeAndInOrderHoweverTheShardSplitsThem) {
  ScriptedShard shard([](const Argv& argv) {
    if (argv[0] == "SPLIT") {  // one bulk reply in three writes, 20 ms apart
      return ScriptedShard::Answer{{"$11\r\nhel", "lo wo", "rld\r\n"}, false};
    }
    return ScriptedShard::reply("+" + argv[0] + "\r\n");
  });
  LinkHarness h(shard.port());
  ASSERT_TRUE(h.connect(h.at(shard.port()), command("ONE") + command("SPLIT") + command("TWO")));
  ASSERT_TRUE(h.role.waitFor("reply:+TWO\r\n"));
  const auto steps = h.role.steps();
  EXPECT_EQ(steps.front(), "up");
  EXPECT_EQ(replies(steps),
            (std::vector<std::string>{"+ONE\r\n", "$11\r\nhello world\r\n", "+TWO\r\n"}));
  EXPECT_EQ(shard.commands().size(), 3u);
}

TEST(ShardLinkTest, AWriteTheSocketCannotTakeAtOnceIsQueuedAndReportedOnceWritten) {
  ScriptedShard shard([](const Argv& argv) {
    return ScriptedShard::reply(":" + std::to_string(argv.size() > 1 ? argv[1].size() : 0) +
                                "\r\n");
  });
  LinkHarness h(shard.port());
  ASSERT_TRUE(h.connect(h.at(shard.port())));
  ASSERT_TRUE(h.role.waitFor("up"));
  const std::string big(32 << 20, 'x');  // far more than loopback's socket buffers hold
  bool through_ring = false;
  const ShardLink::Flushed flushed =
      onWorker<ShardLink::Flushed>(h.harness.worker(), [&](net::Worker& w) {
        through_ring = w.flushes().sends().sendsWithLoop();
        h.role.link->out().append(command("SET", big));
        return h.role.link->flush();
      });
  if (through_ring) {
    // Handed whole to the worker's ring; its send comes back short, and the rest is queued.
    EXPECT_EQ(flushed, ShardLink::Flushed::kDone);
    ASSERT_TRUE(h.role.waitFor("backed-up"));
  } else {
    EXPECT_EQ(flushed, ShardLink::Flushed::kQueued);
  }
  ASSERT_TRUE(h.role.waitFor("written"));
  ASSERT_TRUE(h.role.waitFor("reply::33554432\r\n"));
  EXPECT_EQ(replies(h.role.steps()), std::vector<std::string>{":33554432\r\n"});
}

// A shard that answers each command with its name as a status reply.
ScriptedShard::Answer echoName(const Argv& argv) {
  return ScriptedShard::reply("+" + argv[0] + "\r\n");
}

TEST(ShardLinkTest, CommandsQueuedWhileAWriteIsOutFollowItInOrder) {
  ScriptedShard shard(echoName);
  LinkHarness h(shard.port());
  ASSERT_TRUE(h.connect(h.at(shard.port())));
  ASSERT_TRUE(h.role.waitFor("up"));
  onWorker<bool>(h.harness.worker(), [&](net::Worker&) {
    for (const char* name : {"ONE", "TWO", "THREE"}) {
      h.role.link->out().append(command(name));
      h.role.link->flush();  // through the ring, the second and third wait for the first
    }
    return true;
  });
  ASSERT_TRUE(h.role.waitFor("reply:+THREE\r\n"));
  EXPECT_EQ(replies(h.role.steps()),
            (std::vector<std::string>{"+ONE\r\n", "+TWO\r\n", "+THREE\r\n"}));
}

TEST(ShardLinkTest, ALinkClosedWithAWriteQueuedStillSendsItAndHearsNothingMore) {
  ScriptedShard shard(echoName);
  LinkHarness h(shard.port());
  ASSERT_TRUE(h.connect(h.at(shard.port())));
  ASSERT_TRUE(h.role.waitFor("up"));
  onWorker<bool>(h.harness.worker(), [&](net::Worker&) {
    h.role.link->out().append(command("LAST"));
    h.role.link->flush();
    h.role.link->close(false);
    return true;
  });
  ASSERT_TRUE(h.role.waitFor("closed"));
  ASSERT_TRUE(shard.waitForCommands(1));  // handed over before the socket closed
  EXPECT_EQ(shard.commands()[0][0], "LAST");
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  EXPECT_EQ(h.role.steps(), (std::vector<std::string>{"up", "closed"}));
}

TEST(ShardLinkTest, ARefusedConnectIsAConnectFailureAndTheLinkConnectsAgainOnceClosed) {
  uint16_t port = 0;
  const int fd = fakes::boundLoopbackSocket(&port);  // bound, not listening: refused
  ASSERT_GE(fd, 0);
  LinkHarness h(port);
  ASSERT_TRUE(h.connect(h.at(port)));
  ASSERT_TRUE(h.role.waitFor("closed"));
  const auto steps = h.role.steps();
  ASSERT_EQ(steps.size(), 2u);
  EXPECT_EQ(steps[0], "failed:connect:connection refused");
  ::close(fd);

  ScriptedShard shard([](const Argv&) { return ScriptedShard::reply("+PONG\r\n"); });
  ASSERT_TRUE(h.connect(h.at(shard.port()), command("PING")));
  ASSERT_TRUE(h.role.waitFor("reply:+PONG\r\n"));
}

TEST(ShardLinkTest, AHostThatDoesNotResolveFailsAtOnce) {
  LinkHarness h(6379);
  EXPECT_FALSE(h.connect(route::ShardAddress("s0", "", 6379)));
  const auto steps = h.role.steps();
  ASSERT_FALSE(steps.empty());
  EXPECT_EQ(steps[0], "failed:link:cannot resolve host");
  EXPECT_TRUE(h.role.waitFor("closed"));
}

TEST(ShardLinkTest, AHangUpIsALinkFailureInTheServersWords) {
  ScriptedShard shard([](const Argv&) { return ScriptedShard::hangUp(); });
  LinkHarness h(shard.port());
  ASSERT_TRUE(h.connect(h.at(shard.port()), command("GET", "k")));
  ASSERT_TRUE(h.role.waitFor("failed:link:connection closed by the server"));
  EXPECT_TRUE(replies(h.role.steps()).empty());
}

TEST(ShardLinkTest, AMalformedReplyIsCountedAndFailsTheLinkAfterTheGoodOnes) {
  ScriptedShard shard([](const Argv&) { return ScriptedShard::reply("+OK\r\n@what\r\n"); });
  LinkHarness h(shard.port());
  ASSERT_TRUE(h.connect(h.at(shard.port()), command("GET", "k")));
  ASSERT_TRUE(h.role.waitFor("closed"));
  const auto steps = h.role.steps();
  EXPECT_EQ(replies(steps), std::vector<std::string>{"+OK\r\n"});
  bool protocol_failure = false;
  for (const std::string& s : steps) {
    protocol_failure = protocol_failure || s.starts_with("failed:link:protocol error: ");
  }
  EXPECT_TRUE(protocol_failure);
  // Counted once, by the parse error (not as a reply that answers no request).
  const auto [total, unexpected] =
      onWorker<std::pair<uint64_t, uint64_t>>(h.harness.worker(), [](net::Worker& w) {
        const auto& errors = w.stats().protocol_errors_backend;
        return std::pair{errors.get(), errors.get(resp::ParseError::kNone)};
      });
  EXPECT_EQ(total, 1u);
  EXPECT_EQ(unexpected, 0u);
}

TEST(ShardLinkTest, ARoleThatClosesTheLinkGetsNoMoreRepliesAndTheNextLinkFramesAfresh) {
  ScriptedShard shard([](const Argv& argv) {
    return argv[0] == "THREE" ? ScriptedShard::reply("+A\r\n+B\r\n+C\r\n")
                              : ScriptedShard::reply("$5\r\nfresh\r\n");
  });
  LinkHarness h(shard.port());
  h.role.close_on_reply = true;
  ASSERT_TRUE(h.connect(h.at(shard.port()), command("THREE")));
  ASSERT_TRUE(h.role.waitFor("closed"));
  EXPECT_EQ(replies(h.role.steps()), std::vector<std::string>{"+A\r\n"});
  // The replies left unread went with the closed link: the next connection's first reply is
  // framed from its own first byte.
  bool closing = true;
  while (closing) {
    closing = onWorker<bool>(h.harness.worker(), [&](net::Worker&) {
      h.role.close_on_reply = false;
      return h.role.link->closing();
    });
  }
  ASSERT_TRUE(h.connect(h.at(shard.port()), command("AGAIN")));
  ASSERT_TRUE(h.role.waitFor("reply:$5\r\nfresh\r\n"));
  EXPECT_EQ(replies(h.role.steps()), (std::vector<std::string>{"+A\r\n", "$5\r\nfresh\r\n"}));
}

}  // namespace
}  // namespace sp::backend
