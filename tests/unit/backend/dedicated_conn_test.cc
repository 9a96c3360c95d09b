// DedicatedConn's life (backend/dedicated_conn.h): the moves its diagram draws, and a connection
// whose shard hangs up mid-request: the request is answered with the proxy's shard error (marked
// unavailable), then the owner is told once, while the connection is kFailed, with the reason.
// DedicatedPool: an idle connection released is reused by the next acquire of its protocol (up
// to four per shard; busy and subscriber ones are closed); acquires fail with the proxy's words
// after shutdown, for an unknown shard, while the shared connection is ejected, and when the
// host does not resolve. Commands are answered in order, a multi-reply op completes consecutive
// fragments, subscriber pushes go to the owner, a hang-up while idle or a reply with no command
// fails the connection and tells the owner once, a refused AUTH fails what was queued, and a
// discarded connection answers its waiting command without telling the owner.
#include "backend/dedicated_conn.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "backend/backend_conn.h"
#include "backend/backend_op.h"
#include "backend/backend_pool.h"
#include "backend/worker_backends.h"
#include "config/config.h"
#include "fakes/scripted_shard.h"
#include "fakes/worker_harness.h"
#include "net/worker.h"
#include "resp/errors.h"
#include "route/topology.h"

namespace sp::backend {
namespace {

using fakes::bulk;
using fakes::getCommand;
using fakes::onWorker;
using fakes::ScriptedShard;
using Argv = ScriptedShard::Argv;
using Mode = DedicatedConn::Mode;
using Life = DedicatedConn::Life;

TEST(DedicatedConnLifeTest, TheMovesTheDiagramDraws) {
  const Life all[] = {Life::kServing, Life::kFailed, Life::kClosing};
  for (Life from : all) {
    EXPECT_FALSE(DedicatedConn::canMove(from, from));
    EXPECT_FALSE(DedicatedConn::canMove(Life::kClosing, from)) << "closing is final";
    EXPECT_FALSE(DedicatedConn::canMove(from, Life::kServing)) << "a connection never recovers";
  }
  EXPECT_TRUE(DedicatedConn::canMove(Life::kServing, Life::kFailed));
  EXPECT_TRUE(DedicatedConn::canMove(Life::kServing, Life::kClosing));
  EXPECT_TRUE(DedicatedConn::canMove(Life::kFailed, Life::kClosing));
}

// Records what its connection told it, on the worker's thread.
class RecordingOwner : public DedicatedOwner {
 public:
  void onDedicatedPush(DedicatedConn& /*conn*/, std::string_view push) override {
    std::lock_guard lock(mu);
    pushes.emplace_back(push);
  }
  void onDedicatedIdle(DedicatedConn& /*conn*/) override { ++idle; }
  void onDedicatedFailed(DedicatedConn& conn) override {
    failed_while_failed = conn.life() == Life::kFailed && conn.failed();
    {
      std::lock_guard lock(mu);
      failed_conns.push_back(&conn);
    }
    failure = conn.failure();
    ++failures;
  }
  std::atomic<int> idle{0};
  std::atomic<int> failures{0};
  std::atomic<bool> failed_while_failed{false};
  std::string failure;
  std::mutex mu;
  std::vector<std::string> pushes;           // guarded by mu
  std::vector<DedicatedConn*> failed_conns;  // guarded by mu; each frees itself once closed
};

TEST(DedicatedConnTest, AHangUpAnswersTheRequestThenTellsTheOwnerOnce) {
  fakes::FakeReplyHandler handler;
  ScriptedShard shard([](const ScriptedShard::Argv& argv) {
    return argv[0] == "BLPOP" ? ScriptedShard::hangUp() : ScriptedShard::reply("+OK\r\n");
  });
  fakes::WorkerHarness harness(fakes::oneShard(shard.port()), fakes::noPings);
  RecordingOwner owner;
  InFlightRequest request;
  harness.worker().post([&](net::Worker& w) {
    resp::err::ErrorReply error;
    DedicatedConn* conn = dedicatedOf(w).acquire(0, DedicatedConn::Mode::kCommands, &owner, &error);
    ASSERT_NE(conn, nullptr) << error.text();
    conn->send("*3\r\n$5\r\nBLPOP\r\n$1\r\nk\r\n$1\r\n0\r\n", &request, 0, 1, true);
  });
  ASSERT_TRUE(handler.catcher.waitFor(1));
  {
    std::lock_guard lock(handler.catcher.mu);
    EXPECT_EQ(handler.catcher.delivered[0].request, &request);
    EXPECT_EQ(handler.catcher.delivered[0].reply.rfind("-ERR shard s0 (127.0.0.1:", 0), 0u)
        << handler.catcher.delivered[0].reply;
  }
  EXPECT_EQ(request.proxy_error, resp::err::ProxyError::kShardUnavailable);
  for (int i = 0; i < 1000 && owner.failures.load() == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_EQ(owner.failures.load(), 1);
  EXPECT_TRUE(owner.failed_while_failed.load());
  EXPECT_FALSE(owner.failure.empty());
  EXPECT_EQ(owner.idle.load(), 0);
}

// Polls `done` (10 s at most).
bool eventually(const std::function<bool()>& done) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) {
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

// GET k -> "v:k"; TWO -> two replies; BLPOP -> nothing; anything else -> +OK.
ScriptedShard::Answer plainShard(const Argv& argv) {
  if (argv[0] == "GET") {
    return ScriptedShard::reply(bulk("v:" + argv[1]));
  }
  if (argv[0] == "TWO") {
    return ScriptedShard::reply("+one\r\n+two\r\n");
  }
  if (argv[0] == "BLPOP") {
    return ScriptedShard::Answer{};
  }
  if (argv[0] == "HELLO") {
    return ScriptedShard::reply("%1\r\n$5\r\nproto\r\n:3\r\n");
  }
  return ScriptedShard::reply("+OK\r\n");
}

const std::string kBlpop = "*3\r\n$5\r\nBLPOP\r\n$1\r\nk\r\n$1\r\n0\r\n";

// A worker over one scripted shard, and its dedicated connections reached from the test. An
// owned connection keeps the worker from stopping, so whatever the test still holds at the end
// (one that neither failed nor went back to the pool, as after a failed assertion) is discarded
// first. The owners must outlive it.
struct DedicatedHarness {
  explicit DedicatedHarness(const ScriptedShard::Script& script,
                            const std::function<void(config::Config&)>& tune = fakes::noPings,
                            const std::string& password = "")
      : shard(script), harness(topology(shard.port(), password), tune) {}
  ~DedicatedHarness() {
    onWorker<bool>(worker(), [&](net::Worker& w) {
      for (const auto& [conn, owner] : held_) {
        std::lock_guard lock(owner->mu);
        if (std::find(owner->failed_conns.begin(), owner->failed_conns.end(), conn) ==
            owner->failed_conns.end()) {
          dedicatedOf(w).discard(conn);
        }
      }
      return true;
    });
  }
  static route::TopologyPtr topology(uint16_t port, const std::string& password) {
    route::ShardAddress address("s0", "127.0.0.1", port);
    address.password = password;
    return route::Topology::evenSplit({address});
  }
  DedicatedHarness(const DedicatedHarness&) = delete;
  DedicatedHarness& operator=(const DedicatedHarness&) = delete;
  net::Worker& worker() { return harness.worker(); }
  DedicatedConn* acquire(RecordingOwner* owner, resp::err::ErrorReply* error,
                         Mode mode = Mode::kCommands,
                         resp::Protocol protocol = resp::Protocol::kResp2, uint16_t s = 0) {
    DedicatedConn* conn = onWorker<DedicatedConn*>(worker(), [&](net::Worker& w) {
      return dedicatedOf(w).acquire(s, mode, owner, error, protocol);
    });
    if (conn != nullptr) {
      held_.emplace_back(conn, owner);
    }
    return conn;
  }
  void send(DedicatedConn* conn, const std::string& bytes, InFlightRequest* request,
            uint32_t fragment = 0, uint32_t replies = 1, bool blocking = false) {
    onWorker<bool>(worker(), [&](net::Worker&) {
      conn->send(bytes, request, fragment, replies, blocking);
      return true;
    });
  }
  void release(DedicatedConn* conn) {
    letGo(conn);
    onWorker<bool>(worker(), [&](net::Worker& w) {
      dedicatedOf(w).release(conn);
      return true;
    });
  }
  void discard(DedicatedConn* conn) {
    letGo(conn);
    onWorker<bool>(worker(), [&](net::Worker& w) {
      dedicatedOf(w).discard(conn);
      return true;
    });
  }
  size_t idleCount() {
    return onWorker<size_t>(worker(), [](net::Worker& w) { return dedicatedOf(w).idleCount(); });
  }
  size_t openCount() {
    return onWorker<size_t>(worker(), [](net::Worker& w) { return dedicatedOf(w).openCount(); });
  }
  std::string unavailable(const std::string& why) const {
    return "-ERR shard s0 (127.0.0.1:" + std::to_string(shard.port()) + ") unavailable: " + why +
           "\r\n";
  }

  ScriptedShard shard;
  fakes::WorkerHarness harness;

 private:
  void letGo(DedicatedConn* conn) {
    std::erase_if(held_, [conn](const auto& held) { return held.first == conn; });
  }
  std::vector<std::pair<DedicatedConn*, RecordingOwner*>> held_;
};

std::vector<fakes::DeliveredReply> delivered(fakes::FakeReplyHandler& handler) {
  std::lock_guard lock(handler.catcher.mu);
  return handler.catcher.delivered;
}

TEST(DedicatedPoolTest, AReleasedIdleConnectionIsReusedByTheNextAcquire) {
  fakes::FakeReplyHandler handler;
  RecordingOwner owner;
  DedicatedHarness h(plainShard);
  resp::err::ErrorReply error;
  DedicatedConn* conn = h.acquire(&owner, &error);
  ASSERT_NE(conn, nullptr) << error.text();
  InFlightRequest first;
  h.send(conn, getCommand("a"), &first);
  ASSERT_TRUE(handler.catcher.waitFor(1));
  ASSERT_TRUE(eventually([&] { return owner.idle.load() == 1; }));
  h.release(conn);
  EXPECT_EQ(h.idleCount(), 1u);
  DedicatedConn* again = h.acquire(&owner, &error);
  EXPECT_EQ(again, conn);
  EXPECT_EQ(h.idleCount(), 0u);
  EXPECT_EQ(h.openCount(), 1u);
  InFlightRequest second;
  h.send(again, getCommand("b"), &second);
  ASSERT_TRUE(handler.catcher.waitFor(2));
  h.discard(again);
  EXPECT_EQ(delivered(handler)[1].reply, bulk("v:b"));
  EXPECT_EQ(h.shard.commands(), (std::vector<Argv>{{"GET", "a"}, {"GET", "b"}}));
  EXPECT_EQ(h.shard.connectionsAccepted(), 2u);  // the shared connection and this one
}

TEST(DedicatedPoolTest, AConnectionReleasedWhileACommandWaitsIsClosedAndTheCommandAnswered) {
  fakes::FakeReplyHandler handler;
  RecordingOwner owner;
  DedicatedHarness h(plainShard);
  resp::err::ErrorReply error;
  DedicatedConn* conn = h.acquire(&owner, &error);
  ASSERT_NE(conn, nullptr) << error.text();
  InFlightRequest blpop;
  h.send(conn, kBlpop, &blpop, 0, 1, true);
  ASSERT_TRUE(h.shard.waitForCommands(1));
  h.release(conn);
  ASSERT_TRUE(handler.catcher.waitFor(1));
  EXPECT_EQ(delivered(handler)[0].reply, h.unavailable("released"));
  EXPECT_EQ(blpop.proxy_error, resp::err::ProxyError::kShardUnavailable);
  EXPECT_EQ(h.idleCount(), 0u);
  EXPECT_TRUE(eventually([&] { return h.openCount() == 0; }));
  EXPECT_EQ(owner.failures.load(), 0) << "the owner let go: nobody to tell";
}

TEST(DedicatedPoolTest, AtMostFourIdleConnectionsAreKeptPerShard) {
  RecordingOwner owner;
  DedicatedHarness h(plainShard);
  std::vector<DedicatedConn*> conns;
  for (int i = 0; i < 5; ++i) {
    resp::err::ErrorReply error;
    conns.push_back(h.acquire(&owner, &error));
    ASSERT_NE(conns.back(), nullptr) << error.text();
  }
  EXPECT_EQ(h.openCount(), 5u);
  for (DedicatedConn* conn : conns) {
    h.release(conn);
  }
  EXPECT_EQ(h.idleCount(), DedicatedPool::kMaxIdlePerShard);
  EXPECT_TRUE(eventually([&] { return h.openCount() == 4; }));
}

TEST(DedicatedPoolTest, ASubscriberConnectionIsNeverKept) {
  RecordingOwner owner;
  DedicatedHarness h(plainShard);
  resp::err::ErrorReply error;
  DedicatedConn* conn = h.acquire(&owner, &error, Mode::kSubscriber);
  ASSERT_NE(conn, nullptr) << error.text();
  h.release(conn);
  EXPECT_EQ(h.idleCount(), 0u);
  EXPECT_TRUE(eventually([&] { return h.openCount() == 0; }));
}

TEST(DedicatedPoolTest, AnIdleConnectionIsReusedOnlyForItsOwnProtocol) {
  fakes::FakeReplyHandler handler;
  RecordingOwner owner;
  DedicatedHarness h(plainShard);
  resp::err::ErrorReply error;
  DedicatedConn* resp2 = h.acquire(&owner, &error);
  ASSERT_NE(resp2, nullptr) << error.text();
  h.release(resp2);
  DedicatedConn* resp3 = h.acquire(&owner, &error, Mode::kCommands, resp::Protocol::kResp3);
  ASSERT_NE(resp3, nullptr) << error.text();
  EXPECT_NE(resp3, resp2);
  EXPECT_EQ(h.idleCount(), 1u);
  InFlightRequest request;
  h.send(resp3, getCommand("k"), &request);
  ASSERT_TRUE(handler.catcher.waitFor(1));
  h.discard(resp3);
  // HELLO 3 went first and its reply was dropped: the command's reply is the only one delivered.
  EXPECT_EQ(h.shard.commands(), (std::vector<Argv>{{"HELLO", "3"}, {"GET", "k"}}));
  const auto replies = delivered(handler);
  ASSERT_EQ(replies.size(), 1u);
  EXPECT_EQ(replies[0].request, &request);
  EXPECT_EQ(replies[0].reply, bulk("v:k"));
}

TEST(DedicatedPoolTest, AConnectionThatSwitchedProtocolIsFiledUnderTheNewOne) {
  fakes::FakeReplyHandler handler;
  RecordingOwner owner;
  DedicatedHarness h(plainShard);
  resp::err::ErrorReply error;
  DedicatedConn* conn = h.acquire(&owner, &error);
  ASSERT_NE(conn, nullptr) << error.text();
  InFlightRequest request;
  h.send(conn, getCommand("k"), &request);
  onWorker<bool>(h.worker(), [&](net::Worker&) {
    conn->switchProtocol(resp::Protocol::kResp3);
    conn->switchProtocol(resp::Protocol::kResp3);  // no change: nothing sent
    return true;
  });
  ASSERT_TRUE(eventually(
      [&] { return onWorker<bool>(h.worker(), [&](net::Worker&) { return conn->idle(); }); }));
  h.release(conn);
  DedicatedConn* resp3 = h.acquire(&owner, &error, Mode::kCommands, resp::Protocol::kResp3);
  EXPECT_EQ(resp3, conn);
  h.discard(resp3);
  EXPECT_EQ(h.shard.commands(), (std::vector<Argv>{{"GET", "k"}, {"HELLO", "3"}}));
  const auto replies = delivered(handler);
  ASSERT_EQ(replies.size(), 1u);  // HELLO's reply is dropped
  EXPECT_EQ(replies[0].reply, bulk("v:k"));
}

TEST(DedicatedPoolTest, AcquiresFailForAnUnknownShardAndAfterShutdown) {
  RecordingOwner owner;
  DedicatedHarness h(plainShard);
  resp::err::ErrorReply error;
  EXPECT_EQ(h.acquire(&owner, &error, Mode::kCommands, resp::Protocol::kResp2, 1), nullptr);
  EXPECT_EQ(error.text(), resp::err::kShuttingDown.text);
  EXPECT_EQ(error.kind(), resp::err::ProxyError::kShuttingDown);
  DedicatedConn* conn = h.acquire(&owner, &error);
  ASSERT_NE(conn, nullptr) << error.text();
  h.release(conn);
  const size_t idle_after_shutdown = onWorker<size_t>(h.worker(), [](net::Worker& w) {
    dedicatedOf(w).shutdown();
    return dedicatedOf(w).idleCount();
  });
  EXPECT_EQ(idle_after_shutdown, 0u);
  error = {};
  EXPECT_EQ(h.acquire(&owner, &error), nullptr);
  EXPECT_EQ(error.text(), resp::err::kShuttingDown.text);
  EXPECT_EQ(error.kind(), resp::err::ProxyError::kShuttingDown);
  EXPECT_TRUE(eventually([&] { return h.openCount() == 0; }));
}

TEST(DedicatedPoolTest, AnAcquireWhileTheSharedConnectionIsEjectedFailsWithItsError) {
  uint16_t port = 0;
  const int fd = fakes::boundLoopbackSocket(&port);  // bound, not listening: refused
  ASSERT_GE(fd, 0);
  {
    fakes::WorkerHarness harness(fakes::oneShard(port), [](config::Config& c) {
      fakes::noPings(c);
      c.backend_failure_limit = 1;
      c.backend_retry_timeout_ms = 600000;
      c.backend_retry_timeout_max_ms = 600000;
    });
    ASSERT_TRUE(eventually([&] {
      return onWorker<bool>(harness.worker(),
                            [](net::Worker& w) { return !poolOf(w).at(0, 0).accepting(); });
    }));
    RecordingOwner owner;
    resp::err::ErrorReply error;
    DedicatedConn* conn = onWorker<DedicatedConn*>(harness.worker(), [&](net::Worker& w) {
      return dedicatedOf(w).acquire(0, Mode::kCommands, &owner, &error);
    });
    EXPECT_EQ(conn, nullptr);
    EXPECT_EQ(error.text(),
              "-ERR shard s0 (127.0.0.1:" + std::to_string(port) +
                  ") unavailable: ejected after 1 failures (last: connection refused)\r\n");
    EXPECT_EQ(error.kind(), resp::err::ProxyError::kShardUnavailable);
  }
  ::close(fd);
}

TEST(DedicatedPoolTest, AnAcquireForAHostThatDoesNotResolveFailsAtOnce) {
  const route::TopologyPtr topology =
      route::Topology::evenSplit({route::ShardAddress("s0", "", 6379)});
  fakes::WorkerHarness harness(topology, [](config::Config& c) {
    fakes::noPings(c);
    c.backend_failure_limit = 1000;  // the shared connection keeps accepting
  });
  RecordingOwner owner;
  resp::err::ErrorReply error;
  DedicatedConn* conn = onWorker<DedicatedConn*>(harness.worker(), [&](net::Worker& w) {
    return dedicatedOf(w).acquire(0, Mode::kCommands, &owner, &error);
  });
  EXPECT_EQ(conn, nullptr);
  EXPECT_EQ(error.text(), "-ERR shard s0 (:6379) unavailable: cannot resolve host\r\n");
  EXPECT_EQ(error.kind(), resp::err::ProxyError::kShardUnavailable);
  EXPECT_EQ(owner.failures.load(), 0);
  EXPECT_TRUE(eventually([&] {
    return onWorker<size_t>(harness.worker(),
                            [](net::Worker& w) { return dedicatedOf(w).openCount(); }) == 0;
  }));
}

TEST(DedicatedConnTest, RepliesAnswerCommandsInOrderAndAMultiReplyOpTakesConsecutiveFragments) {
  fakes::FakeReplyHandler handler;
  RecordingOwner owner;
  DedicatedHarness h(plainShard);
  resp::err::ErrorReply error;
  DedicatedConn* conn = h.acquire(&owner, &error);
  ASSERT_NE(conn, nullptr) << error.text();
  std::vector<InFlightRequest> requests(3);
  onWorker<bool>(h.worker(), [&](net::Worker&) {
    conn->send(getCommand("a"), &requests[0], 0, 1, false);
    conn->send("*1\r\n$3\r\nTWO\r\n", &requests[1], 3, 2, false);
    conn->send(getCommand("c"), &requests[2], 0, 1, false);
    return true;
  });
  ASSERT_TRUE(handler.catcher.waitFor(4));
  ASSERT_TRUE(eventually([&] { return owner.idle.load() == 1; }));
  h.discard(conn);
  const auto replies = delivered(handler);
  ASSERT_EQ(replies.size(), 4u);
  EXPECT_EQ(replies[0].request, &requests[0]);
  EXPECT_EQ(replies[0].fragment, 0u);
  EXPECT_EQ(replies[0].reply, bulk("v:a"));
  EXPECT_EQ(replies[1].request, &requests[1]);
  EXPECT_EQ(replies[1].fragment, 3u);
  EXPECT_EQ(replies[1].reply, "+one\r\n");
  EXPECT_EQ(replies[2].request, &requests[1]);
  EXPECT_EQ(replies[2].fragment, 4u);
  EXPECT_EQ(replies[2].reply, "+two\r\n");
  EXPECT_EQ(replies[3].request, &requests[2]);
  EXPECT_EQ(replies[3].reply, bulk("v:c"));
  EXPECT_EQ(owner.idle.load(), 1) << "idle once, after the last reply";
}

TEST(DedicatedConnTest, SubscriberPushesGoToTheOwnerAndConfirmationsToTheRequest) {
  const std::string sub_a = "*3\r\n$9\r\nsubscribe\r\n$1\r\na\r\n:1\r\n";
  const std::string sub_b = "*3\r\n$9\r\nsubscribe\r\n$1\r\nb\r\n:2\r\n";
  const std::string message = "*3\r\n$7\r\nmessage\r\n$1\r\na\r\n$2\r\nhi\r\n";
  const std::string pmessage = "*4\r\n$8\r\npmessage\r\n$2\r\nb*\r\n$1\r\nb\r\n$3\r\nyou\r\n";
  fakes::FakeReplyHandler handler;
  RecordingOwner owner;
  DedicatedHarness h([&](const Argv&) {
    return ScriptedShard::Answer{{sub_a + sub_b, message + pmessage}, false};
  });
  resp::err::ErrorReply error;
  DedicatedConn* conn = h.acquire(&owner, &error, Mode::kSubscriber);
  ASSERT_NE(conn, nullptr) << error.text();
  InFlightRequest subscribe;
  h.send(conn, "*3\r\n$9\r\nSUBSCRIBE\r\n$1\r\na\r\n$1\r\nb\r\n", &subscribe, 0, 2, true);
  ASSERT_TRUE(handler.catcher.waitFor(2));
  ASSERT_TRUE(eventually([&] {
    std::lock_guard lock(owner.mu);
    return owner.pushes.size() == 2;
  }));
  h.discard(conn);
  const auto replies = delivered(handler);
  ASSERT_EQ(replies.size(), 2u);
  EXPECT_EQ(replies[0].fragment, 0u);
  EXPECT_EQ(replies[0].reply, sub_a);
  EXPECT_EQ(replies[1].fragment, 1u);
  EXPECT_EQ(replies[1].reply, sub_b);
  std::lock_guard lock(owner.mu);
  EXPECT_EQ(owner.pushes, (std::vector<std::string>{message, pmessage}));
}

TEST(DedicatedConnTest, AHangUpWhileIdleTellsTheOwnerOnceAndAnswersNothing) {
  fakes::FakeReplyHandler handler;
  RecordingOwner owner;
  DedicatedHarness h([](const Argv& argv) {
    return ScriptedShard::Answer{{bulk("v:" + argv[1])}, true};  // answers, then hangs up
  });
  resp::err::ErrorReply error;
  DedicatedConn* conn = h.acquire(&owner, &error);
  ASSERT_NE(conn, nullptr) << error.text();
  InFlightRequest request;
  h.send(conn, getCommand("k"), &request);
  ASSERT_TRUE(handler.catcher.waitFor(1));
  ASSERT_TRUE(eventually([&] { return owner.failures.load() == 1; }));
  EXPECT_EQ(owner.idle.load(), 1);
  EXPECT_EQ(owner.failure, "connection closed by the server");
  EXPECT_TRUE(owner.failed_while_failed.load());
  EXPECT_TRUE(eventually([&] { return h.openCount() == 0; }));
  EXPECT_EQ(owner.failures.load(), 1);
  const auto replies = delivered(handler);
  ASSERT_EQ(replies.size(), 1u);
  EXPECT_EQ(replies[0].reply, bulk("v:k"));
  EXPECT_EQ(request.proxy_error, resp::err::ProxyError::kNone);
}

TEST(DedicatedConnTest, AReplyWithNoCommandFailsTheConnection) {
  fakes::FakeReplyHandler handler;
  RecordingOwner owner;
  DedicatedHarness h([](const Argv&) { return ScriptedShard::reply("+OK\r\n+EXTRA\r\n"); });
  resp::err::ErrorReply error;
  DedicatedConn* conn = h.acquire(&owner, &error);
  ASSERT_NE(conn, nullptr) << error.text();
  InFlightRequest request;
  h.send(conn, getCommand("k"), &request);
  ASSERT_TRUE(eventually([&] { return owner.failures.load() == 1; }));
  EXPECT_EQ(owner.failure, "protocol error: reply without a request");
  EXPECT_EQ(onWorker<uint64_t>(
                h.worker(), [](net::Worker& w) { return w.stats().protocol_errors_backend.get(); }),
            1u);
  const auto replies = delivered(handler);
  ASSERT_EQ(replies.size(), 1u);
  EXPECT_EQ(replies[0].reply, "+OK\r\n");
}

TEST(DedicatedConnTest, ARefusedAuthFailsTheQueuedCommandWithTheShardsWords) {
  fakes::FakeReplyHandler handler;
  RecordingOwner owner;
  DedicatedHarness h(
      [](const Argv& argv) {
        return argv[0] == "AUTH"
                   ? ScriptedShard::reply("-WRONGPASS invalid username-password pair\r\n")
                   : plainShard(argv);
      },
      [](config::Config& c) {
        fakes::noPings(c);
        c.backend_failure_limit = 1000;  // the shared connection is refused too: keep it accepting
      },
      "wrong");
  // Acquired and given its command in one turn of the worker's loop, as a session does: the
  // refusal may arrive on the next turn, and a failed connection takes no commands.
  resp::err::ErrorReply error;
  InFlightRequest request;
  const bool queued = onWorker<bool>(h.worker(), [&](net::Worker& w) {
    DedicatedConn* conn = dedicatedOf(w).acquire(0, Mode::kCommands, &owner, &error);
    if (conn != nullptr) {
      conn->send(getCommand("k"), &request, 0, 1, false);
    }
    return conn != nullptr;
  });
  ASSERT_TRUE(queued) << error.text();
  ASSERT_TRUE(handler.catcher.waitFor(1));
  ASSERT_TRUE(eventually([&] { return owner.failures.load() == 1; }));
  const std::string why = "authentication failed: WRONGPASS invalid username-password pair";
  EXPECT_EQ(delivered(handler)[0].reply, h.unavailable(why));
  EXPECT_EQ(owner.failure, why);
}

TEST(DedicatedConnTest, ADiscardAnswersTheWaitingCommandAndTellsTheOwnerNothing) {
  fakes::FakeReplyHandler handler;
  RecordingOwner owner;
  DedicatedHarness h(plainShard);
  resp::err::ErrorReply error;
  DedicatedConn* conn = h.acquire(&owner, &error);
  ASSERT_NE(conn, nullptr) << error.text();
  InFlightRequest blpop;
  h.send(conn, kBlpop, &blpop, 0, 1, true);
  ASSERT_TRUE(h.shard.waitForCommands(1));
  h.discard(conn);
  ASSERT_TRUE(handler.catcher.waitFor(1));
  EXPECT_EQ(delivered(handler)[0].request, &blpop);
  EXPECT_EQ(delivered(handler)[0].reply, h.unavailable("client gone"));
  EXPECT_TRUE(eventually([&] { return h.openCount() == 0; }));
  EXPECT_EQ(owner.failures.load(), 0);
  EXPECT_EQ(owner.idle.load(), 0);
}

}  // namespace
}  // namespace sp::backend
