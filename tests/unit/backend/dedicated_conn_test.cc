// DedicatedConn's life (backend/dedicated_conn.h): the moves its diagram draws, and a connection
// whose shard hangs up mid-request: the request is answered with the proxy's shard error (marked
// unavailable), then the owner is told once, while the connection is kFailed, with the reason.
#include "backend/dedicated_conn.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>

#include "backend/backend_op.h"
#include "backend/worker_backends.h"
#include "config/config.h"
#include "fakes/scripted_shard.h"
#include "fakes/worker_harness.h"
#include "net/worker.h"
#include "route/topology.h"

namespace sp::backend {
namespace {

using fakes::ScriptedShard;
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
  void onDedicatedPush(DedicatedConn& /*conn*/, std::string_view /*push*/) override {}
  void onDedicatedIdle(DedicatedConn& /*conn*/) override { ++idle; }
  void onDedicatedFailed(DedicatedConn& conn) override {
    failed_while_failed = conn.life() == Life::kFailed && conn.failed();
    failure = conn.failure();
    ++failures;
  }
  std::atomic<int> idle{0};
  std::atomic<int> failures{0};
  std::atomic<bool> failed_while_failed{false};
  std::string failure;
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
    std::string error;
    DedicatedConn* conn = dedicatedOf(w).acquire(0, DedicatedConn::Mode::kCommands, &owner, &error);
    ASSERT_NE(conn, nullptr) << error;
    conn->send("*3\r\n$5\r\nBLPOP\r\n$1\r\nk\r\n$1\r\n0\r\n", &request, 0, 1, true);
  });
  ASSERT_TRUE(handler.catcher.waitFor(1));
  {
    std::lock_guard lock(handler.catcher.mu);
    EXPECT_EQ(handler.catcher.delivered[0].request, &request);
    EXPECT_EQ(handler.catcher.delivered[0].reply.rfind("-ERR shard s0 (127.0.0.1:", 0), 0u)
        << handler.catcher.delivered[0].reply;
  }
  EXPECT_TRUE(request.shard_unavailable);
  for (int i = 0; i < 1000 && owner.failures.load() == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_EQ(owner.failures.load(), 1);
  EXPECT_TRUE(owner.failed_while_failed.load());
  EXPECT_FALSE(owner.failure.empty());
  EXPECT_EQ(owner.idle.load(), 0);
}

}  // namespace
}  // namespace sp::backend
