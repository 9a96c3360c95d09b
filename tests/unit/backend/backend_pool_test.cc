// BackendPool driven by a real worker against in-process fake shards (tests/fakes): a reload keeps
// the connections of unchanged shards, gives a moved shard new ones, and lets the replaced
// connection finish what it was sent before it closes; backend.read_from sends reads to a live
// replica, to the primary at once when the replica is down (prefer-replica), in turn with the
// primary (round-robin), or to the replica even when it is down (replica-only); a cluster redirect
// target is a listed shard's connection or one opened on demand, retired on the next reload; and
// RESP3 clients get connections of their own, built on first use. A client keeps one of a shard's
// backend.connections; read_from primary ignores a live replica; a reconcile keeps or rebuilds
// shards as told and counts what it retired; after a shutdown, connections made on demand are shut
// down at once.
#include "backend/backend_pool.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "backend/backend_conn.h"
#include "backend/backend_op.h"
#include "backend/worker_backends.h"
#include "fakes/fake_shards.h"
#include "fakes/worker_harness.h"
#include "net/worker.h"

namespace sp::backend {
namespace {

using fakes::bulk;
using fakes::configFor;
using fakes::FakeReplyHandler;
using fakes::getCommand;
using fakes::keysOn;
using fakes::onWorker;
using fakes::WorkerHarness;

void noViolation(const std::string& what) { ADD_FAILURE() << "fake shard: " << what; }

// No health PINGs during a test: the fakes' command counts then hold only the test's requests.
void noPings(config::Config& c) { c.backend_ping_interval_ms = 600000; }

size_t connectionCount(BackendPool& pool) {
  size_t n = 0;
  pool.forEach([&n](BackendConn&) { ++n; });
  return n;
}

// Polls `probe` on the worker's thread until it is true, for up to 10 s.
bool eventually(net::Worker& worker, const std::function<bool(net::Worker&)>& probe) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (std::chrono::steady_clock::now() < deadline) {
    if (onWorker<bool>(worker, probe)) {
      return true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

TEST(BackendPoolTest, AReloadKeepsUnchangedShardsAndDrainsTheReplacedConnections) {
  FakeReplyHandler handler;
  fakes::FakeShards before(2, noViolation);
  fakes::FakeShards after(2, noViolation);  // shard 1 moves to after's shard 1 (same slots)
  WorkerHarness harness(before.topology(), noPings);
  const std::string key = keysOn(*before.topology(), 1, 1)[0];
  const route::TopologyPtr moved = route::Topology::evenSplit(
      {{"s0", "127.0.0.1", before.port(0)}, {"s1", "127.0.0.1", after.port(1)}});
  InFlightRequest sent_before;
  InFlightRequest sent_after;
  struct Seen {
    bool kept_shard0 = false;
    bool replaced_shard1 = false;
    size_t retired = 0;
  };
  const Seen seen = onWorker<Seen>(harness.worker(), [&](net::Worker& w) {
    BackendPool& pool = poolOf(w);
    BackendConn* shard0 = &pool.at(0, 0);
    BackendConn* shard1 = &pool.at(1, 0);
    shard1->send(getCommand(key), &sent_before, 0);  // in flight across the reload
    w.applyConfig(configFor(*moved, noPings), moved);
    Seen s{&pool.at(0, 0) == shard0, &pool.at(1, 0) != shard1, pool.retiredCount()};
    EXPECT_FALSE(shard1->accepting());  // retired: no new request
    pool.at(1, 0).send(getCommand(key), &sent_after, 0);
    return s;
  });
  EXPECT_TRUE(seen.kept_shard0);
  EXPECT_TRUE(seen.replaced_shard1);
  EXPECT_EQ(seen.retired, 1u);
  ASSERT_TRUE(handler.catcher.waitFor(2));
  {
    std::lock_guard lock(handler.catcher.mu);
    ASSERT_EQ(handler.catcher.delivered.size(), 2u);
    for (const auto& d : handler.catcher.delivered) {
      EXPECT_TRUE(d.request == &sent_before || d.request == &sent_after);
      EXPECT_EQ(d.reply, bulk("s1|GET " + key));  // the old connection finished its request
    }
  }
  // Each request was served where its connection pointed: the old shard 1 took the one sent
  // before the reload, the new shard 1 the one after (and nothing else reached the new set).
  EXPECT_EQ(before.commandsServed(), 1u);
  EXPECT_EQ(after.commandsServed(), 1u);
  // Drained, the retired connection closes and is freed.
  EXPECT_TRUE(eventually(harness.worker(), [](net::Worker& w) {
    poolOf(w).sweepRetired();
    return poolOf(w).retiredCount() == 0;
  }));
}

route::TopologyPtr withReplica(uint16_t primary_port, uint16_t replica_port) {
  route::ShardAddress shard("s0", "127.0.0.1", primary_port);
  shard.replicas.emplace_back("s0-replica", "127.0.0.1", replica_port);
  return route::Topology::evenSplit({shard});
}

TEST(BackendPoolTest, PreferReplicaReadsGoToALiveReplica) {
  fakes::FakeShards primary(1, noViolation);
  fakes::FakeShards replica(1, noViolation);
  WorkerHarness harness(withReplica(primary.port(0), replica.port(0)), [](config::Config& c) {
    noPings(c);
    c.read_from = config::ReadFrom::kPreferReplica;
  });
  EXPECT_TRUE(eventually(harness.worker(),
                         [](net::Worker& w) { return poolOf(w).forRead(0, 7).replica(); }));
  // While the replica serves, every read goes to it, never to the primary.
  EXPECT_TRUE(onWorker<bool>(harness.worker(), [](net::Worker& w) {
    bool all = true;
    for (int i = 0; i < 10; ++i) {
      all = all && poolOf(w).forRead(0, 7).replica();
    }
    return all && !poolOf(w).primary(0, 7).replica();
  }));
}

// A worker over one shard whose replica refuses connections (bound, not listening), in `mode`.
class DownReplica {
 public:
  explicit DownReplica(config::ReadFrom mode) : fd_(fakes::boundLoopbackSocket(&port_)) {
    harness_ = std::make_unique<WorkerHarness>(withReplica(primary_.port(0), port_),
                                               [mode](config::Config& c) {
                                                 noPings(c);
                                                 c.read_from = mode;
                                               });
  }
  ~DownReplica() {
    harness_.reset();
    if (fd_ >= 0) {
      ::close(fd_);
    }
  }
  DownReplica(const DownReplica&) = delete;
  DownReplica& operator=(const DownReplica&) = delete;
  bool bound() const { return fd_ >= 0; }
  net::Worker& worker() { return harness_->worker(); }

 private:
  fakes::FakeShards primary_{1, noViolation};
  uint16_t port_ = 0;
  int fd_;
  std::unique_ptr<WorkerHarness> harness_;
};

TEST(BackendPoolTest, PreferReplicaFallsBackToThePrimaryAtOnceWhileTheReplicaIsDown) {
  DownReplica shard(config::ReadFrom::kPreferReplica);
  ASSERT_TRUE(shard.bound());
  // From the first request on (the replica still connecting) and after it failed: the primary.
  for (int round = 0; round < 2; ++round) {
    EXPECT_TRUE(onWorker<bool>(
        shard.worker(),
        [](net::Worker& w) { return &poolOf(w).forRead(0, 7) == &poolOf(w).primary(0, 7); }))
        << "round " << round;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
}

TEST(BackendPoolTest, ReplicaOnlyReadsStayOnTheReplicaEvenWhileItIsDown) {
  DownReplica shard(config::ReadFrom::kReplicaOnly);
  ASSERT_TRUE(shard.bound());
  EXPECT_TRUE(onWorker<bool>(shard.worker(),
                             [](net::Worker& w) { return poolOf(w).forRead(0, 7).replica(); }));
}

TEST(BackendPoolTest, RoundRobinReadsAlternateBetweenReplicaAndPrimary) {
  fakes::FakeShards primary(1, noViolation);
  fakes::FakeShards replica(1, noViolation);
  WorkerHarness harness(withReplica(primary.port(0), replica.port(0)), [](config::Config& c) {
    noPings(c);
    c.read_from = config::ReadFrom::kRoundRobin;
  });
  // Once the replica's connection is up, one of any two picks is the replica.
  ASSERT_TRUE(eventually(harness.worker(), [](net::Worker& w) {
    const bool first = poolOf(w).forRead(0, 7).replica();
    return poolOf(w).forRead(0, 7).replica() || first;
  }));
  const size_t replicas = onWorker<size_t>(harness.worker(), [](net::Worker& w) {
    size_t n = 0;
    for (int i = 0; i < 10; ++i) {
      n += poolOf(w).forRead(0, 7).replica() ? 1 : 0;
    }
    return n;
  });
  EXPECT_EQ(replicas, 5u);
}

TEST(BackendPoolTest, ARedirectTargetIsAListedShardOrAConnectionOpenedOnDemand) {
  FakeReplyHandler handler;
  fakes::FakeShards listed(2, noViolation);
  fakes::FakeShards unlisted(1, noViolation);
  WorkerHarness harness(listed.topology(), noPings);
  InFlightRequest request;
  struct Seen {
    bool listed_is_primary = false;
    bool on_demand_is_new = false;
    bool on_demand_is_reused = false;
    bool resp3_is_its_own = false;
    size_t added = 0;
  };
  const Seen seen = onWorker<Seen>(harness.worker(), [&](net::Worker& w) {
    BackendPool& pool = poolOf(w);
    const size_t count = connectionCount(pool);
    Seen s;
    s.listed_is_primary =
        &pool.node("127.0.0.1", listed.port(1), 0, 7, resp::Protocol::kResp2) == &pool.at(1, 0);
    BackendConn& extra = pool.node("127.0.0.1", unlisted.port(0), 1, 7, resp::Protocol::kResp2);
    s.on_demand_is_new = &extra != &pool.at(0, 0) && &extra != &pool.at(1, 0);
    s.on_demand_is_reused =
        &pool.node("127.0.0.1", unlisted.port(0), 1, 9, resp::Protocol::kResp2) == &extra;
    s.resp3_is_its_own =
        &pool.node("127.0.0.1", unlisted.port(0), 1, 7, resp::Protocol::kResp3) != &extra;
    s.added = connectionCount(pool) - count;
    extra.send(getCommand("anything"), &request, 0);
    return s;
  });
  EXPECT_TRUE(seen.listed_is_primary);
  EXPECT_TRUE(seen.on_demand_is_new);
  EXPECT_TRUE(seen.on_demand_is_reused);
  EXPECT_TRUE(seen.resp3_is_its_own);
  EXPECT_EQ(seen.added, 2u);  // the RESP2 and the RESP3 connection to the unlisted node
  ASSERT_TRUE(handler.catcher.waitFor(1));
  {
    std::lock_guard lock(handler.catcher.mu);
    EXPECT_EQ(handler.catcher.delivered[0].request, &request);
    EXPECT_EQ(handler.catcher.delivered[0].reply, bulk("s0|GET anything"));
  }
  // A reload (same shards, a new topology) retires the on-demand connections; the listed
  // shards keep theirs.
  const size_t retired = onWorker<size_t>(harness.worker(), [&](net::Worker& w) {
    const route::TopologyPtr same = route::Topology::evenSplit(
        {{"s0", "127.0.0.1", listed.port(0)}, {"s1", "127.0.0.1", listed.port(1)}});
    const size_t count = connectionCount(poolOf(w));
    w.applyConfig(configFor(*same, noPings), same);
    EXPECT_EQ(connectionCount(poolOf(w)), count - 2);
    return poolOf(w).retiredCount();
  });
  EXPECT_EQ(retired, 2u);
}

TEST(BackendPoolTest, Resp3ClientsGetConnectionsOfTheirOwnBuiltOnFirstUse) {
  fakes::FakeShards shards(2, noViolation);
  WorkerHarness harness(shards.topology(), noPings);
  struct Seen {
    size_t before = 0;
    size_t after = 0;
    bool separate = false;
    bool stable = false;
  };
  const Seen seen = onWorker<Seen>(harness.worker(), [](net::Worker& w) {
    BackendPool& pool = poolOf(w);
    Seen s;
    s.before = connectionCount(pool);
    BackendConn& resp3 = pool.primary(1, 7, resp::Protocol::kResp3);
    s.after = connectionCount(pool);
    s.separate = &resp3 != &pool.primary(1, 7, resp::Protocol::kResp2);
    s.stable = &pool.primary(1, 7, resp::Protocol::kResp3) == &resp3;
    return s;
  });
  EXPECT_EQ(seen.before, 2u);
  EXPECT_EQ(seen.after, 3u);  // shard 1's RESP3 connection only
  EXPECT_TRUE(seen.separate);
  EXPECT_TRUE(seen.stable);
}

TEST(BackendPoolTest, EachClientKeepsOneOfTheShardsConnections) {
  fakes::FakeShards shards(2, noViolation);
  WorkerHarness harness(shards.topology(), [](config::Config& c) {
    noPings(c);
    c.backend_connections = 3;
  });
  EXPECT_TRUE(onWorker<bool>(harness.worker(), [](net::Worker& w) {
    BackendPool& pool = poolOf(w);
    EXPECT_EQ(pool.connsPerShard(), 3u);
    EXPECT_EQ(connectionCount(pool), 6u);
    EXPECT_EQ(&pool.primary(0, 3), &pool.at(0, 0));
    EXPECT_EQ(&pool.primary(0, 4), &pool.at(0, 1));
    EXPECT_EQ(&pool.primary(1, 5), &pool.at(1, 2));
    EXPECT_EQ(&pool.primary(1, 5), &pool.primary(1, 5));
    EXPECT_NE(&pool.at(0, 0), &pool.at(0, 1));
    return true;
  }));
}

TEST(BackendPoolTest, ReadFromPrimaryIgnoresALiveReplica) {
  fakes::FakeShards primary(1, noViolation);
  fakes::FakeShards replica(1, noViolation);
  WorkerHarness harness(withReplica(primary.port(0), replica.port(0)), [](config::Config& c) {
    noPings(c);
    c.read_from = config::ReadFrom::kPrimary;
  });
  ASSERT_TRUE(eventually(harness.worker(), [](net::Worker& w) {
    bool up = false;
    poolOf(w).forEach([&](BackendConn& conn) {
      up = up || (conn.replica() && conn.state() == net::BackendState::kUp);
    });
    return up;
  }));
  EXPECT_TRUE(onWorker<bool>(harness.worker(), [](net::Worker& w) {
    bool all = true;
    for (int i = 0; i < 10; ++i) {
      all = all && &poolOf(w).forRead(0, 7) == &poolOf(w).primary(0, 7);
    }
    return all;
  }));
}

TEST(BackendPoolTest, AReconcileKeepsOrRebuildsShardsAsToldAndCountsWhatItRetired) {
  fakes::FakeShards shards(2, noViolation);
  WorkerHarness harness(shards.topology(), noPings);
  struct Seen {
    BackendPool::Reconciled kept;
    BackendPool::Reconciled rebuilt;
    bool same_after_keep = false;
    bool new_after_rebuild = false;
    size_t retired = 0;
  };
  const Seen seen = onWorker<Seen>(harness.worker(), [](net::Worker& w) {
    BackendPool& pool = poolOf(w);
    const route::Topology& topology = w.topology();
    Seen s;
    BackendConn* before = &pool.at(1, 0);
    s.kept = pool.reconcile(topology, topology, true);
    s.same_after_keep = &pool.at(1, 0) == before;
    pool.primary(0, 7, resp::Protocol::kResp3);  // a RESP3 connection, retired too
    s.rebuilt = pool.reconcile(topology, topology, false);
    s.new_after_rebuild = &pool.at(1, 0) != before;
    s.retired = pool.retiredCount();
    return s;
  });
  EXPECT_EQ(seen.kept.kept, 2u);
  EXPECT_EQ(seen.kept.retired, 0u);
  EXPECT_TRUE(seen.same_after_keep);
  EXPECT_EQ(seen.rebuilt.kept, 0u);
  EXPECT_EQ(seen.rebuilt.retired, 3u);
  EXPECT_TRUE(seen.new_after_rebuild);
  EXPECT_EQ(seen.retired, 3u);
  // Idle, they shut down at once and are freed once their sockets have closed.
  EXPECT_TRUE(eventually(harness.worker(), [](net::Worker& w) {
    poolOf(w).sweepRetired();
    return poolOf(w).retiredCount() == 0;
  }));
}

TEST(BackendPoolTest, AfterAShutdownConnectionsMadeOnDemandAreShutDownAtOnce) {
  fakes::FakeShards listed(1, noViolation);
  fakes::FakeShards unlisted(1, noViolation);
  WorkerHarness harness(listed.topology(), noPings);
  struct Seen {
    Standing node;
    Standing resp3;
    Standing listed;
  };
  const Seen seen = onWorker<Seen>(harness.worker(), [&](net::Worker& w) {
    BackendPool& pool = poolOf(w);
    pool.shutdown();
    return Seen{pool.node("127.0.0.1", unlisted.port(0), 0, 7, resp::Protocol::kResp2).standing(),
                pool.primary(0, 7, resp::Protocol::kResp3).standing(), pool.at(0, 0).standing()};
  });
  EXPECT_EQ(seen.node, Standing::kShutDown);
  EXPECT_EQ(seen.resp3, Standing::kShutDown);
  EXPECT_EQ(seen.listed, Standing::kShutDown);
}

}  // namespace
}  // namespace sp::backend
