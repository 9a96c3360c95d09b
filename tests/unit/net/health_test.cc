// /healthz and /readyz (net/health.cc): liveness is ok while every worker's loop has turned within
// kWorkerStuckMs, and names each worker that has not started or has stalled; readiness counts the
// shards with a connection up and not ejected in every worker against metrics.ready_quorum
// (rounded up) and names, per shard, the workers without one. The texts are checked whole.
#include "net/health.h"

#include <gtest/gtest.h>

#include <string>

#include "unit/net/context_with_workers.h"

namespace sp::net {
namespace {

using testing::ContextWithWorkers;

void quorum(ContextWithWorkers& proxy, uint32_t percent) {
  auto config = std::make_shared<config::Config>(*proxy.context().config());
  config->ready_quorum_percent = percent;
  proxy.context().publish(config, proxy.context().topology());
}

TEST(LivenessTest, NoWorkerIsNotServing) {
  ContextWithWorkers proxy(0);
  const HealthStatus status = liveness(proxy.context(), 1000);
  EXPECT_FALSE(status.ok);
  EXPECT_EQ(status.text, "not serving: 0 workers\n");
}

TEST(LivenessTest, AWorkerWhoseLoopHasNotStartedIsNamed) {
  ContextWithWorkers proxy(2);
  proxy.startWorker(0);
  const uint64_t beat = proxy.worker(0).heartbeatMs();
  const HealthStatus status = liveness(proxy.context(), beat);
  EXPECT_FALSE(status.ok);
  EXPECT_EQ(status.text, "not serving: 2 workers\nworker 1 has not started its loop\n");
}

TEST(LivenessTest, ALoopThatTurnedWithinTheLimitIsServing) {
  ContextWithWorkers proxy(1);
  proxy.startWorker(0);
  const uint64_t beat = proxy.worker(0).heartbeatMs();
  ASSERT_GT(beat, 0u);
  const HealthStatus status = liveness(proxy.context(), beat + kWorkerStuckMs);
  EXPECT_TRUE(status.ok);
  EXPECT_EQ(status.text, "ok: 1 worker serving\n");
}

TEST(LivenessTest, ALoopSilentPastTheLimitIsStuckForThatLong) {
  ContextWithWorkers proxy(1);
  proxy.startWorker(0);
  const uint64_t beat = proxy.worker(0).heartbeatMs();
  const HealthStatus status = liveness(proxy.context(), beat + kWorkerStuckMs + 1);
  EXPECT_FALSE(status.ok);
  EXPECT_EQ(status.text, "not serving: 1 worker\nworker 0's loop has not turned for 10001 ms\n");
}

TEST(ReadinessTest, EveryShardUpInEveryWorkerIsReady) {
  ContextWithWorkers proxy(2);
  for (size_t w = 0; w < 2; ++w) {
    for (size_t s = 0; s < 3; ++s) {
      proxy.shard(w, s).connections_up.set(1);
    }
  }
  const HealthStatus status = readiness(proxy.context());
  EXPECT_TRUE(status.ok);
  EXPECT_EQ(status.text,
            "ready: 3 of 3 shards have a healthy connection in every worker, 3 needed "
            "(metrics.ready_quorum 100%)\n");
}

TEST(ReadinessTest, AShardDownInSomeWorkersNamesThemAll) {
  ContextWithWorkers proxy(3);
  for (size_t w = 0; w < 3; ++w) {
    proxy.shard(w, 0).connections_up.set(1);
    proxy.shard(w, 2).connections_up.set(1);
  }
  proxy.shard(1, 1).connections_up.set(1);  // s1 is up in worker 1 only
  const HealthStatus status = readiness(proxy.context());
  EXPECT_FALSE(status.ok);
  EXPECT_EQ(status.text,
            "not ready: 2 of 3 shards have a healthy connection in every worker, 3 needed "
            "(metrics.ready_quorum 100%)\n"
            "shard s1 (127.0.0.1:2): no healthy connection in worker 0, 2\n");
}

TEST(ReadinessTest, AnEjectedConnectionIsNotHealthyEvenWhenUp) {
  ContextWithWorkers proxy(1);
  for (size_t s = 0; s < 3; ++s) {
    proxy.shard(0, s).connections_up.set(1);
  }
  proxy.shard(0, 2).ejected.set(1);
  const HealthStatus status = readiness(proxy.context());
  EXPECT_FALSE(status.ok);
  EXPECT_EQ(status.text,
            "not ready: 2 of 3 shards have a healthy connection in every worker, 3 needed "
            "(metrics.ready_quorum 100%)\n"
            "shard s2 (127.0.0.1:3): no healthy connection in worker 0\n");
}

TEST(ReadinessTest, TheQuorumIsAPercentOfTheShardsRoundedUp) {
  ContextWithWorkers proxy(1);
  proxy.shard(0, 0).connections_up.set(1);
  proxy.shard(0, 1).connections_up.set(1);
  quorum(proxy, 67);  // 3 x 67% = 2.01 -> 3 needed
  EXPECT_FALSE(readiness(proxy.context()).ok);
  quorum(proxy, 66);  // 1.98 -> 2 needed
  const HealthStatus status = readiness(proxy.context());
  EXPECT_TRUE(status.ok);
  EXPECT_EQ(status.text,
            "ready: 2 of 3 shards have a healthy connection in every worker, 2 needed "
            "(metrics.ready_quorum 66%)\n"
            "shard s2 (127.0.0.1:3): no healthy connection in worker 0\n");
}

TEST(ReadinessTest, AQuorumOfZeroIsReadyWithNoShardUp) {
  ContextWithWorkers proxy(1);
  quorum(proxy, 0);
  const HealthStatus status = readiness(proxy.context());
  EXPECT_TRUE(status.ok);
  EXPECT_TRUE(status.text.starts_with(
      "ready: 0 of 3 shards have a healthy connection in every worker, 0 needed "))
      << status.text;
}

TEST(ReadinessTest, NoWorkerIsNeverReady) {
  ContextWithWorkers proxy(0);
  const HealthStatus status = readiness(proxy.context());
  EXPECT_FALSE(status.ok);
  EXPECT_EQ(status.text,
            "not ready: 3 of 3 shards have a healthy connection in every worker, 3 needed "
            "(metrics.ready_quorum 100%)\n"
            "no worker is running\n");
}

}  // namespace
}  // namespace sp::net
