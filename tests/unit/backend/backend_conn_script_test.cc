// BackendConn against a scripted shard (tests/fakes/scripted_shard.h), its replies caught by a
// fake reply handler: a fresh connection says AUTH, then HELLO 3 on a RESP3 connection, ahead of
// the requests queued while it connected; a refused AUTH fails those requests with the shard's
// words; a connection lost in the middle of a pipeline fails what was sent after the last reply,
// and the next request is served on a new connection; a -BUSY answer to the health PING keeps the
// connection up and is no failure; and a reply that arrives in parts reaches its request whole.
// A reply with no request is a protocol error that fails the connection; a health PING is never
// doubled while one is outstanding; a large value arriving in parts reaches its request whole; a
// retired connection finishes what it was sent and then shuts down, at once when idle and without
// reconnecting when it fails; and a shutdown answers what waits with "proxy shutting down".
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "backend/backend_conn.h"
#include "backend/backend_op.h"
#include "backend/backend_pool.h"
#include "backend/worker_backends.h"
#include "fakes/scripted_shard.h"
#include "fakes/worker_harness.h"
#include "net/worker.h"
#include "route/topology.h"

namespace sp::backend {
namespace {

using fakes::bulk;
using fakes::FakeReplyHandler;
using fakes::getCommand;
using fakes::onWorker;
using fakes::ScriptedShard;
using fakes::WorkerHarness;
using Argv = ScriptedShard::Argv;

route::TopologyPtr oneShard(uint16_t port, const std::string& user = "",
                            const std::string& password = "") {
  route::ShardAddress address("s0", "127.0.0.1", port);
  address.username = user;
  address.password = password;
  return route::Topology::evenSplit({address});
}

// No health PINGs in the scripts' way.
void quiet(config::Config& c) { c.backend_ping_interval_ms = 600000; }

std::string unavailable(uint16_t port) {
  return "-ERR shard s0 (127.0.0.1:" + std::to_string(port) + ") unavailable: ";
}

// GET k -> "v:k"; AUTH -> +OK; HELLO -> a RESP3 map.
ScriptedShard::Answer plainShard(const Argv& argv) {
  if (argv[0] == "AUTH") {
    return ScriptedShard::reply("+OK\r\n");
  }
  if (argv[0] == "HELLO") {
    return ScriptedShard::reply("%1\r\n$5\r\nproto\r\n:3\r\n");
  }
  return ScriptedShard::reply(bulk("v:" + argv.back()));
}

TEST(BackendConnScriptTest, AuthThenHelloGoFirstOnAFreshConnection) {
  FakeReplyHandler handler;
  ScriptedShard shard(plainShard);
  WorkerHarness harness(oneShard(shard.port(), "app", "secret"), quiet);
  InFlightRequest request;
  harness.worker().post([&](net::Worker& w) {
    poolOf(w).primary(0, 1, resp::Protocol::kResp3).send(getCommand("k"), &request, 0);
  });
  ASSERT_TRUE(handler.catcher.waitFor(1));
  {
    std::lock_guard lock(handler.catcher.mu);
    EXPECT_EQ(handler.catcher.delivered[0].request, &request);
    EXPECT_EQ(handler.catcher.delivered[0].reply, bulk("v:k"));
  }
  // Two connections: the RESP2 one the pool opened at start (AUTH only, nothing sent on it) and
  // the RESP3 one made for this request.
  ASSERT_TRUE(shard.waitForCommands(4));
  ASSERT_EQ(shard.connectionsAccepted(), 2u);
  const std::vector<Argv> auth_only{{"AUTH", "app", "secret"}};
  const std::vector<Argv> resp3{{"AUTH", "app", "secret"}, {"HELLO", "3"}, {"GET", "k"}};
  const std::vector<Argv> first = shard.commandsOn(0);
  const std::vector<Argv> second = shard.commandsOn(1);
  EXPECT_TRUE((first == auth_only && second == resp3) || (first == resp3 && second == auth_only));
}

TEST(BackendConnScriptTest, ARefusedAuthFailsTheQueuedRequestWithTheShardsWords) {
  FakeReplyHandler handler;
  ScriptedShard shard([](const Argv& argv) {
    if (argv[0] == "AUTH") {
      return ScriptedShard::reply(
          "-WRONGPASS invalid username-password pair or user is disabled.\r\n");
    }
    return plainShard(argv);
  });
  WorkerHarness harness(oneShard(shard.port(), "app", "wrong"), [](config::Config& c) {
    quiet(c);
    c.backend_failure_limit = 1000;  // keep retrying: not ejected while the test runs
  });
  InFlightRequest request;
  harness.worker().post(
      [&](net::Worker& w) { poolOf(w).at(0, 0).send(getCommand("k"), &request, 0); });
  ASSERT_TRUE(handler.catcher.waitFor(1));
  std::lock_guard lock(handler.catcher.mu);
  EXPECT_EQ(handler.catcher.delivered[0].request, &request);
  EXPECT_EQ(handler.catcher.delivered[0].reply,
            unavailable(shard.port()) +
                "authentication failed: WRONGPASS invalid username-password pair or user is "
                "disabled.\r\n");
}

TEST(BackendConnScriptTest, ALostConnectionFailsWhatWasSentAndTheNextRequestReconnects) {
  FakeReplyHandler handler;
  ScriptedShard shard([](const Argv& argv) {
    return argv.back() == "k1" ? ScriptedShard::hangUp() : plainShard(argv);
  });
  WorkerHarness harness(oneShard(shard.port()), quiet);
  std::vector<InFlightRequest> requests(4);
  harness.worker().post([&](net::Worker& w) {
    for (size_t i = 0; i < 3; ++i) {
      poolOf(w).at(0, 0).send(getCommand("k" + std::to_string(i)), &requests[i], 0);
    }
  });
  ASSERT_TRUE(handler.catcher.waitFor(3));
  {
    std::lock_guard lock(handler.catcher.mu);
    const auto& d = handler.catcher.delivered;
    EXPECT_EQ(d[0].request, &requests[0]);
    EXPECT_EQ(d[0].reply, bulk("v:k0"));
    // k1 and k2 were sent, and the shard hung up before answering either: both fail, in order,
    // with the same reason (the server's close, or a reset when k2 reached a closed socket).
    EXPECT_EQ(d[1].request, &requests[1]);
    EXPECT_EQ(d[2].request, &requests[2]);
    EXPECT_TRUE(d[1].reply.starts_with(unavailable(shard.port()))) << d[1].reply;
    EXPECT_EQ(d[2].reply, d[1].reply);
  }
  harness.worker().post(
      [&](net::Worker& w) { poolOf(w).at(0, 0).send(getCommand("k3"), &requests[3], 0); });
  ASSERT_TRUE(handler.catcher.waitFor(4));
  std::lock_guard lock(handler.catcher.mu);
  EXPECT_EQ(handler.catcher.delivered[3].request, &requests[3]);
  EXPECT_EQ(handler.catcher.delivered[3].reply, bulk("v:k3"));
  EXPECT_EQ(shard.connectionsAccepted(), 2u);
}

TEST(BackendConnScriptTest, ABusyPingKeepsTheConnectionUp) {
  FakeReplyHandler handler;
  ScriptedShard shard([](const Argv& argv) {
    if (argv[0] == "PING") {
      return ScriptedShard::reply(
          "-BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN "
          "NOSCRIPT.\r\n");
    }
    return plainShard(argv);
  });
  WorkerHarness harness(oneShard(shard.port()), [](config::Config& c) {
    c.backend_ping_interval_ms = 20;
    c.backend_failure_limit = 1;  // one failure would eject it
  });
  ASSERT_TRUE(shard.waitForCommands(6));  // PINGs
  struct Seen {
    net::BackendState state;
    uint64_t busy;
    uint64_t ejections;
  };
  const Seen seen = onWorker<Seen>(harness.worker(), [](net::Worker& w) {
    const net::ShardStats& s = w.stats().shards[0];
    return Seen{poolOf(w).at(0, 0).state(), s.ping_busy.get(), s.ejections.get()};
  });
  EXPECT_EQ(seen.state, net::BackendState::kUp);
  EXPECT_GE(seen.busy, 3u);
  EXPECT_EQ(seen.ejections, 0u);
  EXPECT_EQ(shard.connectionsAccepted(), 1u);  // never dropped
}

TEST(BackendConnScriptTest, AReplyInPartsReachesItsRequestWhole) {
  FakeReplyHandler handler;
  ScriptedShard shard([](const Argv& argv) {
    if (argv.back() == "split") {
      return ScriptedShard::Answer{{"$10\r\n01234", "56789\r", "\n"}, false};
    }
    return plainShard(argv);
  });
  WorkerHarness harness(oneShard(shard.port()), quiet);
  std::vector<InFlightRequest> requests(2);
  harness.worker().post([&](net::Worker& w) {
    poolOf(w).at(0, 0).send(getCommand("split"), &requests[0], 0);
    poolOf(w).at(0, 0).send(getCommand("after"), &requests[1], 0);
  });
  ASSERT_TRUE(handler.catcher.waitFor(2));
  std::lock_guard lock(handler.catcher.mu);
  EXPECT_EQ(handler.catcher.delivered[0].request, &requests[0]);
  EXPECT_EQ(handler.catcher.delivered[0].reply, "$10\r\n0123456789\r\n");
  EXPECT_EQ(handler.catcher.delivered[1].request, &requests[1]);
  EXPECT_EQ(handler.catcher.delivered[1].reply, bulk("v:after"));
}

TEST(BackendConnScriptTest, AReplyWithNoRequestFailsTheConnection) {
  FakeReplyHandler handler;
  ScriptedShard shard([](const Argv& argv) {
    return argv.back() == "k0" ? ScriptedShard::reply("+OK\r\n+EXTRA\r\n") : plainShard(argv);
  });
  WorkerHarness harness(oneShard(shard.port()), quiet);
  std::vector<InFlightRequest> requests(2);
  harness.worker().post(
      [&](net::Worker& w) { poolOf(w).at(0, 0).send(getCommand("k0"), &requests[0], 0); });
  ASSERT_TRUE(handler.catcher.waitFor(1));
  // The extra reply is counted, and the connection dropped.
  uint64_t errors = 0;
  for (int i = 0; i < 2000 && errors == 0; ++i) {
    errors = onWorker<uint64_t>(
        harness.worker(), [](net::Worker& w) { return w.stats().protocol_errors_backend.get(); });
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_EQ(errors, 1u);
  harness.worker().post(
      [&](net::Worker& w) { poolOf(w).at(0, 0).send(getCommand("k1"), &requests[1], 0); });
  ASSERT_TRUE(handler.catcher.waitFor(2));
  std::lock_guard lock(handler.catcher.mu);
  EXPECT_EQ(handler.catcher.delivered[0].reply, "+OK\r\n");
  EXPECT_EQ(handler.catcher.delivered[1].request, &requests[1]);
  EXPECT_EQ(handler.catcher.delivered[1].reply, bulk("v:k1"));
  EXPECT_EQ(shard.connectionsAccepted(), 2u);  // served on a new connection
}

TEST(BackendConnScriptTest, AHealthPingIsNotSentAgainWhileOneIsOutstanding) {
  FakeReplyHandler handler;
  ScriptedShard shard([](const Argv& argv) {
    return argv[0] == "PING" ? ScriptedShard::reply("+PONG\r\n") : plainShard(argv);
  });
  WorkerHarness harness(oneShard(shard.port()), quiet);
  const auto up = [&] {
    return onWorker<bool>(harness.worker(), [](net::Worker& w) {
      return poolOf(w).at(0, 0).state() == net::BackendState::kUp;
    });
  };
  for (int i = 0; i < 2000 && !up(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ASSERT_TRUE(up());
  InFlightRequest request;
  harness.worker().post([&](net::Worker& w) {
    BackendConn& conn = poolOf(w).at(0, 0);
    conn.ping();
    conn.ping();  // the first is outstanding: nothing
    conn.send(getCommand("k"), &request, 0);
  });
  ASSERT_TRUE(handler.catcher.waitFor(1));
  // The PONG has come (it was answered before the GET): the next ping goes out.
  harness.worker().post([](net::Worker& w) { poolOf(w).at(0, 0).ping(); });
  ASSERT_TRUE(shard.waitForCommands(3));
  EXPECT_EQ(shard.commands(), (std::vector<Argv>{{"PING"}, {"GET", "k"}, {"PING"}}));
}

TEST(BackendConnScriptTest, ALargeValueInManyPartsReachesItsRequestWhole) {
  FakeReplyHandler handler;
  const std::string value(300000, 'x');
  ScriptedShard shard([&](const Argv& argv) {
    if (argv.back() == "big") {
      const std::string reply = bulk(value);
      return ScriptedShard::Answer{
          {reply.substr(0, 100), reply.substr(100, 150000), reply.substr(150100)}, false};
    }
    return plainShard(argv);
  });
  WorkerHarness harness(oneShard(shard.port()), quiet);
  std::vector<InFlightRequest> requests(2);
  harness.worker().post([&](net::Worker& w) {
    poolOf(w).at(0, 0).send(getCommand("big"), &requests[0], 0);
    poolOf(w).at(0, 0).send(getCommand("after"), &requests[1], 0);
  });
  ASSERT_TRUE(handler.catcher.waitFor(2));
  std::lock_guard lock(handler.catcher.mu);
  EXPECT_EQ(handler.catcher.delivered[0].request, &requests[0]);
  EXPECT_TRUE(handler.catcher.delivered[0].reply == bulk(value));
  EXPECT_EQ(handler.catcher.delivered[1].request, &requests[1]);
  EXPECT_EQ(handler.catcher.delivered[1].reply, bulk("v:after"));
}

TEST(BackendConnScriptTest, ARetiredConnectionFinishesWhatItWasSentThenShutsDown) {
  FakeReplyHandler handler;
  ScriptedShard shard(plainShard);
  WorkerHarness harness(oneShard(shard.port()), quiet);
  std::vector<InFlightRequest> requests(2);
  struct Seen {
    Standing standing;
    bool accepting;
  };
  const Seen retiring = onWorker<Seen>(harness.worker(), [&](net::Worker& w) {
    BackendConn& conn = poolOf(w).at(0, 0);
    conn.send(getCommand("k0"), &requests[0], 0);
    conn.send(getCommand("k1"), &requests[1], 0);
    conn.retire();
    return Seen{conn.standing(), conn.accepting()};
  });
  EXPECT_EQ(retiring.standing, Standing::kRetiring);
  EXPECT_FALSE(retiring.accepting);
  ASSERT_TRUE(handler.catcher.waitFor(2));
  {
    std::lock_guard lock(handler.catcher.mu);
    EXPECT_EQ(handler.catcher.delivered[0].request, &requests[0]);
    EXPECT_EQ(handler.catcher.delivered[0].reply, bulk("v:k0"));
    EXPECT_EQ(handler.catcher.delivered[1].request, &requests[1]);
    EXPECT_EQ(handler.catcher.delivered[1].reply, bulk("v:k1"));
  }
  bool closed = false;
  for (int i = 0; i < 2000 && !closed; ++i) {
    closed = onWorker<bool>(harness.worker(),
                            [](net::Worker& w) { return poolOf(w).at(0, 0).fullyClosed(); });
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_TRUE(closed);
}

TEST(BackendConnScriptTest, ARetiredIdleConnectionShutsDownAtOnce) {
  ScriptedShard shard(plainShard);
  WorkerHarness harness(oneShard(shard.port()), quiet);
  const Standing standing = onWorker<Standing>(harness.worker(), [](net::Worker& w) {
    poolOf(w).at(0, 0).retire();
    return poolOf(w).at(0, 0).standing();
  });
  EXPECT_EQ(standing, Standing::kShutDown);
}

TEST(BackendConnScriptTest, ARetiredConnectionThatFailsShutsDownWithoutReconnecting) {
  FakeReplyHandler handler;
  ScriptedShard shard([](const Argv& argv) {
    return argv[0] == "GET" ? ScriptedShard::hangUp() : plainShard(argv);
  });
  WorkerHarness harness(oneShard(shard.port()), quiet);
  InFlightRequest request;
  harness.worker().post([&](net::Worker& w) {
    poolOf(w).at(0, 0).send(getCommand("k"), &request, 0);
    poolOf(w).at(0, 0).retire();
  });
  ASSERT_TRUE(handler.catcher.waitFor(1));
  {
    std::lock_guard lock(handler.catcher.mu);
    EXPECT_TRUE(handler.catcher.delivered[0].reply.starts_with(unavailable(shard.port())))
        << handler.catcher.delivered[0].reply;
  }
  EXPECT_EQ(onWorker<Standing>(harness.worker(),
                               [](net::Worker& w) { return poolOf(w).at(0, 0).standing(); }),
            Standing::kShutDown);  // final: no reconnect
}

TEST(BackendConnScriptTest, AShutdownAnswersWhatWaitsWithProxyShuttingDown) {
  FakeReplyHandler handler;
  ScriptedShard shard([](const Argv&) { return ScriptedShard::Answer{}; });  // silent
  WorkerHarness harness(oneShard(shard.port()), quiet);
  std::vector<InFlightRequest> requests(2);
  const std::string ejected = onWorker<std::string>(harness.worker(), [&](net::Worker& w) {
    BackendConn& conn = poolOf(w).at(0, 0);
    conn.send(getCommand("k0"), &requests[0], 0);
    conn.send(getCommand("k1"), &requests[1], 0);
    conn.shutdown();
    return conn.accepting() ? std::string("still accepting") : conn.ejectedError();
  });
  const std::string error = unavailable(shard.port()) + "proxy shutting down\r\n";
  EXPECT_EQ(ejected, error);  // what a request refused from now on is told
  ASSERT_TRUE(handler.catcher.waitFor(2));
  std::lock_guard lock(handler.catcher.mu);
  EXPECT_EQ(handler.catcher.delivered[0].request, &requests[0]);
  EXPECT_EQ(handler.catcher.delivered[0].reply, error);
  EXPECT_EQ(handler.catcher.delivered[1].request, &requests[1]);
  EXPECT_EQ(handler.catcher.delivered[1].reply, error);
}

}  // namespace
}  // namespace sp::backend
