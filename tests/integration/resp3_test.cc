// RESP3 clients through the proxy, byte for byte against a redis-server of their own: HELLO 3
// and back, shard replies passed through (maps, sets, doubles, nulls), the replies the proxy
// merges or builds itself (MGET, DEL/EXISTS sums, DBSIZE, KEYS, SCAN, CONFIG GET, INFO, CLIENT
// INFO / LIST / GETNAME, PUBSUB, SCRIPT EXISTS, errors), pub/sub pushes with commands on the
// subscribed connection, transactions and blocking commands. RESP2 clients of the same proxy
// keep getting RESP2.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "integration/clients_helpers.h"
#include "integration/harness.h"
#include "resp/reply_scanner.h"

namespace sp::test {
namespace {

using namespace std::chrono_literals;

// A raw connection that reads whole replies (pushes included), in the order they arrive.
class Resp3Conn {
 public:
  explicit Resp3Conn(uint16_t port) : raw_(port) {}

  std::string call(const std::vector<std::string>& argv) {
    EXPECT_TRUE(raw_.sendAll(encodeCommand(argv)));
    return next();
  }
  void send(const std::vector<std::string>& argv) {
    EXPECT_TRUE(raw_.sendAll(encodeCommand(argv)));
  }

  // The next complete reply, "(timeout)" when none came within 5 s.
  std::string next(std::chrono::milliseconds timeout = 5000ms) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (true) {
      resp::ReplyScanner scanner;
      resp::ReplyInfo info;
      size_t used = 0;
      if (!buffer_.empty() && scanner.scan(buffer_, &used, &info) == resp::ParseStatus::kOk) {
        std::string reply = buffer_.substr(0, used);
        buffer_.erase(0, used);
        return reply;
      }
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      if (left <= 0ms || raw_.readSome(&buffer_, left) != RawConn::Read::kData) {
        return "(timeout)";
      }
    }
  }

 private:
  RawConn raw_;
  std::string buffer_;
};

// The bulk strings of a reply, in order (keys of a KEYS or SCAN page).
std::vector<std::string> bulks(std::string_view reply) {
  std::vector<std::string> out;
  size_t at = 0;
  while ((at = reply.find("\r\n$", at)) != std::string_view::npos) {
    at += 3;
    const size_t eol = reply.find("\r\n", at);
    const size_t len = std::stoul(std::string(reply.substr(at, eol - at)));
    out.emplace_back(reply.substr(eol + 2, len));
    at = eol + 2 + len;
  }
  return out;
}

class Resp3Test : public ::testing::Test {
 protected:
  void SetUp() override {
    if (directMode()) {
      GTEST_SKIP() << "compares the proxy with a redis-server of its own";
    }
    env_ = std::make_unique<Deployment>(3, 2);
    ref_server_ = std::make_unique<RedisServer>();
    proxy_ = std::make_unique<Resp3Conn>(env_->port());
    ref_ = std::make_unique<Resp3Conn>(ref_server_->port());
    proxy_->call({"HELLO", "3"});
    ref_->call({"HELLO", "3"});
  }

  // The same command on both sides: the proxy's reply, after checking it equals redis-server's.
  std::string same(const std::vector<std::string>& argv) {
    const std::string got = proxy_->call(argv);
    const std::string want = ref_->call(argv);
    EXPECT_EQ(got, want) << argv[0] << (argv.size() > 1 ? " " + argv[1] : "");
    return got;
  }

  std::unique_ptr<Deployment> env_;
  std::unique_ptr<RedisServer> ref_server_;
  std::unique_ptr<Resp3Conn> proxy_;
  std::unique_ptr<Resp3Conn> ref_;
};

TEST_F(Resp3Test, HelloSwitchesProtocolBothWays) {
  Resp3Conn c(env_->port());
  std::string hello = c.call({"HELLO", "3", "SETNAME", "r3"});
  EXPECT_EQ(hello.rfind("%7\r\n$6\r\nserver\r\n$5\r\nredis\r\n$7\r\nversion\r\n", 0), 0u) << hello;
  EXPECT_NE(hello.find("$5\r\nproto\r\n:3\r\n"), std::string::npos) << hello;
  EXPECT_EQ(c.call({"GET", "resp3:none"}), "_\r\n");
  EXPECT_EQ(c.call({"CLIENT", "GETNAME"}), "$2\r\nr3\r\n");
  // HELLO without a version reports the protocol in use, in it.
  EXPECT_NE(c.call({"HELLO"}).find("$5\r\nproto\r\n:3\r\n"), std::string::npos);
  hello = c.call({"HELLO", "2"});
  EXPECT_EQ(hello.rfind("*14\r\n", 0), 0u) << hello;
  EXPECT_EQ(c.call({"GET", "resp3:none"}), "$-1\r\n");
  c.call({"HELLO", "3"});
  EXPECT_EQ(c.call({"RESET"}), "+RESET\r\n");
  EXPECT_EQ(c.call({"GET", "resp3:none"}), "$-1\r\n");  // RESET is back to RESP2
  // A RESP2 client of the same proxy is untouched.
  Client plain(env_->port());
  EXPECT_EQ(plain.cmd({"HSET", "resp3:h", "f", "v"}), "(integer) 1");
  EXPECT_EQ(plain.cmd({"HGETALL", "resp3:h"}), "[f, v]");
}

TEST_F(Resp3Test, ShardRepliesPassThroughInEveryType) {
  same({"HSET", "h", "a", "1", "b", "2"});
  EXPECT_EQ(same({"HGETALL", "h"}).substr(0, 4), "%2\r\n");
  same({"ZADD", "z", "1.5", "m", "2", "n"});
  EXPECT_EQ(same({"ZSCORE", "z", "m"}), ",1.5\r\n");
  same({"ZRANGE", "z", "0", "-1", "WITHSCORES"});
  same({"SADD", "s", "x"});
  EXPECT_EQ(same({"SMEMBERS", "s"}), "~1\r\n$1\r\nx\r\n");
  EXPECT_EQ(same({"GET", "missing"}), "_\r\n");
  same({"XADD", "st", "1-1", "f", "v"});
  same({"XINFO", "STREAM", "st"});
  same({"OBJECT", "ENCODING", "h"});
  EXPECT_EQ(same({"EVAL", "return {1, 'two', {3}}", "0"}).substr(0, 4), "*3\r\n");
  same({"EVAL", "return redis.call('hgetall', KEYS[1])", "1", "h"});
  same({"BLPOP", "empty-list", "0.05"});  // a null on timeout, on a dedicated connection
  same({"LPOS", "empty-list", "x"});
  same({"SET", "k", "v", "GET"});
  same({"HGET", "h", "zz"});
  // Errors are the same in both protocols.
  same({"LPUSH", "h", "x"});
  same({"GET"});
}

TEST_F(Resp3Test, MergedAndLocalRepliesAreRedisServersRESP3) {
  // Keys on every shard: the proxy splits and merges these.
  const std::string a = keyOnShard(0, 3, "r3a:");
  const std::string b = keyOnShard(1, 3, "r3b:");
  const std::string c = keyOnShard(2, 3, "r3c:");
  EXPECT_EQ(same({"MSET", a, "1", b, "2", c, "3"}), "+OK\r\n");
  EXPECT_EQ(same({"MGET", a, "nope", b, c, "nope2"}),
            "*5\r\n$1\r\n1\r\n_\r\n$1\r\n2\r\n$1\r\n3\r\n_\r\n");
  EXPECT_EQ(same({"EXISTS", a, b, c, "nope"}), ":3\r\n");
  EXPECT_EQ(same({"DBSIZE"}), ":3\r\n");
  EXPECT_EQ(same({"KEYS", "r3b:*"}), "*1\r\n$" + std::to_string(b.size()) + "\r\n" + b + "\r\n");
  // KEYS and a whole SCAN over every shard: the same keys as redis-server's KEYS.
  std::vector<std::string> want = bulks(ref_->call({"KEYS", "*"}));
  std::sort(want.begin(), want.end());
  std::vector<std::string> keys = bulks(proxy_->call({"KEYS", "*"}));
  std::sort(keys.begin(), keys.end());
  EXPECT_EQ(keys, want);
  std::set<std::string> scanned;
  std::string cursor = "0";
  for (int pages = 0; pages < 100; ++pages) {
    const std::string page = proxy_->call({"SCAN", cursor, "COUNT", "100"});
    ASSERT_EQ(page.rfind("*2\r\n$", 0), 0u) << page;
    std::vector<std::string> items = bulks(page);
    ASSERT_FALSE(items.empty());
    cursor = items[0];
    scanned.insert(items.begin() + 1, items.end());
    if (cursor == "0") {
      break;
    }
  }
  EXPECT_EQ(cursor, "0");
  EXPECT_EQ(std::vector<std::string>(scanned.begin(), scanned.end()), want);
  EXPECT_EQ(same({"DEL", a, b, "nope"}), ":2\r\n");
  same({"SCRIPT", "EXISTS", "0000000000000000000000000000000000000000"});
  same({"PUBSUB", "NUMSUB", "ch1", "ch2"});
  same({"PUBSUB", "CHANNELS"});
  EXPECT_EQ(same({"CLIENT", "GETNAME"}), "_\r\n");
  same({"ECHO", "hi"});
  same({"PING"});
  // COMMAND from the proxy's table (generated from the same redis-server version): sets, maps
  // and the empty set of a command without subcommands, as redis-server sends them.
  EXPECT_EQ(same({"COMMAND", "INFO", "get", "nosuch"}).substr(0, 4), "*2\r\n");
  const std::string config = proxy_->call({"COMMAND", "INFO", "config"});
  // (Its subcommands come in the table's order, not the server's.)
  EXPECT_EQ(config.rfind("*1\r\n*10\r\n$6\r\nconfig\r\n:-2\r\n~0\r\n:0\r\n:0\r\n:0\r\n~1\r\n+@slow"
                         "\r\n~0\r\n~0\r\n*5\r\n*10\r\n",
                         0),
            0u)
      << config;
  const std::string docs = proxy_->call({"COMMAND", "DOCS", "get"});
  EXPECT_EQ(docs.rfind("%1\r\n$3\r\nget\r\n%", 0), 0u) << docs;
  // Built by the proxy from its own state: redis-server's types, the proxy's values.
  const std::string maxclients = proxy_->call({"CONFIG", "GET", "maxclients"});
  EXPECT_EQ(maxclients.rfind("%1\r\n$10\r\nmaxclients\r\n$", 0), 0u) << maxclients;
  const std::string info = proxy_->call({"INFO", "server"});
  EXPECT_EQ(info.rfind("=", 0), 0u) << info.substr(0, 40);
  EXPECT_NE(info.find("\r\ntxt:# Server\r\n"), std::string::npos) << info.substr(0, 40);
  const std::string client = proxy_->call({"CLIENT", "INFO"});
  EXPECT_EQ(client.rfind("=", 0), 0u) << client;
  EXPECT_NE(client.find("\r\ntxt:id="), std::string::npos) << client;
  EXPECT_NE(client.find(" resp=3\n"), std::string::npos) << client;
  const std::string list = proxy_->call({"CLIENT", "LIST"});
  EXPECT_EQ(list.rfind("=", 0), 0u) << list;
  EXPECT_NE(list.find(" resp=3\n"), std::string::npos) << list;
}

TEST_F(Resp3Test, PubSubPushesAndCommandsOnTheSubscribedConnection) {
  EXPECT_EQ(same({"SUBSCRIBE", "news"}), ">3\r\n$9\r\nsubscribe\r\n$4\r\nnews\r\n:1\r\n");
  same({"PSUBSCRIBE", "n*"});
  // RESP3 allows any command while subscribed.
  same({"SET", "sub:k", "v"});
  EXPECT_EQ(same({"GET", "sub:k"}), "$1\r\nv\r\n");
  EXPECT_EQ(same({"PING"}), "+PONG\r\n");
  Client publisher(env_->port());
  Client ref_publisher(ref_server_->port());
  EXPECT_EQ(publisher.cmd({"PUBLISH", "news", "hello"}), "(integer) 2");
  EXPECT_EQ(ref_publisher.cmd({"PUBLISH", "news", "hello"}), "(integer) 2");
  const std::string message = proxy_->next();
  EXPECT_EQ(message, ref_->next());
  EXPECT_EQ(message, ">3\r\n$7\r\nmessage\r\n$4\r\nnews\r\n$5\r\nhello\r\n");
  const std::string pmessage = proxy_->next();
  EXPECT_EQ(pmessage, ref_->next());
  EXPECT_EQ(pmessage.rfind(">4\r\n$8\r\npmessage\r\n", 0), 0u) << pmessage;
  same({"UNSUBSCRIBE", "news"});
  same({"PUNSUBSCRIBE"});
  EXPECT_EQ(same({"UNSUBSCRIBE"}), ">3\r\n$11\r\nunsubscribe\r\n_\r\n:0\r\n");
  // A RESP2 subscriber of the same proxy still gets arrays.
  Resp3Conn plain(env_->port());
  EXPECT_EQ(plain.call({"SUBSCRIBE", "news"}), "*3\r\n$9\r\nsubscribe\r\n$4\r\nnews\r\n:1\r\n");
}

TEST_F(Resp3Test, APublishToItselfArrivesBeforeItsReplyAndBeforeAReset) {
  same({"SUBSCRIBE", "self"});
  same({"PSUBSCRIBE", "s*"});
  // One write: the message (twice: channel and pattern) comes before PUBLISH's reply, and RESET
  // right behind it loses nothing.
  for (Resp3Conn* c : {proxy_.get(), ref_.get()}) {
    c->send({"GET", "self:k"});
    c->send({"PUBLISH", "self", "me"});
    c->send({"RESET"});
  }
  for (int i = 0; i < 5; ++i) {
    const std::string got = proxy_->next();
    EXPECT_EQ(got, ref_->next()) << i;
  }
  EXPECT_EQ(proxy_->next(200ms), "(timeout)");
}

TEST_F(Resp3Test, TransactionsAndBlockingCommands) {
  same({"WATCH", "{t}a"});
  same({"MULTI"});
  same({"SET", "{t}a", "1"});
  same({"HSET", "{t}h", "f", "v"});
  same({"HGETALL", "{t}h"});
  same({"INCRBYFLOAT", "{t}f", "1.5"});
  // EXEC's array holds the RESP3 replies: a map, a bulk (INCRBYFLOAT answers a bulk string).
  EXPECT_EQ(same({"EXEC"}).rfind("*4\r\n+OK\r\n:1\r\n%1\r\n", 0), 0u);
  // BLPOP woken by another client.
  proxy_->send({"BLPOP", "{t}q", "5"});
  ref_->send({"BLPOP", "{t}q", "5"});
  Client pusher(env_->port());
  Client ref_pusher(ref_server_->port());
  EXPECT_EQ(pusher.cmd({"LPUSH", "{t}q", "job"}), "(integer) 1");
  EXPECT_EQ(ref_pusher.cmd({"LPUSH", "{t}q", "job"}), "(integer) 1");
  const std::string woken = proxy_->next();
  EXPECT_EQ(woken, ref_->next());
  EXPECT_EQ(woken, "*2\r\n$4\r\n{t}q\r\n$3\r\njob\r\n");
}

TEST_F(Resp3Test, HelloWhileWatchingSwitchesTheWatchConnectionToo) {
  Resp3Conn proxy(env_->port());
  Resp3Conn ref(ref_server_->port());
  for (Resp3Conn* c : {&proxy, &ref}) {
    EXPECT_EQ(c->call({"WATCH", "{w}k"}), "+OK\r\n");
    c->call({"HELLO", "3"});
    EXPECT_EQ(c->call({"GET", "{w}k"}), "_\r\n");
    EXPECT_EQ(c->call({"MULTI"}), "+OK\r\n");
    EXPECT_EQ(c->call({"GET", "{w}k"}), "+QUEUED\r\n");
    EXPECT_EQ(c->call({"EXEC"}), "*1\r\n_\r\n");
    // HELLO inside MULTI: refused and the transaction aborted (redis-server would queue it).
    c->call({"HELLO", "2"});
  }
  EXPECT_EQ(proxy.call({"MULTI"}), "+OK\r\n");
  const std::string refused = proxy.call({"HELLO", "2"});
  EXPECT_EQ(refused.rfind("-ERR", 0), 0u) << refused;
  EXPECT_EQ(proxy.call({"EXEC"}).rfind("-EXECABORT", 0), 0u);
}

TEST_F(Resp3Test, ClientTrackingIsRefusedWithItsReason) {
  const std::string reply = proxy_->call({"CLIENT", "TRACKING", "on"});
  EXPECT_EQ(reply.rfind("-ERR command 'client tracking' is not supported by shardproxy", 0), 0u)
      << reply;
  EXPECT_NE(reply.find("invalidation"), std::string::npos) << reply;
  EXPECT_EQ(proxy_->call({"PING"}), "+PONG\r\n");  // and nothing waits for pushes
}

}  // namespace
}  // namespace sp::test
