// BackendConn driven by a real worker against in-process fake shards, its replies caught by a fake
// reply handler (the seam backend_op.h declares) instead of client sessions: every reply reaches
// its own request and fragment, in send order, across a 1,000-deep pipeline; a shard that refuses
// connections answers every request with the proxy's error, in order; requests queued on two
// shards come back from the shard that owns their keys; and a shard that takes the bytes but never
// answers fails the requests sent to it once backend.timeout_ms passes with no byte moving; and a
// shard that keeps refusing is ejected after backend.failure_limit failures, then re-admitted by
// the probe PING that the first connection after it listens again gets answered.
#include "backend/backend_conn.h"
#include "backend/backend_pool.h"

#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "backend/backend_op.h"
#include "backend/worker_backends.h"
#include "fakes/fake_shards.h"
#include "fakes/worker_harness.h"
#include "net/listener.h"
#include "net/proxy_context.h"
#include "net/worker.h"
#include "resp/command_table.h"
#include "route/key_slot.h"

namespace sp::backend {
namespace {

using fakes::boundLoopbackSocket;
using fakes::bulk;
using fakes::DeliveredReply;
using fakes::FakeReplyHandler;
using fakes::getCommand;
using fakes::keysOn;
using fakes::onWorker;
using fakes::WorkerHarness;

void noViolation(const std::string& what) { ADD_FAILURE() << "fake shard: " << what; }

TEST(BackendConnTest, PipelinedRepliesReachTheirRequestsInOrder) {
  FakeReplyHandler handler;
  fakes::FakeShards shards(1, noViolation);
  WorkerHarness harness(shards.topology());
  const resp::CommandInfo* get = resp::CommandTable::instance().find("get");
  ASSERT_NE(get, nullptr);
  constexpr size_t kRequests = 1000;
  const std::vector<std::string> keys = keysOn(*shards.topology(), 0, kRequests);
  std::vector<InFlightRequest> requests(kRequests);
  harness.worker().post([&](net::Worker& w) {
    BackendConn& conn = poolOf(w).at(0, 0);
    for (size_t i = 0; i < kRequests; ++i) {
      requests[i].cmd = get;
      conn.send(getCommand(keys[i]), &requests[i], static_cast<uint32_t>(i));
    }
  });
  ASSERT_TRUE(handler.catcher.waitFor(kRequests));
  std::lock_guard lock(handler.catcher.mu);
  ASSERT_EQ(handler.catcher.delivered.size(), kRequests);
  for (size_t i = 0; i < kRequests; ++i) {
    const DeliveredReply& d = handler.catcher.delivered[i];
    ASSERT_EQ(d.request, &requests[i]) << "reply " << i << " reached another request";
    EXPECT_EQ(d.fragment, i);
    EXPECT_EQ(d.reply, bulk("s0|GET " + keys[i]));
  }
}

TEST(BackendConnTest, EachShardAnswersItsOwnRequests) {
  FakeReplyHandler handler;
  fakes::FakeShards shards(2, noViolation);
  WorkerHarness harness(shards.topology());
  const std::vector<std::string> on0 = keysOn(*shards.topology(), 0, 50);
  const std::vector<std::string> on1 = keysOn(*shards.topology(), 1, 50);
  std::vector<InFlightRequest> requests(100);
  harness.worker().post([&](net::Worker& w) {
    for (size_t i = 0; i < 50; ++i) {
      poolOf(w).at(0, 0).send(getCommand(on0[i]), &requests[2 * i], 0);
      poolOf(w).at(1, 0).send(getCommand(on1[i]), &requests[2 * i + 1], 0);
    }
  });
  ASSERT_TRUE(handler.catcher.waitFor(100));
  std::lock_guard lock(handler.catcher.mu);
  size_t seen0 = 0;
  size_t seen1 = 0;
  for (const DeliveredReply& d : handler.catcher.delivered) {
    const size_t index = static_cast<size_t>(d.request - requests.data());
    ASSERT_LT(index, requests.size());
    // Each shard's replies keep its own send order; the two shards interleave freely.
    if (index % 2 == 0) {
      EXPECT_EQ(index, 2 * seen0);
      EXPECT_EQ(d.reply, bulk("s0|GET " + on0[seen0++]));
    } else {
      EXPECT_EQ(index, 2 * seen1 + 1);
      EXPECT_EQ(d.reply, bulk("s1|GET " + on1[seen1++]));
    }
  }
  EXPECT_EQ(seen0, 50u);
  EXPECT_EQ(seen1, 50u);
}

TEST(BackendConnTest, AShardThatRefusesConnectionsFailsEveryRequestInOrder) {
  FakeReplyHandler handler;
  // A loopback port that was free a moment ago: nothing listens there.
  uint16_t port = 0;
  const int fd = boundLoopbackSocket(&port);
  ASSERT_GE(fd, 0);
  ::close(fd);
  WorkerHarness harness(route::Topology::evenSplit({{"s0", "127.0.0.1", port}}));
  std::vector<InFlightRequest> requests(20);
  harness.worker().post([&](net::Worker& w) {
    for (size_t i = 0; i < requests.size(); ++i) {
      poolOf(w).at(0, 0).send(getCommand("k" + std::to_string(i)), &requests[i], 0);
    }
  });
  ASSERT_TRUE(handler.catcher.waitFor(requests.size()));
  std::lock_guard lock(handler.catcher.mu);
  ASSERT_EQ(handler.catcher.delivered.size(), requests.size());
  for (size_t i = 0; i < requests.size(); ++i) {
    const DeliveredReply& d = handler.catcher.delivered[i];
    EXPECT_EQ(d.request, &requests[i]);
    EXPECT_TRUE(
        d.reply.starts_with("-ERR shard s0 (127.0.0.1:" + std::to_string(port) + ") unavailable: "))
        << d.reply;
  }
}

TEST(BackendConnTest, AStalledShardFailsItsRequestsAfterTheTimeout) {
  FakeReplyHandler handler;
  // The kernel completes connections to a listening socket that nobody accepts: the shard is
  // reachable, takes the bytes, and never answers.
  uint16_t port = 0;
  const int fd = boundLoopbackSocket(&port);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::listen(fd, 16), 0);
  constexpr uint32_t kTimeoutMs = 200;
  WorkerHarness harness(route::Topology::evenSplit({{"s0", "127.0.0.1", port}}),
                        [](config::Config& c) { c.backend_timeout_ms = kTimeoutMs; });
  std::vector<InFlightRequest> requests(5);
  const auto sent = std::chrono::steady_clock::now();
  harness.worker().post([&](net::Worker& w) {
    for (size_t i = 0; i < requests.size(); ++i) {
      poolOf(w).at(0, 0).send(getCommand("k" + std::to_string(i)), &requests[i], 0);
    }
  });
  ASSERT_TRUE(handler.catcher.waitFor(requests.size()));
  const auto answered = std::chrono::steady_clock::now();
  EXPECT_GE(answered - sent, std::chrono::milliseconds(kTimeoutMs));
  std::lock_guard lock(handler.catcher.mu);
  ASSERT_EQ(handler.catcher.delivered.size(), requests.size());
  for (size_t i = 0; i < requests.size(); ++i) {
    const DeliveredReply& d = handler.catcher.delivered[i];
    EXPECT_EQ(d.request, &requests[i]);
    EXPECT_EQ(d.reply, "-ERR shard s0 (127.0.0.1:" + std::to_string(port) +
                           ") unavailable: timeout after 200 ms\r\n");
  }
  ::close(fd);
}

// Polls until the first connection to shard 0 is in `state`, for up to 10 s.
bool reaches(net::Worker& worker, net::BackendState state) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (std::chrono::steady_clock::now() < deadline) {
    if (onWorker<net::BackendState>(
            worker, [](net::Worker& w) { return poolOf(w).at(0, 0).state(); }) == state) {
      return true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

// Accepts connections on the listening `fd` and answers every PING with +PONG until stopped.
class PongServer {
 public:
  explicit PongServer(int fd) : fd_(fd), thread_([this] { serve(); }) {}
  ~PongServer() {
    stop_ = true;
    thread_.join();
    for (int c : clients_) {
      ::close(c);
    }
  }
  PongServer(const PongServer&) = delete;
  PongServer& operator=(const PongServer&) = delete;

 private:
  void serve() {
    static constexpr std::string_view kPing = "$4\r\nPING\r\n";
    std::vector<std::string> pending;
    while (!stop_) {
      std::vector<pollfd> fds{{fd_, POLLIN, 0}};
      for (int c : clients_) {
        fds.push_back({c, POLLIN, 0});
      }
      if (::poll(fds.data(), fds.size(), 20) <= 0) {
        continue;
      }
      if ((fds[0].revents & POLLIN) != 0) {
        const int c = ::accept(fd_, nullptr, nullptr);
        if (c >= 0) {
          clients_.push_back(c);
          pending.emplace_back();
        }
      }
      for (size_t i = 1; i < fds.size(); ++i) {
        if ((fds[i].revents & (POLLIN | POLLHUP)) == 0) {
          continue;
        }
        char buf[4096];
        const ssize_t n = ::read(fds[i].fd, buf, sizeof buf);
        if (n <= 0) {
          continue;
        }
        std::string& in = pending[i - 1];
        in.append(buf, static_cast<size_t>(n));
        for (size_t at = in.find(kPing); at != std::string::npos; at = in.find(kPing)) {
          in.erase(0, at + kPing.size());
          EXPECT_EQ(::write(fds[i].fd, "+PONG\r\n", 7), 7);
        }
      }
    }
  }

  int fd_;
  std::atomic<bool> stop_{false};
  std::vector<int> clients_;
  std::thread thread_;
};

TEST(BackendConnTest, ARefusingShardIsEjectedAndReadmittedByItsProbe) {
  // Bound and not listening: every connection attempt is refused until listen() below.
  uint16_t port = 0;
  const int fd = boundLoopbackSocket(&port);
  ASSERT_GE(fd, 0);
  WorkerHarness harness(route::Topology::evenSplit({{"s0", "127.0.0.1", port}}),
                        [](config::Config& c) {
                          c.backend_failure_limit = 2;
                          c.backend_reconnect_min_ms = 10;
                          c.backend_retry_timeout_ms = 50;
                          c.backend_retry_timeout_max_ms = 100;
                        });
  ASSERT_TRUE(reaches(harness.worker(), net::BackendState::kEjected));
  const std::string ejected = onWorker<std::string>(harness.worker(), [](net::Worker& w) {
    EXPECT_FALSE(poolOf(w).at(0, 0).accepting());  // sessions answer with ejectedError()
    return poolOf(w).at(0, 0).ejectedError();
  });
  EXPECT_TRUE(ejected.starts_with("-ERR shard s0 (127.0.0.1:" + std::to_string(port) +
                                  ") unavailable: ejected after 2 failures (last: "))
      << ejected;
  // Probes keep failing while nothing listens; once the shard listens and answers the probe's
  // PING, the connection is up and takes requests again.
  ASSERT_EQ(::listen(fd, 16), 0);
  {
    PongServer server(fd);
    ASSERT_TRUE(reaches(harness.worker(), net::BackendState::kUp));
    EXPECT_TRUE(onWorker<bool>(harness.worker(),
                               [](net::Worker& w) { return poolOf(w).at(0, 0).accepting(); }));
    const uint64_t ejections = onWorker<uint64_t>(
        harness.worker(), [](net::Worker& w) { return w.stats().shards[0].ejections.get(); });
    EXPECT_EQ(ejections, 1u);
    const auto [standing, ejected_now] =
        onWorker<std::pair<Standing, uint64_t>>(harness.worker(), [](net::Worker& w) {
          return std::pair{poolOf(w).at(0, 0).standing(), w.stats().shards[0].ejected.get()};
        });
    EXPECT_EQ(standing, Standing::kServing);
    EXPECT_EQ(ejected_now, 0u);  // the gauge follows the standing back
  }
  ::close(fd);
}

TEST(BackendConnStandingTest, TheMovesTheDiagramDraws) {
  const Standing all[] = {Standing::kServing, Standing::kEjected, Standing::kProbing,
                          Standing::kRetiring, Standing::kShutDown};
  for (Standing from : all) {
    EXPECT_FALSE(canMove(from, from)) << standingName(from);
    EXPECT_FALSE(canMove(Standing::kShutDown, from)) << "shut down is final";
    if (from != Standing::kShutDown) {
      EXPECT_TRUE(canMove(from, Standing::kShutDown)) << standingName(from);
    }
    if (from != Standing::kRetiring && from != Standing::kShutDown) {
      EXPECT_TRUE(canMove(from, Standing::kRetiring)) << standingName(from);
    }
    // Only an answered probe re-admits; only a probe (or a first ejection) ejects.
    EXPECT_EQ(canMove(from, Standing::kServing), from == Standing::kProbing) << standingName(from);
    EXPECT_EQ(canMove(from, Standing::kEjected),
              from == Standing::kServing || from == Standing::kProbing)
        << standingName(from);
    EXPECT_EQ(canMove(from, Standing::kProbing), from == Standing::kEjected) << standingName(from);
  }
  EXPECT_TRUE(failsFast(Standing::kEjected) && failsFast(Standing::kProbing));
  EXPECT_FALSE(failsFast(Standing::kServing) || failsFast(Standing::kRetiring) ||
               failsFast(Standing::kShutDown));
}

}  // namespace
}  // namespace sp::backend
