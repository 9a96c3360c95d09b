// Tests for net/fd_budget.cc: the descriptors set aside for the proxy itself, the effective
// limits.max_clients under an open-files limit, the warning, and the soft-limit raise.
#include "net/fd_budget.h"

#include <sys/resource.h>

#include <gtest/gtest.h>

#include "config/topology_builder.h"

namespace sp::net {
namespace {

config::Config shards(int count, int connections) {
  config::Config c;
  c.backend_connections = connections;
  for (int i = 0; i < count; ++i) {
    config::ShardConfig s;
    s.name = "s" + std::to_string(i);
    s.host = "127.0.0.1";
    s.port = static_cast<uint16_t>(7001 + i);
    c.shards.push_back(s);
  }
  return c;
}

TEST(FdBudgetTest, ReserveCountsWorkersAndShardConnections) {
  config::Config c = shards(2, 1);
  EXPECT_EQ(reservedDescriptors(c, *config::makeTopology(c), 1),
            kFixedReservedFds + kReservedFdsPerWorker + 2);
  c = shards(3, 2);
  c.shards[1].replicas.push_back({"127.0.0.1", 8001});
  // Per worker: 3 shards x 2 connections + 1 replica connection.
  EXPECT_EQ(reservedDescriptors(c, *config::makeTopology(c), 4),
            kFixedReservedFds + 4 * (kReservedFdsPerWorker + 7));
}

TEST(FdBudgetTest, MaxClientsIsWhatTheLimitLeaves) {
  FdBudget b = fdBudget(100000, 42, 64);
  EXPECT_TRUE(b.fits());
  EXPECT_TRUE(b.reduced());
  EXPECT_EQ(b.max_clients, 22u);
  EXPECT_EQ(describeReduction(b),
            "limits.max_clients 100000 needs 100042 file descriptors (42 for listeners and shard "
            "connections), but the open-files limit is 64: at most 22 clients will be accepted "
            "(raise `ulimit -n` or LimitNOFILE to allow more)");

  b = fdBudget(1000, 42, 1048576);
  EXPECT_FALSE(b.reduced());
  EXPECT_EQ(b.max_clients, 1000u);
  EXPECT_EQ(describeReduction(b), "");

  b = fdBudget(1000, 42, 42);
  EXPECT_FALSE(b.fits());
  EXPECT_EQ(b.max_clients, 0u);
}

TEST(FdBudgetTest, PlanRaisesTheSoftLimitUpToTheHardOne) {
  rlimit saved{};
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &saved), 0);
  if (saved.rlim_max != RLIM_INFINITY && saved.rlim_max < 256) {
    GTEST_SKIP() << "hard open-files limit too low to test";
  }
  rlimit low = saved;
  low.rlim_cur = 128;
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &low), 0);
  const FdBudget b = planDescriptors(200, 50);  // needs 250: raised to 250
  rlimit now{};
  getrlimit(RLIMIT_NOFILE, &now);
  setrlimit(RLIMIT_NOFILE, &saved);
  EXPECT_EQ(now.rlim_cur, 250u);
  EXPECT_EQ(b.open_files, 250u);
  EXPECT_EQ(b.max_clients, 200u);
  EXPECT_FALSE(b.reduced());
}

}  // namespace
}  // namespace sp::net
