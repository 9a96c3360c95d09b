// CLIENT LIST / INFO / KILL / NO-EVICT (session/client_commands.h), over loopback against one
// worker on two fake shards with several clients: LIST shows every client in id order with its
// name, last command, flags and subscription and transaction counts, filtered by TYPE or ID; INFO
// describes the caller; KILL by ID, by address (the old form) and with SKIPME closes the clients
// it names and says how many; bad filters are refused with redis-server 7's words.
#include <gtest/gtest.h>

#include <chrono>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "fakes/fake_shards.h"
#include "fakes/redis_client.h"
#include "fakes/worker_harness.h"

namespace sp::session {
namespace {

using fakes::RedisClient;
using fakes::Reply;
using fakes::text;
using fakes::WorkerHarness;

// The value of `name`=... in a CLIENT LIST line ("" when absent).
std::string field(const std::string& line, const std::string& name) {
  std::istringstream words(line);
  std::string word;
  while (words >> word) {
    if (word.starts_with(name + "=")) {
      return word.substr(name.size() + 1);
    }
  }
  return "";
}

std::vector<std::string> lines(const std::string& list) {
  std::vector<std::string> out;
  std::istringstream in(list);
  std::string line;
  while (std::getline(in, line)) {
    out.push_back(line);
  }
  return out;
}

class ClientCommandsTest : public ::testing::Test {
 protected:
  std::string reply(RedisClient& client, const std::vector<std::string>& argv) {
    Reply r = client.command(argv);
    if (r == nullptr) {
      return "(no reply)";
    }
    return r->type == REDIS_REPLY_INTEGER ? std::to_string(r->integer) : text(*r);
  }
  std::string idOf(RedisClient& client) { return reply(client, {"CLIENT", "ID"}); }
  // True once `asking` sees `n` clients in CLIENT LIST, within 10 s.
  bool clientsBecome(RedisClient& asking, size_t n) {
    for (int i = 0; i < 1000; ++i) {
      if (lines(reply(asking, {"CLIENT", "LIST"})).size() == n) {
        return true;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
  }

  fakes::FakeShards shards_{2, [](const std::string& what) { ADD_FAILURE() << what; }};
  WorkerHarness harness_{shards_.topology(), fakes::noPings, WorkerHarness::Listen::kLoopback};
  RedisClient a_{harness_.port()};
  RedisClient b_{harness_.port()};
};

TEST_F(ClientCommandsTest, ListShowsEveryClientInIdOrderWithItsNameAndLastCommand) {
  const std::string a = idOf(a_);
  const std::string b = idOf(b_);
  EXPECT_EQ(reply(a_, {"CLIENT", "SETNAME", "alpha"}), "OK");
  EXPECT_EQ(reply(b_, {"PING"}), "PONG");
  const std::vector<std::string> got = lines(reply(a_, {"CLIENT", "LIST"}));
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(field(got[0], "id"), a);
  EXPECT_EQ(field(got[0], "name"), "alpha");
  EXPECT_EQ(field(got[0], "cmd"), "client|list");
  EXPECT_EQ(field(got[0], "laddr"), "127.0.0.1:" + std::to_string(harness_.port()));
  EXPECT_EQ(field(got[1], "id"), b);
  EXPECT_EQ(field(got[1], "name"), "");
  EXPECT_EQ(field(got[1], "cmd"), "ping");
  EXPECT_EQ(field(got[1], "flags"), "N");
}

TEST_F(ClientCommandsTest, ListTypeKeepsSubscribersApartFromNormalClients) {
  const std::string a = idOf(a_);
  const std::string b = idOf(b_);
  Reply sub = b_.command({"SUBSCRIBE", "news", "sport"});
  ASSERT_TRUE(sub != nullptr);
  const std::vector<std::string> pubsub = lines(reply(a_, {"CLIENT", "LIST", "TYPE", "pubsub"}));
  ASSERT_EQ(pubsub.size(), 1u);
  EXPECT_EQ(field(pubsub[0], "id"), b);
  EXPECT_EQ(field(pubsub[0], "flags"), "P");
  EXPECT_EQ(field(pubsub[0], "sub"), "2");
  EXPECT_EQ(field(pubsub[0], "psub"), "0");
  const std::vector<std::string> normal = lines(reply(a_, {"CLIENT", "LIST", "TYPE", "NORMAL"}));
  ASSERT_EQ(normal.size(), 1u);
  EXPECT_EQ(field(normal[0], "id"), a);
}

TEST_F(ClientCommandsTest, ListIdShowsOnlyTheNamedClients) {
  idOf(a_);
  const std::string b = idOf(b_);
  const std::vector<std::string> got = lines(reply(a_, {"CLIENT", "LIST", "ID", b, "999999"}));
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(field(got[0], "id"), b);
}

// redis-server 7.0 reads the ids as integers and lists the clients that have one of them: an id
// no client can have (0, negative) matches nothing, it is not an error.
TEST_F(ClientCommandsTest, ListIdThatNoClientCanHaveIsAnEmptyList) {
  EXPECT_EQ(reply(a_, {"CLIENT", "LIST", "ID", "0"}), "");
  EXPECT_EQ(reply(a_, {"CLIENT", "LIST", "ID", "-3"}), "");
}

TEST_F(ClientCommandsTest, ListRefusesBadFiltersInRedisServersWords) {
  EXPECT_EQ(reply(a_, {"CLIENT", "LIST", "TYPE", "bogus"}), "ERR Unknown client type 'bogus'");
  EXPECT_EQ(reply(a_, {"CLIENT", "LIST", "ID", "x"}), "ERR Invalid client ID");
  EXPECT_EQ(reply(a_, {"CLIENT", "LIST", "foo"}), "ERR syntax error");
}

TEST_F(ClientCommandsTest, AClientInATransactionShowsItsQueuedCount) {
  const std::string b = idOf(b_);
  const std::string key = fakes::keysOn(*shards_.topology(), 0, 1)[0];
  const std::vector<Reply> queued = b_.pipeline({{"MULTI"}, {"SET", key, "1"}, {"GET", key}});
  ASSERT_TRUE(fakes::allAnswered(queued));
  EXPECT_EQ(text(*queued[2]), "QUEUED");
  const std::vector<std::string> got = lines(reply(a_, {"CLIENT", "LIST", "ID", b}));
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(field(got[0], "flags"), "x");
  EXPECT_EQ(field(got[0], "multi"), "2");
  EXPECT_EQ(field(lines(reply(a_, {"CLIENT", "INFO"}))[0], "multi"), "-1");
}

TEST_F(ClientCommandsTest, InfoDescribesTheCaller) {
  const std::string a = idOf(a_);
  const std::string info = reply(a_, {"CLIENT", "INFO"});
  ASSERT_TRUE(info.ends_with("\n")) << info;
  EXPECT_EQ(lines(info).size(), 1u);
  EXPECT_TRUE(info.starts_with("id=" + a + " addr=127.0.0.1:")) << info;
  EXPECT_EQ(field(info, "cmd"), "client|info");
  EXPECT_EQ(field(info, "db"), "0");
  EXPECT_EQ(field(info, "user"), "default");
  EXPECT_EQ(field(info, "resp"), "2");
  EXPECT_EQ(field(info, "addr"), field(lines(reply(b_, {"CLIENT", "LIST", "ID", a}))[0], "addr"));
}

TEST_F(ClientCommandsTest, KillByIdClosesThatClientAndCountsIt) {
  const std::string b = idOf(b_);
  EXPECT_EQ(reply(a_, {"CLIENT", "KILL", "ID", b}), "1");
  EXPECT_TRUE(clientsBecome(a_, 1));
  EXPECT_TRUE(b_.command({"PING"}) == nullptr);
  EXPECT_EQ(reply(a_, {"CLIENT", "KILL", "ID", b}), "0");  // gone already
  EXPECT_EQ(reply(a_, {"PING"}), "PONG");
}

TEST_F(ClientCommandsTest, KillSkipsTheCallerUnlessSkipmeIsNo) {
  const std::string a = idOf(a_);
  EXPECT_EQ(reply(a_, {"CLIENT", "KILL", "ID", a}), "0");
  EXPECT_EQ(reply(a_, {"CLIENT", "KILL", "ID", a, "SKIPME", "no"}), "1");  // answered, then closed
  EXPECT_TRUE(clientsBecome(b_, 1));
  EXPECT_TRUE(a_.command({"PING"}) == nullptr);
}

TEST_F(ClientCommandsTest, KillsOldFormTakesAnAddressAndSaysOk) {
  const std::string b = idOf(b_);
  const std::string addr = field(lines(reply(a_, {"CLIENT", "LIST", "ID", b}))[0], "addr");
  EXPECT_EQ(reply(a_, {"CLIENT", "KILL", "127.0.0.1:1"}), "ERR No such client");
  EXPECT_EQ(reply(a_, {"CLIENT", "KILL", addr}), "OK");
  EXPECT_TRUE(clientsBecome(a_, 1));
  EXPECT_TRUE(b_.command({"PING"}) == nullptr);
}

TEST_F(ClientCommandsTest, KillRefusesBadFiltersInRedisServersWords) {
  EXPECT_EQ(reply(a_, {"CLIENT", "KILL", "ID", "0"}), "ERR client-id should be greater than 0");
  EXPECT_EQ(reply(a_, {"CLIENT", "KILL", "TYPE", "bogus"}), "ERR Unknown client type 'bogus'");
  EXPECT_EQ(reply(a_, {"CLIENT", "KILL", "USER", "nosuch"}), "ERR No such user 'nosuch'");
  EXPECT_EQ(reply(a_, {"CLIENT", "KILL", "ID", "5", "TYPE"}), "ERR syntax error");
  EXPECT_EQ(reply(a_, {"CLIENT", "KILL", "ID", "5", "SKIPME", "maybe"}), "ERR syntax error");
  EXPECT_EQ(reply(b_, {"PING"}), "PONG");  // nobody was killed
}

TEST_F(ClientCommandsTest, NoEvictTakesOnOrOff) {
  EXPECT_EQ(reply(a_, {"CLIENT", "NO-EVICT", "on"}), "OK");
  EXPECT_EQ(reply(a_, {"CLIENT", "NO-EVICT", "OFF"}), "OK");
  EXPECT_EQ(reply(a_, {"CLIENT", "NO-EVICT", "maybe"}), "ERR syntax error");
}

}  // namespace
}  // namespace sp::session
