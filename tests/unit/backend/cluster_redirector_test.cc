// ClusterRedirector driven by a real worker against in-process fake shards, with a fake resend
// lookup (the seam backend_op.h declares) standing in for the session's requests: -MOVED sends the
// fragment again to the listed shard it names, -ASK to an unlisted node (opened on demand) with
// ASKING first; a spent budget, an unparsable target or a client that has gone leave the reply to
// be delivered as it is; -TRYAGAIN sends the fragment again after a pause until its retries are
// spent; and a retry whose client went, or that still waits when the worker shuts down, is
// answered with its TRYAGAIN.
#include "backend/cluster_redirector.h"

#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <vector>

#include "backend/backend_op.h"
#include "backend/worker_backends.h"
#include "fakes/fake_shards.h"
#include "fakes/worker_harness.h"
#include "net/worker.h"
#include "unit/backend/fake_resend.h"

namespace sp::backend {
namespace {

using fakes::bulk;
using fakes::FakeReplyHandler;
using fakes::getCommand;
using fakes::keysOn;
using fakes::onWorker;
using fakes::WorkerHarness;

using testing::FakeRequest;
using testing::FakeResendLookup;

void noViolation(const std::string& what) { ADD_FAILURE() << "fake shard: " << what; }

void clusterMode(config::Config& c) {
  c.cluster_mode = true;
  c.max_redirects = 2;
  c.backend_ping_interval_ms = 600000;  // the fakes' counts then hold only the test's commands
}

std::string at(const char* kind, uint16_t port) {
  return std::string("-") + kind + " 1234 127.0.0.1:" + std::to_string(port) + "\r\n";
}

TEST(ClusterRedirectorTest, MovedSendsTheFragmentToTheListedShardAndAsksForARefresh) {
  FakeReplyHandler handler;
  FakeResendLookup lookup;
  fakes::FakeShards shards(2, noViolation);
  WorkerHarness harness(shards.topology(), clusterMode);
  const std::string key = keysOn(*shards.topology(), 1, 1)[0];
  FakeRequest request;
  request.bytes = getCommand(key);
  EXPECT_TRUE(onWorker<bool>(harness.worker(), [&](net::Worker& w) {
    return redirectorOf(w).redirect(&request, 0, at("MOVED", shards.port(1)));
  }));
  ASSERT_TRUE(handler.catcher.waitFor(1));
  std::lock_guard lock(handler.catcher.mu);
  EXPECT_EQ(handler.catcher.delivered[0].request, &request);
  EXPECT_EQ(handler.catcher.delivered[0].reply, bulk("s1|GET " + key));
  EXPECT_EQ(request.tries.redirects, 1u);
  EXPECT_EQ(shards.commandsServed(), 1u);
  EXPECT_EQ(harness.control().topology_refreshes.load(), 1);  // the slot map moved
}

TEST(ClusterRedirectorTest, AskGoesToAnUnlistedNodeWithAskingFirst) {
  FakeReplyHandler handler;
  FakeResendLookup lookup;
  fakes::FakeShards listed(1, noViolation);
  fakes::FakeShards unlisted(1, noViolation);
  WorkerHarness harness(listed.topology(), clusterMode);
  FakeRequest request;
  request.bytes = getCommand("k");
  EXPECT_TRUE(onWorker<bool>(harness.worker(), [&](net::Worker& w) {
    return redirectorOf(w).redirect(&request, 0, at("ASK", unlisted.port(0)));
  }));
  ASSERT_TRUE(handler.catcher.waitFor(1));
  std::lock_guard lock(handler.catcher.mu);
  ASSERT_EQ(handler.catcher.delivered.size(), 1u);  // ASKING's +OK is the connection's own
  EXPECT_EQ(handler.catcher.delivered[0].reply, bulk("s0|GET k"));
  EXPECT_EQ(unlisted.commandsServed(), 2u);  // ASKING, then the GET
  EXPECT_EQ(listed.commandsServed(), 0u);
  EXPECT_EQ(harness.control().topology_refreshes.load(), 0);  // a migration, not a new map
}

TEST(ClusterRedirectorTest, ASpentBudgetABadTargetOrAGoneClientIsNotFollowed) {
  FakeReplyHandler handler;
  FakeResendLookup lookup;
  fakes::FakeShards shards(1, noViolation);
  WorkerHarness harness(shards.topology(), clusterMode);
  const uint16_t port = shards.port(0);
  FakeRequest spent;
  spent.bytes = getCommand("k");
  spent.tries.redirects = 2;  // backend.max_redirects
  FakeRequest gone;
  gone.bytes = getCommand("k");
  gone.gone = true;
  FakeRequest fresh;
  fresh.bytes = getCommand("k");
  const std::vector<std::string> bad = {
      "-MOVED 1234 127.0.0.1\r\n",
      "-MOVED 1234 127.0.0.1:0\r\n",
      "-MOVED 1234 127.0.0.1:70000\r\n",
      "-MOVED 1234 127.0.0.1:63x9\r\n",
      "-ASK 1234 :6379\r\n",
      "-MOVED127.0.0.1:6379\r\n",
      "-ERR MOVED 1 127.0.0.1:6379\r\n",
  };
  const std::vector<bool> followed = onWorker<std::vector<bool>>(harness.worker(), [&](auto& w) {
    ClusterRedirector& r = redirectorOf(w);
    std::vector<bool> out{r.redirect(&spent, 0, at("MOVED", port)),
                          r.redirect(&gone, 0, at("MOVED", port))};
    for (const std::string& reply : bad) {
      out.push_back(r.redirect(&fresh, 0, reply));
    }
    return out;
  });
  ASSERT_EQ(followed.size(), 2 + bad.size());
  for (size_t i = 0; i < followed.size(); ++i) {
    EXPECT_FALSE(followed[i]) << (i < 2 ? "budget or client" : bad[i - 2]);
  }
  EXPECT_EQ(spent.tries.redirects, 2u);
  EXPECT_EQ(fresh.tries.redirects, 0u);
  EXPECT_EQ(shards.commandsServed(), 0u);
  std::lock_guard lock(handler.catcher.mu);
  EXPECT_TRUE(handler.catcher.delivered.empty());  // the caller delivers what is not followed
}

TEST(ClusterRedirectorTest, TryAgainSendsTheFragmentAgainAfterAPauseUntilTheRetriesAreSpent) {
  FakeReplyHandler handler;
  FakeResendLookup lookup;
  fakes::FakeShards shards(1, noViolation);
  WorkerHarness harness(shards.topology(), clusterMode);
  const route::ShardAddress node = shards.topology()->shards()[0];
  FakeRequest request;
  request.bytes = getCommand("k");
  request.tries.retries = 4;  // the fifth retry (its delay: cluster_retry_timers_test.cc)
  EXPECT_TRUE(onWorker<bool>(harness.worker(), [&](net::Worker& w) {
    return redirectorOf(w).retryLater(&request, 0, node, "-TRYAGAIN busy\r\n");
  }));
  ASSERT_TRUE(handler.catcher.waitFor(1));
  {
    std::lock_guard lock(handler.catcher.mu);
    EXPECT_EQ(handler.catcher.delivered[0].reply, bulk("s0|GET k"));
  }
  EXPECT_EQ(request.tries.retries, 5u);
  request.tries.retries = ClusterRedirector::kTryAgainRetries;
  EXPECT_FALSE(onWorker<bool>(harness.worker(), [&](net::Worker& w) {
    return redirectorOf(w).retryLater(&request, 0, node, "-TRYAGAIN busy\r\n");
  }));
}

TEST(ClusterRedirectorTest, ARetryWhoseClientWentIsAnsweredWithItsTryAgain) {
  FakeReplyHandler handler;
  FakeResendLookup lookup;
  fakes::FakeShards shards(1, noViolation);
  WorkerHarness harness(shards.topology(), clusterMode);
  FakeRequest leaving;
  leaving.bytes = getCommand("a");
  EXPECT_TRUE(onWorker<bool>(harness.worker(), [&](net::Worker& w) {
    const bool queued =
        redirectorOf(w).retryLater(&leaving, 0, shards.topology()->shards()[0], "-TRYAGAIN a\r\n");
    leaving.gone = true;  // its client goes before the retry is due
    return queued;
  }));
  ASSERT_TRUE(handler.catcher.waitFor(1));
  std::lock_guard lock(handler.catcher.mu);
  EXPECT_EQ(handler.catcher.delivered[0].request, &leaving);
  EXPECT_EQ(handler.catcher.delivered[0].reply, "-TRYAGAIN a\r\n");  // releases the request
  EXPECT_EQ(shards.commandsServed(), 0u);
}

TEST(ClusterRedirectorTest, AShutdownAnswersTheWaitingRetriesWithTheirTryAgain) {
  FakeReplyHandler handler;
  FakeResendLookup lookup;
  fakes::FakeShards shards(1, noViolation);
  WorkerHarness harness(shards.topology(), clusterMode);
  const route::ShardAddress node = shards.topology()->shards()[0];
  std::vector<FakeRequest> waiting(3);
  struct Seen {
    size_t queued = 0;
    size_t left = 0;
    bool refused_after = false;
  };
  const Seen seen = onWorker<Seen>(harness.worker(), [&](net::Worker& w) {
    Seen s;
    for (size_t i = 0; i < waiting.size(); ++i) {
      waiting[i].bytes = getCommand("k");
      waiting[i].tries.retries = 9;  // each waits 100 ms
      redirectorOf(w).retryLater(&waiting[i], 0, node, "-TRYAGAIN " + std::to_string(i) + "\r\n");
    }
    s.queued = redirectorOf(w).waitingRetries();
    redirectorOf(w).shutdown();
    s.left = redirectorOf(w).waitingRetries();
    waiting[0].tries.retries = 0;
    s.refused_after = !redirectorOf(w).retryLater(&waiting[0], 0, node, "-TRYAGAIN\r\n");
    return s;
  });
  EXPECT_EQ(seen.queued, 3u);
  EXPECT_EQ(seen.left, 0u);
  EXPECT_TRUE(seen.refused_after);
  ASSERT_TRUE(handler.catcher.waitFor(3));
  std::lock_guard lock(handler.catcher.mu);
  ASSERT_EQ(handler.catcher.delivered.size(), 3u);
  for (size_t i = 0; i < waiting.size(); ++i) {
    EXPECT_EQ(handler.catcher.delivered[i].request, &waiting[i]);
    EXPECT_EQ(handler.catcher.delivered[i].reply, "-TRYAGAIN " + std::to_string(i) + "\r\n");
  }
  EXPECT_EQ(shards.commandsServed(), 0u);
}

}  // namespace
}  // namespace sp::backend
