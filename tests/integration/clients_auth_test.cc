// Connection commands and client authentication through the proxy: HELLO 2 answers the server map
// (RESP3 clients: resp3_test.cc); CLIENT INFO / LIST / KILL / SETINFO / NO-EVICT, CONFIG GET,
// RESET; AUTH with auth.password and with named users (read-only users get -NOPERM for writes,
// admin commands need an admin user); unauthenticated clients may only AUTH/HELLO/QUIT and are
// held to small request sizes; passwords never reach the log.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "integration/clients_helpers.h"
#include "integration/harness.h"

namespace sp::test {
namespace {

using std::chrono::seconds;

constexpr const char* kAuthConfig = R"(auth:
  password: top-secret-default
  users:
    - name: reader
      password: reader-pass-1234
      read_only: true
    - name: writer
      password: writer-pass-5678
    - name: boss
      password: boss-pass-9012
      admin: true
)";

TEST(ConnectionCommandsTest, HelloClientConfigReset) {
  Deployment env(2);
  Client c(env.port());
  const std::string hello = c.cmd({"HELLO"});
  EXPECT_EQ(hello.rfind("[server, redis, version, ", 0), 0u) << hello;
  EXPECT_NE(hello.find("proto, (integer) 2, id, (integer) "), std::string::npos) << hello;
  EXPECT_NE(hello.find("mode, standalone, role, master, modules, []"), std::string::npos) << hello;
  EXPECT_EQ(c.cmd({"HELLO", "2", "SETNAME", "conn-a"}).rfind("[server, redis", 0), 0u);
  EXPECT_EQ(c.cmd({"CLIENT", "GETNAME"}), "conn-a");
  EXPECT_EQ(c.cmd({"HELLO", "4"}), "(error) NOPROTO unsupported protocol version");
  EXPECT_EQ(c.cmd({"HELLO", "x"}),
            "(error) ERR Protocol version is not an integer or out of range");
  if (env.direct()) {
    return;  // the rest describes the proxy's own clients (RESP3: resp3_test.cc)
  }
  EXPECT_EQ(c.cmd({"PING"}), "PONG");
  const std::string id = c.cmd({"CLIENT", "ID"}).substr(10);
  const std::string info = c.cmd({"CLIENT", "INFO"});
  EXPECT_EQ(info.rfind("id=" + id + " addr=127.0.0.1:", 0), 0u) << info;
  EXPECT_NE(info.find(" name=conn-a "), std::string::npos) << info;
  EXPECT_NE(info.find(" flags=N db=0 sub=0 psub=0 ssub=0 multi=-1 "), std::string::npos) << info;
  EXPECT_NE(info.find(" user=default "), std::string::npos) << info;
  EXPECT_EQ(c.cmd({"CLIENT", "SETINFO", "LIB-NAME", "mylib"}), "OK");
  EXPECT_EQ(c.cmd({"CLIENT", "NO-EVICT", "on"}), "OK");
  Client other(env.port());
  EXPECT_EQ(other.cmd({"MULTI"}), "OK");
  const std::string list = c.cmd({"CLIENT", "LIST"});
  EXPECT_NE(list.find("id=" + id + " "), std::string::npos) << list;
  EXPECT_NE(list.find(" flags=x "), std::string::npos) << "the other client is in MULTI: " << list;
  EXPECT_EQ(c.cmd({"CONFIG", "GET", "port"}), "[port, " + std::to_string(env.port()) + "]");
  EXPECT_EQ(c.cmd({"CONFIG", "RESETSTAT"}), "OK");
  EXPECT_EQ(c.cmd({"RESET"}), "RESET");
  EXPECT_EQ(c.cmd({"CLIENT", "GETNAME"}), "(nil)");
  // CLIENT KILL ID of another client on the same worker.
  EXPECT_EQ(other.cmd({"DISCARD"}), "OK");
  const std::string victim_id = other.cmd({"CLIENT", "ID"}).substr(10);
  EXPECT_EQ(c.cmd({"CLIENT", "KILL", "ID", victim_id}), "(integer) 1");
  EXPECT_EQ(other.cmd({"PING"}).rfind("(io-error)", 0), 0u);
}

// CLIENT SETINFO (Redis 7.2) is what ioredis, node-redis, redis-py and go-redis send first, on a
// connection that has run nothing else: it must be answered there too, not only once HELLO or
// AUTH has given the session its state.
TEST(ConnectionCommandsTest, ClientSetInfoOnAFreshConnection) {
  if (directMode()) {
    GTEST_SKIP() << "redis-server 7.0 has no CLIENT SETINFO";
  }
  Deployment env(2);
  Client c(env.port());
  EXPECT_EQ(c.cmd({"CLIENT", "SETINFO", "LIB-NAME", "node-redis"}), "OK");
  EXPECT_EQ(c.cmd({"client", "setinfo", "lib-ver", "4.7.1"}), "OK");
  EXPECT_EQ(c.cmd({"CLIENT", "SETINFO", "LIB-COLOR", "red"}),
            "(error) ERR Unrecognized option 'LIB-COLOR'");
  EXPECT_EQ(c.cmd({"CLIENT", "SETINFO", "LIB-NAME"}),
            "(error) ERR wrong number of arguments for 'client|setinfo' command");
  EXPECT_EQ(c.cmd({"CLIENT", "NOSUCH"}),
            "(error) ERR unknown subcommand 'NOSUCH'. Try CLIENT HELP.");
  EXPECT_EQ(c.cmd({"SET", "k", "v"}), "OK");
  EXPECT_EQ(c.cmd({"GET", "k"}), "v");
}

class AuthTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (directMode()) {
      GTEST_SKIP() << "proxy configuration";
    }
    shards_ = startShards(2);
    config_ = writeFile(dir_, "auth.yaml", kAuthConfig);
    proxy_ = std::make_unique<ProxyProcess>(
        shardList(shards_), 1,
        std::vector<std::string>{"--config", config_, "--log-level", "debug"});
  }
  uint16_t port() const { return proxy_->port(); }

  TempDir dir_;
  std::string config_;
  std::vector<std::unique_ptr<RedisServer>> shards_;
  std::unique_ptr<ProxyProcess> proxy_;
};

TEST_F(AuthTest, ClientsMustAuthenticateFirst) {
  Client c(port());
  EXPECT_EQ(c.cmd({"PING"}), "(error) NOAUTH Authentication required.");
  EXPECT_EQ(c.cmd({"GET", "k"}), "(error) NOAUTH Authentication required.");
  EXPECT_EQ(c.cmd({"MULTI"}), "(error) NOAUTH Authentication required.");
  EXPECT_EQ(c.cmd({"SUBSCRIBE", "ch"}), "(error) NOAUTH Authentication required.");
  EXPECT_EQ(c.cmd({"HELLO", "2"}).rfind("(error) NOAUTH HELLO must be called", 0), 0u);
  EXPECT_EQ(c.cmd({"AUTH", "wrong"}),
            "(error) WRONGPASS invalid username-password pair or user is disabled.");
  EXPECT_EQ(c.cmd({"AUTH", "reader", "top-secret-default"}),
            "(error) WRONGPASS invalid username-password pair or user is disabled.");
  EXPECT_EQ(c.cmd({"AUTH", "top-secret-default"}), "OK");
  EXPECT_EQ(c.cmd({"SET", "k", "v"}), "OK");
  EXPECT_EQ(c.cmd({"GET", "k"}), "v");
  EXPECT_EQ(c.cmd({"DBSIZE"}), "(integer) 1");
  EXPECT_EQ(c.cmd({"FLUSHALL"}), "OK");  // the default user has every right

  // HELLO with AUTH authenticates in one go; RESET forgets it.
  Client h(port());
  EXPECT_EQ(h.cmd({"HELLO", "2", "AUTH", "writer", "writer-pass-5678"}).rfind("[server", 0), 0u);
  EXPECT_EQ(h.cmd({"SET", "w", "1"}), "OK");
  EXPECT_EQ(h.cmd({"RESET"}), "RESET");
  EXPECT_EQ(h.cmd({"GET", "w"}), "(error) NOAUTH Authentication required.");
  EXPECT_EQ(h.cmd({"AUTH", "default", "top-secret-default"}), "OK");
  EXPECT_EQ(h.cmd({"GET", "w"}), "1");
}

TEST_F(AuthTest, ReadOnlyAndAdminUsers) {
  Client reader(port());
  ASSERT_EQ(reader.cmd({"AUTH", "reader", "reader-pass-1234"}), "OK");
  EXPECT_EQ(reader.cmd({"GET", "k"}), "(nil)");
  EXPECT_EQ(reader.cmd({"MGET", "a", "b"}), "[(nil), (nil)]");
  EXPECT_EQ(reader.cmd({"SET", "k", "v"}),
            "(error) NOPERM this user has no permissions to run the 'set' command");
  EXPECT_EQ(reader.cmd({"DEL", "k"}),
            "(error) NOPERM this user has no permissions to run the 'del' command");
  EXPECT_EQ(reader.cmd({"EVAL", "return 1", "0"}),
            "(error) NOPERM this user has no permissions to run the 'eval' command");
  EXPECT_EQ(reader.cmd({"EVAL_RO", "return 1", "0"}), "(integer) 1");
  EXPECT_EQ(reader.cmd({"MULTI"}), "OK");
  EXPECT_EQ(reader.cmd({"INCR", "{t}n"}),
            "(error) NOPERM this user has no permissions to run the 'incr' command");
  EXPECT_EQ(reader.cmd({"EXEC"}).rfind("(error) EXECABORT", 0), 0u);
  EXPECT_EQ(reader.cmd({"KEYS", "*"}),
            "(error) NOPERM this user has no permissions to run the 'keys' command");

  Client writer(port());
  ASSERT_EQ(writer.cmd({"AUTH", "writer", "writer-pass-5678"}), "OK");
  EXPECT_EQ(writer.cmd({"SET", "k", "v"}), "OK");
  EXPECT_EQ(writer.cmd({"FLUSHALL"}),
            "(error) NOPERM this user has no permissions to run the 'flushall' command");
  EXPECT_EQ(writer.cmd({"FLUSHDB"}),
            "(error) NOPERM this user has no permissions to run the 'flushdb' command");
  EXPECT_EQ(writer.cmd({"PROXY", "SHARDS"}),
            "(error) NOPERM this user has no permissions to run the 'proxy|shards' command");
  EXPECT_EQ(writer.cmd({"DBSIZE"}), "(integer) 1");

  Client boss(port());
  ASSERT_EQ(boss.cmd({"AUTH", "boss", "boss-pass-9012"}), "OK");
  EXPECT_EQ(boss.cmd({"KEYS", "*"}), "[k]");
  EXPECT_EQ(boss.cmd({"PROXY", "SHARDS"}).rfind("(error)", 0), std::string::npos);
  EXPECT_EQ(boss.cmd({"FLUSHALL"}), "OK");
  EXPECT_EQ(boss.cmd({"CLIENT", "INFO"}).find(" user=boss ") != std::string::npos, true);
}

TEST_F(AuthTest, UnauthenticatedRequestsAreSmall) {
  // Before AUTH a bulk argument may hold at most 16 KB (redis-server's limit too).
  {
    RawConn raw(port());
    ASSERT_TRUE(raw.sendAll("*2\r\n$3\r\nGET\r\n$20000\r\n"));
    std::string out;
    EXPECT_TRUE(raw.readToClose(&out, seconds(5)));
    EXPECT_EQ(out.rfind("-ERR Protocol error", 0), 0u) << out;
  }
  {
    RawConn raw(port());
    ASSERT_TRUE(raw.sendAll("*11\r\n"));
    std::string out;
    EXPECT_TRUE(raw.readToClose(&out, seconds(5)));
    EXPECT_EQ(out.rfind("-ERR Protocol error", 0), 0u) << out;
  }
  // Once authenticated, the configured limits apply.
  Client c(port());
  ASSERT_EQ(c.cmd({"AUTH", "top-secret-default"}), "OK");
  const std::string big(100000, 'x');
  EXPECT_EQ(c.cmd({"SET", "big", big}), "OK");
  EXPECT_EQ(c.cmd({"STRLEN", "big"}), "(integer) 100000");
}

TEST_F(AuthTest, PasswordsNeverReachTheLog) {
  {
    Client c(port());
    EXPECT_EQ(c.cmd({"AUTH", "writer", "guessed-wrong-4321"}).rfind("(error) WRONGPASS", 0), 0u);
    EXPECT_EQ(c.cmd({"AUTH", "writer", "writer-pass-5678"}), "OK");
    EXPECT_EQ(c.cmd({"HELLO", "2", "AUTH", "boss", "boss-pass-9012"}).rfind("[server", 0), 0u);
    EXPECT_EQ(c.cmd({"PING"}), "PONG");
  }
  const std::string log = proxy_->process().log();
  for (const char* secret : {"guessed-wrong-4321", "writer-pass-5678", "boss-pass-9012",
                             "top-secret-default", "reader-pass-1234"}) {
    EXPECT_EQ(log.find(secret), std::string::npos) << secret << " in:\n" << log;
  }
}

}  // namespace
}  // namespace sp::test
