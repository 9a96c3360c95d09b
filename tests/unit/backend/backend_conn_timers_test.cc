// BackendConn's timing on a clock the test moves (fakes/fake_timers.h), with real sockets: the
// stall timeout fires exactly at backend.timeout_ms and fails the requests only after one more
// poll has confirmed it; reconnect delays double from backend.reconnect_min_ms up to
// reconnect_max_ms; after backend.failure_limit failures the connection is ejected and probes
// again after backend.retry_timeout_ms, doubling up to its maximum, until a probe gets its PONG;
// a connect that never completes fails at backend.connect_timeout_ms. A dedicated connection
// (DedicatedConn) lets a blocking command wait past any timeout, and fails an ordinary one at
// backend.timeout_ms, or a slow command at backend.slow_timeout_ms. Requests queued while the
// connection waits to reconnect go out in order once it is up. No test waits for a timer.
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "backend/backend_conn.h"
#include "backend/backend_op.h"
#include "backend/backend_pool.h"
#include "backend/dedicated_conn.h"
#include "backend/worker_backends.h"
#include "fakes/fake_timers.h"
#include "fakes/scripted_shard.h"
#include "fakes/worker_harness.h"
#include "net/worker.h"
#include "resp/command_table.h"

namespace sp::backend {
namespace {

using fakes::boundLoopbackSocket;
using fakes::FakeReplyHandler;
using fakes::FakeTimers;
using fakes::getCommand;
using fakes::onWorker;
using fakes::WorkerHarness;

// A harness whose shard connections run on fake timers; timers() reaches them on the worker.
struct TimedHarness {
  TimedHarness(uint16_t port, const std::function<void(config::Config&)>& tune) {
    auto timers = std::make_unique<FakeTimers>();
    fake = timers.get();
    harness = std::make_unique<WorkerHarness>(
        fakes::oneShard(port),
        [&](config::Config& c) {
          fakes::noPings(c);
          tune(c);
        },
        WorkerHarness::Listen::kNo, std::move(timers));
  }
  net::Worker& worker() { return harness->worker(); }
  void advance(uint64_t ms) {
    onWorker<bool>(worker(), [&](net::Worker&) {
      fake->advance(ms);
      return true;
    });
  }
  uint64_t nextDueInMs() {
    return onWorker<uint64_t>(worker(), [&](net::Worker&) { return fake->nextDueInMs("shard."); });
  }
  net::BackendState state() {
    return onWorker<net::BackendState>(worker(),
                                       [](net::Worker& w) { return poolOf(w).at(0, 0).state(); });
  }
  // Real time passes for the sockets only: polls (10 s at most) until `done` holds on the worker.
  bool until(const std::function<bool()>& done) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (std::chrono::steady_clock::now() < deadline) {
      if (onWorker<bool>(worker(), [&](net::Worker&) { return done(); })) {
        return true;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return false;
  }

  FakeTimers* fake = nullptr;
  std::unique_ptr<WorkerHarness> harness;
  uint64_t failures_seen = 0;  // nextRetryDelay's
};

size_t deliveredCount(FakeReplyHandler& handler) {
  std::lock_guard lock(handler.catcher.mu);
  return handler.catcher.delivered.size();
}

TEST(BackendConnTimersTest, AStallFailsTheRequestsAtTheTimeoutOnlyAfterOneMorePoll) {
  FakeReplyHandler handler;
  uint16_t port = 0;
  const int fd = boundLoopbackSocket(&port);  // listening, never accepting: takes bytes, silent
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::listen(fd, 16), 0);
  TimedHarness t(port, [](config::Config& c) { c.backend_timeout_ms = 200; });
  ASSERT_TRUE(
      t.until([&] { return poolOf(t.worker()).at(0, 0).state() == net::BackendState::kUp; }));
  std::vector<InFlightRequest> requests(3);
  t.worker().post([&](net::Worker& w) {
    for (size_t i = 0; i < requests.size(); ++i) {
      poolOf(w).at(0, 0).send(getCommand("k" + std::to_string(i)), &requests[i], 0);
    }
  });
  ASSERT_TRUE(t.until([&] { return t.fake->armedCount("shard.") == 1; }));  // the stall check
  EXPECT_EQ(t.nextDueInMs(), 200u);
  t.advance(199);
  EXPECT_EQ(deliveredCount(handler), 0u);
  t.advance(1);  // expired: confirmed after the next poll, since replies may wait unread
  EXPECT_EQ(deliveredCount(handler), 0u);
  EXPECT_EQ(t.nextDueInMs(), 1u);
  t.advance(1);
  ASSERT_TRUE(handler.catcher.waitFor(requests.size()));
  std::lock_guard lock(handler.catcher.mu);
  for (size_t i = 0; i < requests.size(); ++i) {
    EXPECT_EQ(handler.catcher.delivered[i].request, &requests[i]);
    EXPECT_EQ(handler.catcher.delivered[i].reply,
              "-ERR shard s0 (127.0.0.1:" + std::to_string(port) +
                  ") unavailable: timeout after 200 ms\r\n");
  }
  ::close(fd);
}

// Waits until one more connection attempt has failed and returns the delay before the next one.
uint64_t nextRetryDelay(TimedHarness& t) {
  uint64_t delay = 0;
  EXPECT_TRUE(t.until([&] {
    const uint64_t failed = t.worker().stats().shards[0].connect_failures.get();
    if (failed == t.failures_seen) {
      return false;
    }
    t.failures_seen = failed;
    delay = t.fake->nextDueInMs("shard.");
    return true;
  }));
  return delay;
}

TEST(BackendConnTimersTest, ReconnectDelaysDoubleUpToTheirMaximum) {
  uint16_t port = 0;
  const int fd = boundLoopbackSocket(&port);  // bound, not listening: every connect is refused
  ASSERT_GE(fd, 0);
  TimedHarness t(port, [](config::Config& c) {
    c.backend_failure_limit = 100;
    c.backend_reconnect_min_ms = 100;
    c.backend_reconnect_max_ms = 400;
  });
  std::vector<uint64_t> delays;
  for (int i = 0; i < 5; ++i) {
    delays.push_back(nextRetryDelay(t));
    t.advance(delays.back());
  }
  EXPECT_EQ(delays, (std::vector<uint64_t>{100, 200, 400, 400, 400}));
  EXPECT_TRUE(onWorker<bool>(t.worker(), [](net::Worker& w) {
    return poolOf(w).at(0, 0).standing() == Standing::kServing;  // never ejected below the limit
  }));
  ::close(fd);
}

// Accepts one connection on `fd` and answers its first PING with +PONG.
void answerOnePing(int fd) {
  pollfd p{fd, POLLIN, 0};
  ASSERT_EQ(::poll(&p, 1, 10000), 1);
  const int c = ::accept(fd, nullptr, nullptr);
  ASSERT_GE(c, 0);
  std::string in;
  char buf[256];
  while (in.find("PING\r\n") == std::string::npos) {
    pollfd q{c, POLLIN, 0};
    ASSERT_EQ(::poll(&q, 1, 10000), 1);
    const ssize_t n = ::read(c, buf, sizeof buf);
    ASSERT_GT(n, 0);
    in.append(buf, static_cast<size_t>(n));
  }
  ASSERT_EQ(::write(c, "+PONG\r\n", 7), 7);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  ::close(c);
}

TEST(BackendConnTimersTest, EjectedAfterTheFailureLimitThenProbedAtDoublingIntervals) {
  uint16_t port = 0;
  const int fd = boundLoopbackSocket(&port);
  ASSERT_GE(fd, 0);
  TimedHarness t(port, [](config::Config& c) {
    c.backend_failure_limit = 2;
    c.backend_reconnect_min_ms = 10;
    c.backend_retry_timeout_ms = 50;
    c.backend_retry_timeout_max_ms = 120;
  });
  EXPECT_EQ(nextRetryDelay(t), 10u);  // the first failure: an ordinary reconnect
  t.advance(10);
  std::vector<uint64_t> probes;
  for (int i = 0; i < 4; ++i) {
    probes.push_back(nextRetryDelay(t));
    EXPECT_EQ(t.state(), net::BackendState::kEjected);
    t.advance(probes.back());
  }
  EXPECT_EQ(probes, (std::vector<uint64_t>{50, 100, 120, 120}));
  // The shard comes back: the next probe's PING is answered and the connection serves again.
  ASSERT_EQ(::listen(fd, 16), 0);
  EXPECT_EQ(nextRetryDelay(t), 120u);
  std::thread shard([fd] { answerOnePing(fd); });
  t.advance(120);
  EXPECT_TRUE(t.until([&] {
    return poolOf(t.worker()).at(0, 0).state() == net::BackendState::kUp &&
           poolOf(t.worker()).at(0, 0).accepting();
  }));
  shard.join();
  ::close(fd);
}

TEST(BackendConnTimersTest, AConnectThatNeverCompletesFailsAtTheConnectTimeout) {
  FakeReplyHandler handler;
  uint16_t port = 0;
  const int fd = boundLoopbackSocket(&port);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::listen(fd, 0), 0);
  // Fill the accept queue: the kernel then drops the proxy's SYNs and its connect hangs.
  std::vector<int> fillers;
  for (int i = 0; i < 8; ++i) {
    const int c = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::connect(c, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
    fillers.push_back(c);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  TimedHarness t(port, [](config::Config& c) {
    c.backend_connect_timeout_ms = 300;
    c.backend_reconnect_min_ms = 1000;
  });
  InFlightRequest request;
  t.worker().post([&](net::Worker& w) { poolOf(w).at(0, 0).send(getCommand("k"), &request, 0); });
  ASSERT_TRUE(t.until([&] { return t.fake->armedCount("shard.") == 1; }));
  EXPECT_EQ(t.state(), net::BackendState::kConnecting);
  EXPECT_EQ(t.nextDueInMs(), 300u);
  t.advance(299);
  EXPECT_EQ(deliveredCount(handler), 0u);
  t.advance(1);
  ASSERT_TRUE(handler.catcher.waitFor(1));
  {
    std::lock_guard lock(handler.catcher.mu);
    EXPECT_EQ(
        handler.catcher.delivered[0].reply,
        "-ERR shard s0 (127.0.0.1:" + std::to_string(port) + ") unavailable: connect timeout\r\n");
  }
  EXPECT_EQ(t.nextDueInMs(), 1000u);  // and the reconnect is scheduled
  for (int c : fillers) {
    ::close(c);
  }
  ::close(fd);
}

bool received(const fakes::ScriptedShard& shard, const std::string& name) {
  for (const auto& argv : shard.commands()) {
    if (!argv.empty() && argv[0] == name) {
      return true;
    }
  }
  return false;
}

class QuietOwner : public DedicatedOwner {
 public:
  void onDedicatedPush(DedicatedConn& /*conn*/, std::string_view /*push*/) override {}
  void onDedicatedIdle(DedicatedConn& /*conn*/) override {}
  void onDedicatedFailed(DedicatedConn& /*conn*/) override {}
};

TEST(DedicatedConnTimersTest, ABlockingCommandWaitsPastAnyTimeoutAndAnOrdinaryOneDoesNot) {
  FakeReplyHandler handler;
  fakes::ScriptedShard shard([](const fakes::ScriptedShard::Argv&) {
    return fakes::ScriptedShard::Answer{};  // reads everything, answers nothing
  });
  QuietOwner blocked_owner;  // declared before the harness: they outlive the worker
  QuietOwner owner;
  InFlightRequest blpop;
  InFlightRequest get;
  DedicatedConn* blocked = nullptr;  // its owner discards it at the end, as a session would
  TimedHarness t(shard.port(), [](config::Config& c) { c.backend_timeout_ms = 200; });
  // An owned connection stays open until its owner lets go: the worker would not stop.
  auto discardBlocked = [&] {
    onWorker<bool>(t.worker(), [&](net::Worker& w) {
      if (blocked != nullptr) {
        dedicatedOf(w).discard(std::exchange(blocked, nullptr));
      }
      return true;
    });
  };
  struct AtExit {
    std::function<void()> fn;
    ~AtExit() { fn(); }
  } at_exit{discardBlocked};
  t.worker().post([&](net::Worker& w) {
    resp::err::ErrorReply error;
    blocked = dedicatedOf(w).acquire(0, DedicatedConn::Mode::kCommands, &blocked_owner, &error);
    ASSERT_NE(blocked, nullptr) << error.text();
    blocked->send("*3\r\n$5\r\nBLPOP\r\n$1\r\nk\r\n$1\r\n0\r\n", &blpop, 0, 1, true);
  });
  ASSERT_TRUE(
      t.until([&] { return received(shard, "BLPOP") && t.fake->armedCount("shard.") == 0; }));
  t.advance(3'600'000);  // an hour: a blocking command has no reply timeout
  EXPECT_EQ(deliveredCount(handler), 0u);

  t.worker().post([&](net::Worker& w) {
    resp::err::ErrorReply error;
    DedicatedConn* conn = dedicatedOf(w).acquire(0, DedicatedConn::Mode::kCommands, &owner, &error);
    ASSERT_NE(conn, nullptr) << error.text();
    conn->send(getCommand("k"), &get, 0, 1, false);
  });
  ASSERT_TRUE(t.until([&] { return received(shard, "GET") && t.fake->armedCount("shard.") == 1; }));
  EXPECT_EQ(t.nextDueInMs(), 200u);
  t.advance(199);
  EXPECT_EQ(deliveredCount(handler), 0u);
  t.advance(1);
  ASSERT_TRUE(handler.catcher.waitFor(1));
  discardBlocked();
  std::lock_guard lock(handler.catcher.mu);
  EXPECT_EQ(handler.catcher.delivered[0].request, &get);
  EXPECT_EQ(handler.catcher.delivered[0].reply,
            "-ERR shard s0 (127.0.0.1:" + std::to_string(shard.port()) +
                ") unavailable: timeout after 200 ms\r\n");
}

TEST(BackendConnTimersTest, RequestsQueuedWhileReconnectingGoOutInOrderOnceUp) {
  FakeReplyHandler handler;
  uint16_t port = 0;
  const int fd = boundLoopbackSocket(&port);  // refused until it listens
  ASSERT_GE(fd, 0);
  TimedHarness t(port, [](config::Config& c) {
    c.backend_failure_limit = 100;
    c.backend_reconnect_min_ms = 100;
  });
  EXPECT_EQ(nextRetryDelay(t), 100u);
  std::vector<InFlightRequest> requests(3);
  t.worker().post([&](net::Worker& w) {
    for (size_t i = 0; i < requests.size(); ++i) {
      poolOf(w).at(0, 0).send(getCommand("k" + std::to_string(i)), &requests[i], 0);
    }
  });
  ASSERT_EQ(::listen(fd, 16), 0);
  t.advance(100);
  pollfd p{fd, POLLIN, 0};
  ASSERT_EQ(::poll(&p, 1, 10000), 1);
  const int c = ::accept(fd, nullptr, nullptr);
  ASSERT_GE(c, 0);
  const std::string expected = getCommand("k0") + getCommand("k1") + getCommand("k2");
  std::string in;
  char buf[256];
  while (in.size() < expected.size()) {
    pollfd q{c, POLLIN, 0};
    ASSERT_EQ(::poll(&q, 1, 10000), 1);
    const ssize_t n = ::read(c, buf, sizeof buf);
    ASSERT_GT(n, 0);
    in.append(buf, static_cast<size_t>(n));
  }
  EXPECT_EQ(in, expected);
  const std::string replies = "+r0\r\n+r1\r\n+r2\r\n";
  ASSERT_EQ(::write(c, replies.data(), replies.size()), static_cast<ssize_t>(replies.size()));
  ASSERT_TRUE(handler.catcher.waitFor(3));
  {
    std::lock_guard lock(handler.catcher.mu);
    for (size_t i = 0; i < requests.size(); ++i) {
      EXPECT_EQ(handler.catcher.delivered[i].request, &requests[i]);
      EXPECT_EQ(handler.catcher.delivered[i].reply, "+r" + std::to_string(i) + "\r\n");
    }
  }
  ::close(c);
  ::close(fd);
}

TEST(DedicatedConnTimersTest, ASlowCommandGetsTheSlowLimitOnADedicatedConnection) {
  FakeReplyHandler handler;
  fakes::ScriptedShard shard([](const fakes::ScriptedShard::Argv&) {
    return fakes::ScriptedShard::Answer{};  // reads everything, answers nothing
  });
  QuietOwner owner;
  InFlightRequest eval;
  eval.cmd = resp::CommandTable::instance().find("EVAL");
  ASSERT_NE(eval.cmd, nullptr);
  TimedHarness t(shard.port(), [](config::Config& c) {
    c.backend_timeout_ms = 200;
    c.backend_slow_timeout_ms = 5000;
  });
  t.worker().post([&](net::Worker& w) {
    resp::err::ErrorReply error;
    DedicatedConn* conn = dedicatedOf(w).acquire(0, DedicatedConn::Mode::kCommands, &owner, &error);
    ASSERT_NE(conn, nullptr) << error.text();
    conn->send("*3\r\n$4\r\nEVAL\r\n$8\r\nreturn 1\r\n$1\r\n0\r\n", &eval, 0, 1, false);
  });
  ASSERT_TRUE(t.until(
      [&] { return received(shard, "EVAL") && t.fake->armedCount("shard.dedicated") == 1; }));
  EXPECT_EQ(onWorker<uint64_t>(
                t.worker(), [&](net::Worker&) { return t.fake->nextDueInMs("shard.dedicated"); }),
            5000u);
  t.advance(4999);
  EXPECT_EQ(deliveredCount(handler), 0u);
  t.advance(1);  // the connection fails, and frees itself: nothing left to discard
  ASSERT_TRUE(handler.catcher.waitFor(1));
  std::lock_guard lock(handler.catcher.mu);
  EXPECT_EQ(handler.catcher.delivered[0].request, &eval);
  EXPECT_EQ(handler.catcher.delivered[0].reply,
            "-ERR shard s0 (127.0.0.1:" + std::to_string(shard.port()) +
                ") unavailable: timeout after 5000 ms\r\n");
}

}  // namespace
}  // namespace sp::backend
