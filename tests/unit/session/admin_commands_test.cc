// PROXY subcommands and SLOWLOG over loopback against a worker on two fake shards
// (session/admin_commands.cc): HELP's lines, SLOTS as CLUSTER SLOTS, SHARDS' fields, CONFIG GET's
// glob matching and hidden secrets, SLOWLOG GET / LEN / RESET in the proxy's seven-field form and
// redis-server's six-field form, INFO and HEALTH, and the exact errors of bad calls (redis-server
// 7's words where it has the command).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "config/config.h"
#include "fakes/fake_shards.h"
#include "fakes/redis_client.h"
#include "fakes/worker_harness.h"
#include "net/slow_log.h"
#include "net/worker.h"

namespace sp::session {
namespace {

using fakes::RedisClient;
using fakes::Reply;
using fakes::WorkerHarness;

// A reply as one line: +status, -error, :integer, "bulk", nil, [a, b].
std::string show(const redisReply* r) {
  if (r == nullptr) {
    return "(no reply)";
  }
  switch (r->type) {
    case REDIS_REPLY_STATUS:
      return "+" + std::string(r->str, r->len);
    case REDIS_REPLY_ERROR:
      return "-" + std::string(r->str, r->len);
    case REDIS_REPLY_INTEGER:
      return ":" + std::to_string(r->integer);
    case REDIS_REPLY_STRING:
      return "\"" + std::string(r->str, r->len) + "\"";
    case REDIS_REPLY_NIL:
      return "nil";
    case REDIS_REPLY_ARRAY: {
      std::string out = "[";
      for (size_t i = 0; i < r->elements; ++i) {
        out += (i == 0 ? "" : ", ") + show(r->element[i]);
      }
      return out + "]";
    }
    default:
      return "?";
  }
}

net::SlowLogEntry slowEntry(uint64_t id, std::string_view command, std::string_view shard) {
  net::SlowLogEntry e;
  e.id = id;
  e.unix_time = 1700000000 + id;
  e.duration_us = 1000 * id;
  net::SlowLogEntry::copy(e.command, sizeof e.command, command);
  net::SlowLogEntry::copy(e.shard, sizeof e.shard, shard);
  net::SlowLogEntry::copy(e.client, sizeof e.client, "127.0.0.1:5000");
  net::SlowLogEntry::copy(e.client_name, sizeof e.client_name, "app");
  return e;
}

class AdminCommandsTest : public ::testing::Test {
 protected:
  std::string ask(const std::vector<std::string>& argv) {
    Reply r = client_.command(argv);
    return show(r.get());
  }
  // Puts entries into the worker's slow log, on its thread.
  void record(const std::vector<net::SlowLogEntry>& entries) {
    fakes::onWorker<bool>(harness_.worker(), [&](net::Worker& w) {
      for (const net::SlowLogEntry& e : entries) {
        w.slowLog().record(e);
      }
      return true;
    });
  }

  fakes::FakeShards shards_{2, [](const std::string& what) { ADD_FAILURE() << what; }};
  WorkerHarness harness_{shards_.topology(),
                         [](config::Config& c) {
                           fakes::noPings(c);
                           c.slowlog_max_len = 3;
                           c.slowlog_threshold_us = 60000000;  // nothing the test sends is slow
                           c.backend_password = "hunter2";
                           c.limits.max_bulk_len = 1024;
                         },
                         WorkerHarness::Listen::kLoopback};
  RedisClient client_{harness_.port()};
};

TEST_F(AdminCommandsTest, HelpListsEverySubcommand) {
  EXPECT_EQ(ask({"PROXY", "HELP"}),
            "[+PROXY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:, "
            "+INFO [<section> ...], "
            "+    The proxy's INFO: every section of redis-server's, and shards., "
            "+SHARDS, +    Every shard with its address, state, connections and counters., "
            "+SLOTS, +    Slot ranges and the shard that owns each (as CLUSTER SLOTS)., "
            "+CONFIG GET <pattern> [<pattern> ...], "
            "+    The effective configuration (dotted keys, e.g. limits.*)., "
            "+SLOWLOG GET [<count>] | LEN | RESET, "
            "+    The proxy-side slow log (slowlog.threshold_us, slowlog.max_len)., "
            "+RELOAD, +    Re-read the configuration file and apply it without dropping clients., "
            "+HEALTH, "
            "+    Liveness and readiness, as the metrics listener's /healthz and /readyz., "
            "+HELP, +    Print this help.]");
}

TEST_F(AdminCommandsTest, SlotsListsEachRangeWithItsShardAsClusterSlotsDoes) {
  const std::string p0 = std::to_string(shards_.port(0));
  const std::string p1 = std::to_string(shards_.port(1));
  EXPECT_EQ(ask({"PROXY", "SLOTS"}), "[[:0, :8191, [\"127.0.0.1\", :" + p0 +
                                         ", \"s0\"]], [:8192, :16383, [\"127.0.0.1\", :" + p1 +
                                         ", \"s1\"]]]");
}

TEST_F(AdminCommandsTest, ShardsListsEveryShardsFieldsInOrder) {
  Reply r = client_.command({"PROXY", "SHARDS"});
  ASSERT_TRUE(r != nullptr);
  ASSERT_EQ(r->type, REDIS_REPLY_ARRAY);
  ASSERT_EQ(r->elements, 2u);
  const redisReply* s1 = r->element[1];
  ASSERT_EQ(s1->elements, 44u);
  std::vector<std::string> names;
  for (size_t i = 0; i < s1->elements; i += 2) {
    names.push_back(fakes::text(*s1->element[i]));
  }
  EXPECT_EQ(names, (std::vector<std::string>{"name",
                                             "addr",
                                             "state",
                                             "connections_up",
                                             "connections",
                                             "ejected",
                                             "slots",
                                             "slot_count",
                                             "requests",
                                             "errors",
                                             "reply_errors",
                                             "inflight",
                                             "connects",
                                             "connect_failures",
                                             "reconnects",
                                             "timeouts",
                                             "ejections",
                                             "ping_failures",
                                             "ping_busy",
                                             "replicas",
                                             "replica_connections_up",
                                             "replica_reads"}));
  EXPECT_EQ(show(s1->element[1]), "\"s1\"");
  EXPECT_EQ(show(s1->element[3]), "\"127.0.0.1:" + std::to_string(shards_.port(1)) + "\"");
  EXPECT_EQ(show(s1->element[9]), ":1");  // connections: 1 worker x backend.connections 1
  EXPECT_EQ(show(s1->element[13]), "\"8192-16383\"");
  EXPECT_EQ(show(s1->element[15]), ":8192");
  EXPECT_EQ(show(s1->element[39]), "\"\"");  // no replicas
}

TEST_F(AdminCommandsTest, ConfigGetMatchesGlobsCaseInsensitivelyInConfigOrder) {
  EXPECT_EQ(ask({"PROXY", "CONFIG", "GET", "LIMITS.MAX_*_LEN"}),
            "[\"limits.max_bulk_len\", \"1024\", \"limits.max_array_len\", \"1048576\", "
            "\"limits.max_inline_len\", \"65536\"]");
}

TEST_F(AdminCommandsTest, ConfigGetListsAKeyOnceWhateverPatternsMatchIt) {
  EXPECT_EQ(ask({"PROXY", "CONFIG", "GET", "slowlog.max_len", "slowlog.*", "*.max_len"}),
            "[\"slowlog.threshold_us\", \"60000000\", \"slowlog.max_len\", \"3\"]");
}

TEST_F(AdminCommandsTest, ConfigGetHidesPasswordsAndMatchesNothingWithAnEmptyArray) {
  EXPECT_EQ(ask({"PROXY", "CONFIG", "GET", "backend.password", "auth.password"}),
            "[\"backend.password\", \"(set)\", \"auth.password\", \"\"]");
  EXPECT_EQ(ask({"PROXY", "CONFIG", "GET", "no.such.*"}), "[]");
}

TEST_F(AdminCommandsTest, ConfigOtherThanGetIsRefusedWithTheWayToChangeIt) {
  EXPECT_EQ(ask({"PROXY", "CONFIG", "SET", "workers", "2"}),
            "-ERR unknown subcommand 'CONFIG SET': only PROXY CONFIG GET is supported (edit the "
            "file, then PROXY RELOAD)");
}

TEST_F(AdminCommandsTest, ProxySlowlogGetListsNewestFirstWithTheShard) {
  record(
      {slowEntry(1, "GET", "s0"), slowEntry(2, "CLIENT ID", "-"), slowEntry(3, "MGET", "split:2")});
  EXPECT_EQ(ask({"PROXY", "SLOWLOG", "GET", "2"}),
            "[[:3, :1700000003, :3000, [\"MGET\"], \"127.0.0.1:5000\", \"app\", \"split:2\"], "
            "[:2, :1700000002, :2000, [\"CLIENT ID\"], \"127.0.0.1:5000\", \"app\", \"-\"]]");
  EXPECT_EQ(ask({"PROXY", "SLOWLOG", "LEN"}), ":3");
}

TEST_F(AdminCommandsTest, SlowlogGetIsRedisServersSixFieldsWithTheCommandsWordsSplit) {
  record({slowEntry(1, "GET", "s0"), slowEntry(2, "CLIENT ID", "-")});
  EXPECT_EQ(ask({"SLOWLOG", "GET"}),
            "[[:2, :1700000002, :2000, [\"CLIENT\", \"ID\"], \"127.0.0.1:5000\", \"app\"], "
            "[:1, :1700000001, :1000, [\"GET\"], \"127.0.0.1:5000\", \"app\"]]");
}

TEST_F(AdminCommandsTest, SlowlogGetCountsAreCappedByTheLogsLength) {
  record({slowEntry(1, "GET", "s0"), slowEntry(2, "GET", "s0"), slowEntry(3, "GET", "s0"),
          slowEntry(4, "GET", "s0")});
  Reply all = client_.command({"SLOWLOG", "GET", "-1"});
  ASSERT_TRUE(all != nullptr);
  EXPECT_EQ(all->elements, 3u);  // slowlog.max_len 3
  EXPECT_EQ(all->element[0]->element[0]->integer, 4);
  Reply many = client_.command({"PROXY", "SLOWLOG", "GET", "100"});
  ASSERT_TRUE(many != nullptr);
  EXPECT_EQ(many->elements, 3u);
  EXPECT_EQ(ask({"SLOWLOG", "GET", "0"}), "[]");
  EXPECT_EQ(ask({"SLOWLOG", "LEN"}), ":3");
}

TEST_F(AdminCommandsTest, SlowlogResetEmptiesTheLog) {
  record({slowEntry(1, "GET", "s0"), slowEntry(2, "GET", "s0")});
  EXPECT_EQ(ask({"PROXY", "SLOWLOG", "RESET"}), "+OK");
  EXPECT_EQ(ask({"PROXY", "SLOWLOG", "LEN"}), ":0");
  EXPECT_EQ(ask({"PROXY", "SLOWLOG", "GET"}), "[]");
  record({slowEntry(3, "GET", "s0")});
  EXPECT_EQ(ask({"SLOWLOG", "RESET"}), "+OK");
  EXPECT_EQ(ask({"SLOWLOG", "LEN"}), ":0");
}

TEST_F(AdminCommandsTest, ABadSlowlogCountIsRedisServersError) {
  for (const char* count : {"-2", "x", "1.5", "", "99999999999999999999"}) {
    EXPECT_EQ(ask({"SLOWLOG", "GET", count}), "-ERR count should be greater than or equal to -1")
        << "'" << count << "'";
    EXPECT_EQ(ask({"PROXY", "SLOWLOG", "GET", count}),
              "-ERR count should be greater than or equal to -1")
        << "'" << count << "'";
  }
}

TEST_F(AdminCommandsTest, ABadProxySlowlogCallNamesTheSubcommand) {
  EXPECT_EQ(ask({"PROXY", "SLOWLOG", "NOPE"}),
            "-ERR unknown subcommand or wrong number of arguments for 'SLOWLOG NOPE'. Try PROXY "
            "HELP.");
  EXPECT_EQ(ask({"PROXY", "SLOWLOG", "LEN", "1"}),
            "-ERR unknown subcommand or wrong number of arguments for 'SLOWLOG LEN'. Try PROXY "
            "HELP.");
  EXPECT_EQ(ask({"PROXY", "SLOWLOG", "GET", "1", "2"}),
            "-ERR unknown subcommand or wrong number of arguments for 'SLOWLOG GET'. Try PROXY "
            "HELP.");
}

TEST_F(AdminCommandsTest, SlowlogGetWithTwoCountsIsAnsweredAsRedisServerDoes) {
  // redis-server 7.0: the subcommand's arity (-2) lets it through, then the command refuses it.
  const std::vector<Reply> replies = client_.pipeline({{"SLOWLOG", "GET", "1", "2"}, {"PING"}});
  EXPECT_EQ(show(replies[0].get()),
            "-ERR unknown subcommand or wrong number of arguments for 'GET'. Try SLOWLOG HELP.");
  EXPECT_EQ(show(replies[1].get()), "+PONG");
}

TEST_F(AdminCommandsTest, AnUnknownProxySubcommandPointsAtHelp) {
  EXPECT_EQ(ask({"PROXY", "NOSUCH"}), "-ERR unknown subcommand 'NOSUCH'. Try PROXY HELP.");
}

TEST_F(AdminCommandsTest, InfoIsTheControlPlanesTextForTheLowercasedSection) {
  EXPECT_EQ(ask({"PROXY", "INFO", "SERVER"}), "\"# Fake\r\nsections:server\r\n\"");
  EXPECT_EQ(ask({"PROXY", "INFO"}), "\"# Fake\r\nsections:\r\n\"");
  EXPECT_EQ(harness_.control().infoRequests(), (std::vector<std::string>{"server", ""}));
}

TEST_F(AdminCommandsTest, HealthShowsBothPagesWithTheirStatus) {
  Reply r = client_.command({"PROXY", "HEALTH"});
  ASSERT_TRUE(r != nullptr);
  ASSERT_EQ(r->type, REDIS_REPLY_STRING);
  const std::string text = fakes::text(*r);
  EXPECT_TRUE(text.starts_with("# healthz (200)\nok: 1 worker serving\n# readyz (")) << text;
  EXPECT_NE(text.find(" of 2 shards have a healthy connection in every worker, 2 needed "
                      "(metrics.ready_quorum 100%)\n"),
            std::string::npos)
      << text;
}

}  // namespace
}  // namespace sp::session
