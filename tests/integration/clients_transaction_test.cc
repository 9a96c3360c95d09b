// Transactions through the proxy, against real shards: MULTI ... EXEC on one slot commits on its
// shard; a key of another shard inside the transaction gets -CROSSSLOT and EXEC -EXECABORT (and
// nothing is written anywhere); WATCH sees a concurrent change (EXEC answers nil); DISCARD,
// nesting errors, pipelined transactions in order; no dedicated connection outlives its use.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "integration/clients_helpers.h"
#include "integration/harness.h"

namespace sp::test {
namespace {

using std::chrono::seconds;

constexpr int kShards = 4;
constexpr const char* kCrossSlot = "(error) CROSSSLOT Keys in request don't hash to the same slot";
constexpr const char* kExecAbort =
    "(error) EXECABORT Transaction discarded because of previous errors.";

class TransactionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    env_ = std::make_unique<Deployment>(kShards);
    client_ = std::make_unique<Client>(env_->port());
    ASSERT_TRUE(client_->ok());
  }
  std::string cmd(const std::vector<std::string>& argv) { return client_->cmd(argv); }

  // Total connected clients over the shards (the proxy's own connections included).
  long long shardConnections() {
    long long n = 0;
    for (auto& s : env_->shards()) {
      Client direct(s->port());
      n += std::stoll(infoField(direct, "clients", "connected_clients")) - 1;  // minus `direct`
    }
    return n;
  }

  std::unique_ptr<Deployment> env_;
  std::unique_ptr<Client> client_;
};

TEST_F(TransactionTest, OneSlotCommits) {
  EXPECT_EQ(cmd({"MULTI"}), "OK");
  EXPECT_EQ(cmd({"SET", "{acct:1}:balance", "100"}), "QUEUED");
  EXPECT_EQ(cmd({"INCRBY", "{acct:1}:balance", "-30"}), "QUEUED");
  EXPECT_EQ(cmd({"RPUSH", "{acct:1}:log", "debit 30"}), "QUEUED");
  EXPECT_EQ(cmd({"GET", "{acct:1}:balance"}), "QUEUED");
  EXPECT_EQ(cmd({"EXEC"}), "[OK, (integer) 70, (integer) 1, 70]");
  Client other(env_->port());
  EXPECT_EQ(other.cmd({"GET", "{acct:1}:balance"}), "70");
  EXPECT_EQ(other.cmd({"LRANGE", "{acct:1}:log", "0", "-1"}), "[debit 30]");
  // The session is back to plain routing: keys of any shard.
  EXPECT_EQ(cmd({"SET", keyOnShard(0, kShards, "after"), "1"}), "OK");
  EXPECT_EQ(cmd({"SET", keyOnShard(3, kShards, "after"), "1"}), "OK");
}

TEST_F(TransactionTest, SpanningShardsAbortsWithCrossSlot) {
  if (env_->direct()) {
    GTEST_SKIP() << "a single redis-server has no slots";
  }
  const std::string first = keyOnShard(0, kShards, "tx-a");
  const std::string second = keyOnShard(2, kShards, "tx-b");
  EXPECT_EQ(cmd({"MULTI"}), "OK");
  EXPECT_EQ(cmd({"SET", first, "1"}), "QUEUED");
  EXPECT_EQ(cmd({"SET", second, "2"}), kCrossSlot);
  EXPECT_EQ(cmd({"INCR", first}), "QUEUED");
  EXPECT_EQ(cmd({"EXEC"}), kExecAbort);
  EXPECT_EQ(cmd({"EXEC"}), "(error) ERR EXEC without MULTI");
  // Nothing was written on any shard.
  for (auto& s : env_->shards()) {
    Client direct(s->port());
    EXPECT_EQ(direct.cmd({"DBSIZE"}), "(integer) 0") << s->address();
  }
  // A multi-key command across slots inside MULTI is refused the same way.
  EXPECT_EQ(cmd({"MULTI"}), "OK");
  EXPECT_EQ(cmd({"MSET", first, "1", second, "2"}), kCrossSlot);
  EXPECT_EQ(cmd({"EXEC"}), kExecAbort);
  EXPECT_EQ(cmd({"GET", first}), "(nil)");
}

TEST_F(TransactionTest, WatchSeesConcurrentChange) {
  Client other(env_->port());
  EXPECT_EQ(cmd({"SET", "{w}counter", "1"}), "OK");
  EXPECT_EQ(cmd({"WATCH", "{w}counter"}), "OK");
  EXPECT_EQ(cmd({"GET", "{w}counter"}), "1");
  EXPECT_EQ(other.cmd({"SET", "{w}counter", "changed"}), "OK");  // another client, meanwhile
  EXPECT_EQ(cmd({"MULTI"}), "OK");
  EXPECT_EQ(cmd({"SET", "{w}counter", "mine"}), "QUEUED");
  EXPECT_EQ(cmd({"EXEC"}), "(nil)");
  EXPECT_EQ(other.cmd({"GET", "{w}counter"}), "changed");

  // Unchanged, the same transaction commits.
  EXPECT_EQ(cmd({"WATCH", "{w}counter"}), "OK");
  EXPECT_EQ(cmd({"MULTI"}), "OK");
  EXPECT_EQ(cmd({"SET", "{w}counter", "mine"}), "QUEUED");
  EXPECT_EQ(cmd({"EXEC"}), "[OK]");
  EXPECT_EQ(other.cmd({"GET", "{w}counter"}), "mine");

  // WATCH alone (MULTI; EXEC with nothing queued) still checks the key.
  EXPECT_EQ(cmd({"WATCH", "{w}counter"}), "OK");
  EXPECT_EQ(other.cmd({"DEL", "{w}counter"}), "(integer) 1");
  EXPECT_EQ(cmd({"MULTI"}), "OK");
  EXPECT_EQ(cmd({"EXEC"}), "(nil)");

  // UNWATCH forgets.
  EXPECT_EQ(cmd({"WATCH", "{w}counter"}), "OK");
  EXPECT_EQ(cmd({"UNWATCH"}), "OK");
  EXPECT_EQ(other.cmd({"SET", "{w}counter", "x"}), "OK");
  EXPECT_EQ(cmd({"MULTI"}), "OK");
  EXPECT_EQ(cmd({"GET", "{w}counter"}), "QUEUED");
  EXPECT_EQ(cmd({"EXEC"}), "[x]");
}

TEST_F(TransactionTest, WatchedKeysMustShareTheTransactionSlot) {
  if (env_->direct()) {
    GTEST_SKIP() << "a single redis-server has no slots";
  }
  EXPECT_EQ(cmd({"WATCH", "a", "b"}).substr(0, 17), "(error) CROSSSLOT");
  EXPECT_EQ(cmd({"WATCH", "{s}a"}), "OK");
  EXPECT_EQ(cmd({"WATCH", "{other}b"}), kCrossSlot);
  EXPECT_EQ(cmd({"MULTI"}), "OK");
  EXPECT_EQ(cmd({"SET", "{other}b", "1"}), kCrossSlot);
  EXPECT_EQ(cmd({"EXEC"}), kExecAbort);
  EXPECT_EQ(cmd({"GET", "{other}b"}), "(nil)");
}

TEST_F(TransactionTest, DiscardAndQueueingErrors) {
  EXPECT_EQ(cmd({"DISCARD"}), "(error) ERR DISCARD without MULTI");
  EXPECT_EQ(cmd({"MULTI"}), "OK");
  EXPECT_EQ(cmd({"MULTI"}), "(error) ERR MULTI calls can not be nested");
  EXPECT_EQ(cmd({"WATCH", "x"}), "(error) ERR WATCH inside MULTI is not allowed");
  EXPECT_EQ(cmd({"SET", "{d}k", "1"}), "QUEUED");
  EXPECT_EQ(cmd({"DISCARD"}), "OK");
  EXPECT_EQ(cmd({"GET", "{d}k"}), "(nil)");

  // A command refused while queuing (wrong arity, unknown) aborts the transaction.
  EXPECT_EQ(cmd({"MULTI"}), "OK");
  EXPECT_EQ(cmd({"SET", "{d}k"}), "(error) ERR wrong number of arguments for 'set' command");
  EXPECT_EQ(cmd({"SET", "{d}k", "1"}), "QUEUED");
  EXPECT_EQ(cmd({"EXEC"}), kExecAbort);
  EXPECT_EQ(cmd({"GET", "{d}k"}), "(nil)");

  // Keyless commands before the first key are held, then run in the transaction.
  EXPECT_EQ(cmd({"MULTI"}), "OK");
  EXPECT_EQ(cmd({"PING"}), "QUEUED");
  EXPECT_EQ(cmd({"ECHO", "hi"}), "QUEUED");
  EXPECT_EQ(cmd({"SET", "{d}k", "v"}), "QUEUED");
  EXPECT_EQ(cmd({"EXEC"}), "[PONG, hi, OK]");
  EXPECT_EQ(cmd({"MULTI"}), "OK");
  EXPECT_EQ(cmd({"EXEC"}), "[]");
  // A runtime error inside EXEC is the command's, the others still run (as Redis does).
  EXPECT_EQ(cmd({"MULTI"}), "OK");
  EXPECT_EQ(cmd({"INCR", "{d}k"}), "QUEUED");
  EXPECT_EQ(cmd({"SET", "{d}n", "5"}), "QUEUED");
  EXPECT_EQ(cmd({"EXEC"}), "[(error) ERR value is not an integer or out of range, OK]");

  // Arity comes first, as on redis-server: a malformed EXEC discards the transaction with the
  // reason (also outside MULTI), a WATCH without keys inside MULTI is an arity error that aborts.
  const std::string exec_arity =
      "(error) EXECABORT Transaction discarded because of: wrong number of arguments for 'exec' "
      "command";
  EXPECT_EQ(cmd({"EXEC", "x"}), exec_arity);
  EXPECT_EQ(cmd({"MULTI"}), "OK");
  EXPECT_EQ(cmd({"SET", "{d}k", "2"}), "QUEUED");
  EXPECT_EQ(cmd({"EXEC", "x"}), exec_arity);
  EXPECT_EQ(cmd({"EXEC"}), "(error) ERR EXEC without MULTI");
  EXPECT_EQ(cmd({"GET", "{d}k"}), "v");  // the SET was discarded
  // ... and forgets a WATCH (found by the differential test).
  EXPECT_EQ(cmd({"WATCH", "{d}k"}), "OK");
  {
    Client other(env_->port());
    EXPECT_EQ(other.cmd({"SET", "{d}k", "changed"}), "OK");
  }
  EXPECT_EQ(cmd({"EXEC", "x"}), exec_arity);
  EXPECT_EQ(cmd({"MULTI"}), "OK");
  EXPECT_EQ(cmd({"GET", "{d}k"}), "QUEUED");
  EXPECT_EQ(cmd({"EXEC"}), "[changed]");
  EXPECT_EQ(cmd({"MULTI"}), "OK");
  EXPECT_EQ(cmd({"WATCH"}), "(error) ERR wrong number of arguments for 'watch' command");
  EXPECT_EQ(cmd({"EXEC"}), kExecAbort);
}

TEST_F(TransactionTest, WholeKeyspaceCommandsCannotBeQueued) {
  if (env_->direct()) {
    GTEST_SKIP() << "proxy-only rule";
  }
  EXPECT_EQ(cmd({"MULTI"}), "OK");
  EXPECT_EQ(cmd({"SET", "{f}k", "1"}), "QUEUED");
  EXPECT_EQ(cmd({"DBSIZE"}).rfind("(error) ERR command 'dbsize' spans every shard", 0), 0u);
  EXPECT_EQ(cmd({"EXEC"}), kExecAbort);
}

TEST_F(TransactionTest, PipelinedTransactionKeepsOrder) {
  // Everything in one write: a command before MULTI on the shared pipeline, the transaction on
  // its dedicated connection, a command after EXEC back on the shared pipeline.
  RawConn raw(env_->port());
  std::string pipeline;
  auto add = [&pipeline](std::initializer_list<std::string> args) {
    pipeline += "*" + std::to_string(args.size()) + "\r\n";
    for (const std::string& a : args) {
      pipeline += "$" + std::to_string(a.size()) + "\r\n" + a + "\r\n";
    }
  };
  add({"SET", "{p}n", "10"});
  add({"MULTI"});
  add({"INCR", "{p}n"});
  add({"INCR", "{p}n"});
  add({"EXEC"});
  add({"GET", "{p}n"});
  add({"SET", "other", "x"});
  add({"GET", "other"});
  ASSERT_TRUE(raw.sendAll(pipeline));
  const std::string expected =
      "+OK\r\n+OK\r\n+QUEUED\r\n+QUEUED\r\n*2\r\n:11\r\n:12\r\n$2\r\n12\r\n+OK\r\n$1\r\nx\r\n";
  EXPECT_EQ(raw.readUntil("$1\r\nx\r\n", seconds(5)), expected);
}

// RESP commands, concatenated: to be sent in one write.
std::string encodeAll(const std::vector<std::vector<std::string>>& commands) {
  std::string bytes;
  for (const auto& args : commands) {
    bytes += encodeCommand(args);
  }
  return bytes;
}

// After WATCH was answered, a transaction that ends without reaching the shard (DISCARD, or an
// EXEC of a transaction aborted while queuing) is followed in the same write by WATCH of a key of
// another shard. The proxy must answer all of it and stay up.
TEST_F(TransactionTest, PipelinedSequencesAfterWatchKeepTheProxyUp) {
  const std::string a = keyOnShard(0, kShards, "pa");
  const std::string b = keyOnShard(2, kShards, "pb");
  const std::vector<std::vector<std::vector<std::string>>> sequences = {
      {{"MULTI"}, {"DISCARD"}, {"WATCH", b}, {"PING", "end"}},
      {{"MULTI"}, {"GET"}, {"EXEC"}, {"WATCH", b}, {"PING", "end"}},
      {{"MULTI"}, {"SET", b, "1"}, {"EXEC"}, {"WATCH", b}, {"PING", "end"}},
  };
  const std::vector<std::string> expected = {
      "+OK\r\n+OK\r\n+OK\r\n$3\r\nend\r\n",
      "+OK\r\n-ERR wrong number of arguments for 'get' command\r\n"
      "-EXECABORT Transaction discarded because of previous errors.\r\n+OK\r\n$3\r\nend\r\n",
      env_->direct() ? "+OK\r\n+QUEUED\r\n*1\r\n+OK\r\n+OK\r\n$3\r\nend\r\n"
                     : "+OK\r\n-CROSSSLOT Keys in request don't hash to the same slot\r\n"
                       "-EXECABORT Transaction discarded because of previous errors.\r\n"
                       "+OK\r\n$3\r\nend\r\n",
  };
  for (size_t i = 0; i < sequences.size(); ++i) {
    RawConn raw(env_->port());
    ASSERT_TRUE(raw.sendAll(encodeAll({{"WATCH", a}})));
    ASSERT_EQ(raw.readUntil("+OK\r\n", seconds(5)), "+OK\r\n");
    ASSERT_TRUE(raw.sendAll(encodeAll(sequences[i])));
    EXPECT_EQ(raw.readUntil("end\r\n", seconds(5)), expected[i]) << "sequence " << i;
    if (env_->proxy() != nullptr) {
      ASSERT_TRUE(env_->proxy()->process().alive()) << "sequence " << i << "\n"
                                                    << env_->proxy()->process().log();
    }
  }
  EXPECT_EQ(cmd({"PING"}), "PONG");
}

// After WATCH was answered and a transaction discarded, the next transaction (in the same write)
// runs on the shard of its own key, not on the watched key's.
TEST_F(TransactionTest, TransactionAfterDiscardRunsOnItsOwnShard) {
  const std::string a = keyOnShard(0, kShards, "wa");
  const std::string b = keyOnShard(3, kShards, "wb");
  RawConn raw(env_->port());
  ASSERT_TRUE(raw.sendAll(encodeAll({{"WATCH", a}})));
  ASSERT_EQ(raw.readUntil("+OK\r\n", seconds(5)), "+OK\r\n");
  ASSERT_TRUE(raw.sendAll(
      encodeAll({{"MULTI"}, {"DISCARD"}, {"MULTI"}, {"SET", b, "v"}, {"EXEC"}, {"GET", b}})));
  EXPECT_EQ(raw.readUntil("$1\r\nv\r\n", seconds(5)),
            "+OK\r\n+OK\r\n+OK\r\n+QUEUED\r\n*1\r\n+OK\r\n$1\r\nv\r\n");
  Client other(env_->port());
  EXPECT_EQ(other.cmd({"GET", b}), "v");
  if (!env_->direct()) {
    // Written on b's shard and nowhere else.
    for (size_t i = 0; i < env_->shards().size(); ++i) {
      Client direct(env_->shards()[i]->port());
      EXPECT_EQ(direct.cmd({"EXISTS", b}), i == 3 ? "(integer) 1" : "(integer) 0") << "shard " << i;
    }
  }
}

// A WATCH whose shard restarts (empty) is lost with its connection: the next EXEC must not run as
// if the watched key had not changed. redis-server answers nil there; the proxy cannot tell, so
// it refuses.
TEST_F(TransactionTest, WatchLostWithItsShardFailsTheExec) {
  if (env_->direct()) {
    GTEST_SKIP() << "proxy-only: a shard restart";
  }
  const std::string key = keyOnShard(1, kShards, "lost");
  ASSERT_EQ(cmd({"SET", key, "before"}), "OK");
  ASSERT_EQ(cmd({"WATCH", key}), "OK");
  env_->shards()[1]->kill9();
  env_->shards()[1]->restart();
  Client other(env_->port());
  ASSERT_TRUE(eventually([&] { return other.cmd({"SET", key + "probe", "1"}) == "OK"; }));
  EXPECT_EQ(cmd({"MULTI"}), "OK");
  cmd({"SET", key, "after"});  // QUEUED, or refused: either way EXEC must not commit it
  EXPECT_EQ(cmd({"EXEC"}).rfind("(error) EXECABORT Transaction discarded", 0), 0u);
  EXPECT_EQ(other.cmd({"GET", key}), "(nil)");
  // The lost WATCH is gone with that EXEC: the next transaction runs.
  EXPECT_EQ(cmd({"MULTI"}), "OK");
  EXPECT_EQ(cmd({"SET", key, "again"}), "QUEUED");
  EXPECT_EQ(cmd({"EXEC"}), "[OK]");
}

TEST_F(TransactionTest, DedicatedConnectionsAreReleased) {
  if (env_->direct()) {
    GTEST_SKIP() << "proxy-only";
  }
  const long long before = shardConnections();
  for (int i = 0; i < 100; ++i) {
    Client c(env_->port());
    const std::string key = "{rel" + std::to_string(i) + "}k";
    ASSERT_EQ(c.cmd({"MULTI"}), "OK");
    ASSERT_EQ(c.cmd({"INCR", key}), "QUEUED");
    ASSERT_EQ(c.cmd({"EXEC"}), "[(integer) 1]");
    if (i % 2 == 0) {
      ASSERT_EQ(c.cmd({"WATCH", key}), "OK");  // and disconnect while watching
    }
  }
  // A few idle connections may be kept for reuse, never one per transaction.
  EXPECT_TRUE(eventually([&] { return shardConnections() <= before + 4 * kShards; }))
      << "before " << before << ", now " << shardConnections();
}

}  // namespace
}  // namespace sp::test
