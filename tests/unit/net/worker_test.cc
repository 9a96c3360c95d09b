// The worker as a thread and a loop, over fake parts (net/worker_parts.h): it starts both sides,
// hands each accepted connection to the client side, pings and reconciles through the shard side,
// waits for the client side to drain, and closes the clients before the shard connections. Its
// sweeps run on fake timers (fakes/fake_timers.h) where the test needs their exact times.
#include "net/worker.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "config/config.h"
#include "fakes/fake_control_plane.h"
#include "fakes/fake_timers.h"
#include "fakes/worker_harness.h"
#include "net/listener.h"
#include "net/proxy_context.h"
#include "net/worker_parts.h"
#include "route/topology.h"

namespace sp::net {
namespace {

// What the fake parts were asked, in order, from the worker's thread.
struct CallLog {
  void add(const std::string& call) {
    std::lock_guard lock(mu);
    calls.push_back(call);
  }
  size_t count(const std::string& call) {
    std::lock_guard lock(mu);
    return static_cast<size_t>(std::count(calls.begin(), calls.end(), call));
  }
  // Position of the first `call`, or -1.
  int indexOf(const std::string& call) {
    std::lock_guard lock(mu);
    const auto it = std::find(calls.begin(), calls.end(), call);
    return it == calls.end() ? -1 : static_cast<int>(it - calls.begin());
  }
  bool waitFor(const std::string& call, size_t times = 1) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (count(call) < times) {
      if (std::chrono::steady_clock::now() > deadline) {
        return false;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    return true;
  }

  std::mutex mu;
  std::vector<std::string> calls;
};

class FakeShardSide final : public ShardSide {
 public:
  explicit FakeShardSide(CallLog& log) : log_(log) {}
  void start() override { log_.add("shards.start"); }
  Reconciled applyTopology(const route::Topology& before, const route::Topology& after,
                           bool same_connections) override {
    log_.add("shards.apply " + std::to_string(before.shardCount()) + "->" +
             std::to_string(after.shardCount()) + (same_connections ? " same" : " changed"));
    return {1, 1};
  }
  void ping() override { log_.add("shards.ping"); }
  size_t trimBuffers() override { return 0; }
  void shutdown() override { log_.add("shards.shutdown"); }

 private:
  CallLog& log_;
};

class FakeClientSide final : public ClientSide {
 public:
  FakeClientSide(CallLog& log, std::atomic<bool>& idle) : log_(log), idle_(idle) {}
  void start() override { log_.add("clients.start"); }
  void accept(int fd, bool unix_socket, bool tls) override {
    ::close(fd);
    log_.add(std::string("clients.accept") + (unix_socket ? " unix" : " tcp") +
             (tls ? " tls" : " plain"));
  }
  void closeIdle(uint64_t /*now_ms*/, uint64_t timeout_ms) override {
    log_.add("clients.closeIdle " + std::to_string(timeout_ms));
  }
  bool idle() const override { return idle_.load(); }
  void closeAll() override { log_.add("clients.closeAll"); }

 private:
  CallLog& log_;
  std::atomic<bool>& idle_;
};

class WorkerTest : public ::testing::Test {
 protected:
  // `timers`: the worker's clock and timers (fake ones the test moves), else the loop's.
  void start(std::vector<ListenSocket> listen, const std::function<void(config::Config&)>& tune,
             std::unique_ptr<Timers> timers = nullptr) {
    const route::TopologyPtr topology =
        route::Topology::evenSplit({{"s0", "127.0.0.1", 1}, {"s1", "127.0.0.1", 2}});
    context_.publish(fakes::configFor(*topology, tune), topology);
    context_.control = &control_;
    worker_ = std::make_unique<Worker>(0, context_, std::move(listen), [this](Worker&) {
      WorkerParts parts;
      parts.shards = std::make_unique<FakeShardSide>(log_);
      parts.clients = std::make_unique<FakeClientSide>(log_, idle_);
      return parts;
    });
    context_.workers.push_back(worker_.get());
    if (timers != nullptr) {
      worker_->useTimers(std::move(timers));
    }
    worker_->startThread();
  }
  // On fake timers: starts the worker on them and keeps a pointer for advance().
  void startOnFakeTimers(const std::function<void(config::Config&)>& tune) {
    auto timers = std::make_unique<fakes::FakeTimers>();
    fake_ = timers.get();
    start({}, tune, std::move(timers));
  }
  // Moves the fake clock on the worker's thread; the timers due meanwhile have fired on return.
  void advance(uint64_t ms) {
    fakes::onWorker<bool>(*worker_, [&](Worker&) {
      fake_->advance(ms);
      return true;
    });
  }
  size_t armed(std::string_view prefix) {
    return fakes::onWorker<size_t>(*worker_, [&](Worker&) { return fake_->armedCount(prefix); });
  }
  void TearDown() override {
    if (worker_) {
      idle_ = true;
      worker_->requestStop();
      worker_->join();
    }
  }

  CallLog log_;
  std::atomic<bool> idle_{true};
  fakes::FakeControlPlane control_;
  ProxyContext context_;
  std::unique_ptr<Worker> worker_;
  fakes::FakeTimers* fake_ = nullptr;  // startOnFakeTimers'
};

TEST_F(WorkerTest, StartsBothSidesAndClosesTheClientsBeforeTheShards) {
  start({}, {});
  EXPECT_TRUE(log_.waitFor("clients.start"));
  EXPECT_TRUE(log_.waitFor("shards.start"));
  worker_->requestStop();
  worker_->join();
  const int clients = log_.indexOf("clients.closeAll");
  const int shards = log_.indexOf("shards.shutdown");
  ASSERT_GE(clients, 0);
  ASSERT_GE(shards, 0);
  EXPECT_LT(clients, shards);
  EXPECT_EQ(log_.count("shards.shutdown"), 1u);
  worker_.reset();
}

TEST_F(WorkerTest, AnAcceptedConnectionGoesToTheClientSide) {
  uint16_t port = 0;
  int fd = -1;
  const Status bound = bindListenSocket("127.0.0.1", 0, &port, &fd);
  ASSERT_TRUE(bound.ok()) << bound.message();
  start({ListenSocket{fd}}, {});
  worker_->startAccepting();
  const int client = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::connect(client, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  EXPECT_TRUE(log_.waitFor("clients.accept tcp plain"));
  ::close(client);
}

TEST_F(WorkerTest, TimersPingTheShardsAndSweepIdleClients) {
  start({}, [](config::Config& c) {
    c.backend_ping_interval_ms = 20;
    c.limits.timeout = 1;  // seconds: swept every 250 ms
  });
  EXPECT_TRUE(log_.waitFor("shards.ping", 3));
  EXPECT_TRUE(log_.waitFor("clients.closeIdle 1000"));
}

TEST_F(WorkerTest, PingsTheShardsOncePerIntervalOfItsClock) {
  startOnFakeTimers([](config::Config& c) { c.backend_ping_interval_ms = 1000; });
  advance(999);
  EXPECT_EQ(log_.count("shards.ping"), 0u);
  advance(1);
  EXPECT_EQ(log_.count("shards.ping"), 1u);
  advance(999);
  EXPECT_EQ(log_.count("shards.ping"), 1u);
  advance(1);
  EXPECT_EQ(log_.count("shards.ping"), 2u);
  advance(10'000);
  EXPECT_EQ(log_.count("shards.ping"), 12u);
}

TEST_F(WorkerTest, ANewPingIntervalTakesEffectOnReload) {
  startOnFakeTimers([](config::Config& c) { c.backend_ping_interval_ms = 1000; });
  const route::TopologyPtr same = context_.topology();
  auto config = fakes::configFor(*same, [](config::Config& c) { c.backend_ping_interval_ms = 50; });
  worker_->post([config, same](Worker& w) { w.applyConfig(config, same); });
  advance(50);
  EXPECT_EQ(log_.count("shards.ping"), 1u);
  advance(950);
  EXPECT_EQ(log_.count("shards.ping"), 20u);
}

TEST_F(WorkerTest, SweepsIdleClientsFourTimesPerTimeoutAtMostOncePerSecond) {
  startOnFakeTimers([](config::Config& c) { c.limits.timeout = 2; });  // seconds
  advance(499);
  EXPECT_EQ(log_.count("clients.closeIdle 2000"), 0u);
  advance(1);
  EXPECT_EQ(log_.count("clients.closeIdle 2000"), 1u);
  advance(1500);
  EXPECT_EQ(log_.count("clients.closeIdle 2000"), 4u);
  // A long timeout is still swept every second, and a timeout of 0 stops the sweep.
  const route::TopologyPtr same = context_.topology();
  auto hour = fakes::configFor(*same, [](config::Config& c) { c.limits.timeout = 3600; });
  worker_->post([hour, same](Worker& w) { w.applyConfig(hour, same); });
  advance(3000);
  EXPECT_EQ(log_.count("clients.closeIdle 3600000"), 3u);
  auto none = fakes::configFor(*same, [](config::Config& c) { c.limits.timeout = 0; });
  worker_->post([none, same](Worker& w) { w.applyConfig(none, same); });
  EXPECT_EQ(armed("worker.idle"), 0u);
  advance(10'000);
  EXPECT_EQ(log_.count("clients.closeIdle 3600000"), 3u);
}

TEST_F(WorkerTest, WithoutRequestsInFlightAStopClosesAtOnce) {
  startOnFakeTimers({});
  worker_->requestStop();
  worker_->join();  // the fake clock never moved
  EXPECT_EQ(log_.count("clients.closeAll"), 1u);
  EXPECT_EQ(log_.count("shards.shutdown"), 1u);
  worker_.reset();
}

TEST_F(WorkerTest, ADrainThatNeverEndsIsCutAtTheShutdownTimeoutOfItsClock) {
  startOnFakeTimers([](config::Config& c) { c.shutdown_timeout_ms = 5000; });
  idle_ = false;  // a request in flight that never completes
  worker_->requestStop();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (armed("worker.drain") == 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  ASSERT_EQ(armed("worker.drain"), 1u);
  advance(4999);
  EXPECT_EQ(log_.count("clients.closeAll"), 0u);
  advance(1);  // closes everything: the worker posts nothing more after this
  worker_->join();
  EXPECT_EQ(log_.count("clients.closeAll"), 1u);
  EXPECT_EQ(log_.count("shards.shutdown"), 1u);
  worker_.reset();
}

TEST_F(WorkerTest, ANewTopologyIsAppliedToTheShardSideOnce) {
  start({}, {});
  const route::TopologyPtr three = route::Topology::evenSplit(
      {{"s0", "127.0.0.1", 1}, {"s1", "127.0.0.1", 2}, {"s2", "127.0.0.1", 3}});
  auto config = fakes::configFor(*three, {});
  worker_->post([config, three](Worker& w) {
    w.applyConfig(config, three);
    w.applyConfig(config, three);  // the same snapshot again: nothing to reconcile
  });
  EXPECT_TRUE(log_.waitFor("shards.apply 2->3 same"));
  EXPECT_TRUE(fakes::onWorker<bool>(*worker_, [](Worker&) { return true; }));  // both ran
  EXPECT_EQ(log_.count("shards.apply 2->3 same"), 1u);
}

TEST_F(WorkerTest, ShutdownWaitsForTheClientSideToDrain) {
  start({}, [](config::Config& c) { c.shutdown_timeout_ms = 10000; });
  idle_ = false;  // a request in flight
  worker_->requestStop();
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_EQ(log_.count("clients.closeAll"), 0u);
  idle_ = true;
  worker_->join();
  EXPECT_EQ(log_.count("clients.closeAll"), 1u);
  EXPECT_EQ(log_.count("shards.shutdown"), 1u);
  worker_.reset();
}

}  // namespace
}  // namespace sp::net
