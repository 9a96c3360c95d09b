// Slow commands and busy shards, with default settings: a script that runs longer than
// backend.timeout_ms returns its value and holds up no one else's request into an error; a shard
// busy in a runaway script answers BUSY to the health check and stays in service; SCRIPT KILL and
// FUNCTION KILL reach it on connections of their own. Redis' own replies are the reference.
#include <gtest/gtest.h>
#include <hiredis/hiredis.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "integration/clients_helpers.h"
#include "integration/harness.h"

namespace sp::test {
namespace {

using Clock = std::chrono::steady_clock;

// A Lua script that spins for ARGV[1] milliseconds (by the shard's own clock) and returns "done".
constexpr const char* kSpin =
    "local t0 = redis.call('TIME') "
    "local limit = tonumber(ARGV[1]) * 1000 "
    "while true do "
    "  local t = redis.call('TIME') "
    "  if (t[1] - t0[1]) * 1000000 + (t[2] - t0[2]) >= limit then break end "
    "end "
    "return 'done'";

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) {
    ++n;
  }
  return n;
}

// Requests the proxy has sent to shard `index` (INFO shards "requests=", health PINGs not
// counted), -1 when the line is missing.
long long shardRequests(Client& c, int index) {
  const std::string info = c.cmd({"INFO", "shards"});
  const size_t line = info.find("shard" + std::to_string(index) + ":addr=");
  const size_t at = line == std::string::npos ? line : info.find(",requests=", line);
  return at == std::string::npos ? -1 : std::stoll(info.substr(at + 10));
}

TEST(BusyShardTest, LongScriptAnswersAndOtherClientsSeeNoErrors) {
  if (directMode()) {
    GTEST_SKIP() << "proxy only";
  }
  Deployment env(2, 1);
  const std::string key = keyOnShard(0, 2, "spin");
  std::atomic<bool> script_done{false};
  std::string script_reply;
  std::thread script([&] {
    Client c(env.port());
    script_reply = c.cmd({"EVAL", kSpin, "1", key, "1500"});
    script_done = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  // Eight clients pipeline GETs of keys on the same shard while the script runs: their requests
  // wait behind it on the shared connection, as they would wait on redis-server itself.
  std::atomic<uint64_t> errors{0};
  std::atomic<uint64_t> replies{0};
  std::string first_error;
  std::vector<std::thread> others;
  for (int t = 0; t < 8; ++t) {
    others.emplace_back([&, t] {
      Client c(env.port());
      const std::string k = keyOnShard(0, 2, "other" + std::to_string(t));
      for (int round = 0; round < 400 && (!script_done || round < 2); ++round) {
        for (int i = 0; i < 16; ++i) {
          redisAppendCommand(c.ctx(), "GET %s", k.c_str());
        }
        for (int i = 0; i < 16; ++i) {
          redisReply* r = nullptr;
          if (redisGetReply(c.ctx(), reinterpret_cast<void**>(&r)) != REDIS_OK || r == nullptr) {
            ++errors;
            return;
          }
          if (r->type == REDIS_REPLY_ERROR) {
            if (errors++ == 0) {
              first_error = r->str;
            }
          }
          ++replies;
          freeReplyObject(r);
        }
      }
    });
  }
  script.join();
  for (auto& t : others) {
    t.join();
  }
  EXPECT_EQ(script_reply, "done");
  EXPECT_EQ(errors.load(), 0u) << first_error;
  EXPECT_GT(replies.load(), 8u * 16u);
  Client c(env.port());
  const std::string shards = c.cmd({"INFO", "shards"});
  EXPECT_EQ(count(shards, ",timeouts=0,"), 2u) << shards;
  EXPECT_EQ(count(shards, ",ejections=0,"), 2u) << shards;
}

TEST(BusyShardTest, RunawayScriptIsKilledThroughTheProxyAndTheShardIsNeverEjected) {
  if (directMode()) {
    GTEST_SKIP() << "proxy only";
  }
  Deployment env(2, 2);
  RedisServer& shard0 = *env.shards()[0];
  Client direct(shard0.port());
  // redis-server answers BUSY (and serves SCRIPT KILL) once a script has run this long.
  ASSERT_EQ(direct.cmd({"CONFIG", "SET", "busy-reply-threshold", "300"}), "OK");
  const std::string not_busy = direct.cmd({"SCRIPT", "KILL"});
  ASSERT_EQ(not_busy.rfind("(error) NOTBUSY", 0), 0u) << not_busy;
  const std::string fn_not_busy = direct.cmd({"FUNCTION", "KILL"});
  ASSERT_EQ(fn_not_busy.rfind("(error) NOTBUSY", 0), 0u) << fn_not_busy;

  Client c(env.port());
  // Nothing runs: the shards' own NOTBUSY.
  EXPECT_EQ(c.cmd({"SCRIPT", "KILL"}), not_busy);
  EXPECT_EQ(c.cmd({"FUNCTION", "KILL"}), fn_not_busy);

  const std::string key = keyOnShard(0, 2, "runaway");
  std::string script_reply;
  std::atomic<bool> script_done{false};
  Clock::time_point script_end;
  std::thread script([&] {
    Client s(env.port());
    script_reply = s.cmd({"EVAL", kSpin, "1", key, "60000"});
    script_end = Clock::now();
    script_done = true;
  });
  // Well past failure_limit (3) health checks at 1 s: each is answered BUSY by the shard.
  std::this_thread::sleep_for(std::chrono::milliseconds(3800));
  ASSERT_FALSE(script_done.load());
  const std::string during = c.cmd({"INFO", "shards"});
  EXPECT_EQ(count(during, ",ejections=0,"), 2u) << during;
  EXPECT_EQ(during.find("state=ejected"), std::string::npos) << during;
  EXPECT_EQ(count(during, ",ping_busy=0,"), 1u) << during;  // shard1 is not busy; shard0 is
  const auto killed_at = Clock::now();
  EXPECT_EQ(c.cmd({"SCRIPT", "KILL"}), "OK");
  script.join();
  const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(script_end - killed_at);
  EXPECT_LT(took.count(), 5000);
  EXPECT_NE(script_reply.find("Script killed by user with SCRIPT KILL"), std::string::npos)
      << script_reply;
  EXPECT_EQ(c.cmd({"SCRIPT", "KILL"}), not_busy);
  // Straight back in service for every client.
  EXPECT_EQ(c.cmd({"SET", key, "after"}), "OK");
  EXPECT_EQ(c.cmd({"GET", key}), "after");
  const std::string after = c.cmd({"INFO", "shards"});
  EXPECT_EQ(count(after, ",ejections=0,"), 2u) << after;
  EXPECT_TRUE(env.proxy()->process().alive());
}

TEST(BusyShardTest, FunctionKillStopsARunawayFunction) {
  if (directMode()) {
    GTEST_SKIP() << "proxy only";
  }
  Deployment env(2, 1);
  Client direct(env.shards()[1]->port());
  ASSERT_EQ(direct.cmd({"CONFIG", "SET", "busy-reply-threshold", "300"}), "OK");
  Client c(env.port());
  std::string body = kSpin;
  body.replace(body.find("ARGV[1]"), 7, "args[1]");
  const std::string lib =
      "#!lua name=spinlib\nredis.register_function('spin', function(keys, args) " + body + " end)";
  // FUNCTION LOAD goes to every shard.
  ASSERT_EQ(c.cmd({"FUNCTION", "LOAD", lib}), "spinlib");
  const std::string key = keyOnShard(1, 2, "fspin");
  std::string reply;
  std::thread fn([&] {
    Client s(env.port());
    reply = s.cmd({"FCALL", "spin", "1", key, "60000"});
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(800));
  EXPECT_EQ(c.cmd({"FUNCTION", "KILL"}), "OK");
  fn.join();
  EXPECT_NE(reply.find("killed"), std::string::npos) << reply;
  EXPECT_EQ(c.cmd({"GET", key}), "(nil)");
}

// A stall fails only the requests already written to the shard. Here a 32 MB SET fills the socket
// buffers of a SIGSTOPped shard, so a GET that arrives after it is still in the proxy, unwritten:
// when the stall is declared the SET fails, and the GET goes out on the new connection and, once
// the shard runs again, gets the real value.
TEST(BusyShardTest, AStallFailsOnlyWhatWasSent) {
  if (directMode()) {
    GTEST_SKIP() << "proxy only";
  }
  auto shards = startShards(2);
  TempDir dir;
  std::string conf = "shards:\n";
  for (size_t i = 0; i < shards.size(); ++i) {
    conf += "  - address: " + shards[i]->address() + "\n";
  }
  // No health PINGs while the shard is stopped: a PING's own timeout would fail the connection
  // at a moment set by the PING clock, not by the SET, and in a slow (sanitizer) build before the
  // proxy has even read the whole SET. Here only the SET's stall may fail it.
  conf +=
      "backend:\n  timeout_ms: 1000\n  reconnect_min_ms: 100\n  ping_interval_ms: 600000\n"
      "metrics:\n  listen: \"\"\n";
  ProxyProcess proxy("", 1, {"--config", writeFile(dir, "proxy.yaml", conf)});
  const std::string big_key = keyOnShard(0, 2, "stallbig");
  const std::string key = keyOnShard(0, 2, "stallsmall");
  {
    Client c(proxy.port());
    ASSERT_EQ(c.cmd({"SET", key, "before"}), "OK");
  }
  Client info(proxy.port());
  const long long requests_before = shardRequests(info, 0);
  shards[0]->pause();
  RawConn a(proxy.port());
  RawConn b(proxy.port());
  const std::string value(32u << 20, 'v');
  std::thread writer([&] {
    a.sendAll("*3\r\n$3\r\nSET\r\n$" + std::to_string(big_key.size()) + "\r\n" + big_key + "\r\n$" +
              std::to_string(value.size()) + "\r\n" + value + "\r\n");
  });
  writer.join();
  // The proxy has read the whole SET and queued it for the shard (which takes only what its
  // socket buffers hold): only then may the GET arrive, or it could be written first.
  ASSERT_TRUE(eventually([&] { return shardRequests(info, 0) == requests_before + 1; }))
      << info.cmd({"INFO", "shards"});
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  ASSERT_TRUE(
      b.sendAll("*2\r\n$3\r\nGET\r\n$" + std::to_string(key.size()) + "\r\n" + key + "\r\n"));
  const std::string failed = a.readUntil("\r\n", std::chrono::milliseconds(5000));
  EXPECT_NE(failed.find("unavailable: timeout after 1000 ms"), std::string::npos) << failed;
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // reconnected, GET written
  shards[0]->resume();
  const std::string got = b.readUntil("before\r\n", std::chrono::milliseconds(5000));
  EXPECT_EQ(got, "$6\r\nbefore\r\n");
  EXPECT_TRUE(proxy.process().alive());
}

}  // namespace
}  // namespace sp::test
