// PROXY admin subcommands and the INFO sections of the real proxy: HELP, INFO (server clients
// stats keyspace shards), SHARDS, SLOTS, CONFIG GET with glob patterns (secrets hidden),
// SLOWLOG GET/LEN/RESET with the command, shard, duration and client of each entry, and the
// errors of bad calls.
#include <gtest/gtest.h>
#include <hiredis/hiredis.h>

#include <chrono>
#include <ctime>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "integration/harness.h"

namespace sp::test {
namespace {

using std::chrono::milliseconds;

// A reply as a hiredis object, for looking inside arrays.
struct Reply {
  explicit Reply(redisContext* c, const std::vector<std::string>& argv) {
    std::vector<const char*> ptrs;
    std::vector<size_t> lens;
    for (const auto& a : argv) {
      ptrs.push_back(a.data());
      lens.push_back(a.size());
    }
    r = static_cast<redisReply*>(
        redisCommandArgv(c, static_cast<int>(argv.size()), ptrs.data(), lens.data()));
  }
  ~Reply() {
    if (r != nullptr) {
      freeReplyObject(r);
    }
  }
  redisReply* r = nullptr;
};

std::string str(const redisReply* r) { return std::string(r->str, r->len); }

// Value of `key` in a flat [k1, v1, k2, v2, ...] array, rendered.
std::string field(const redisReply* flat, const std::string& key) {
  for (size_t i = 0; i + 1 < flat->elements; i += 2) {
    if (str(flat->element[i]) == key) {
      return render(flat->element[i + 1]);
    }
  }
  return "(missing)";
}

class AdminTest : public ::testing::Test {
 protected:
  void SetUp() override {
    shards_ = startShards(2);
    proxy_ = std::make_unique<ProxyProcess>(shardList(shards_), 2,
                                            std::vector<std::string>{"--log-level", "warn"});
    client_ = std::make_unique<Client>(proxy_->port());
  }
  std::string cmd(const std::vector<std::string>& argv) { return client_->cmd(argv); }
  // A second proxy (two workers) over the same shards, named shard0 and shard1, with a slow-log
  // threshold of `threshold_us`.
  std::unique_ptr<ProxyProcess> proxyWithSlowlog(const TempDir& dir, int threshold_us) {
    std::ofstream(dir.path() + "/proxy.yaml")
        << "shards:\n  - name: shard0\n    address: " << shards_[0]->address()
        << "\n  - name: shard1\n    address: " << shards_[1]->address()
        << "\nslowlog:\n  threshold_us: " << threshold_us << "\n";
    return std::make_unique<ProxyProcess>(
        "", 2,
        std::vector<std::string>{"--config", dir.path() + "/proxy.yaml", "--log-level", "warn"});
  }

  std::vector<std::unique_ptr<RedisServer>> shards_;
  std::unique_ptr<ProxyProcess> proxy_;
  std::unique_ptr<Client> client_;
};

TEST_F(AdminTest, HelpListsEverySubcommand) {
  const std::string help = cmd({"PROXY", "HELP"});
  for (const char* sub : {"INFO", "SHARDS", "SLOTS", "CONFIG GET", "SLOWLOG", "RELOAD"}) {
    EXPECT_NE(help.find(sub), std::string::npos) << sub << "\n" << help;
  }
}

TEST_F(AdminTest, InfoHasEverySectionAsKeyValueLines) {
  const std::string info = cmd({"PROXY", "INFO"});
  for (const char* section : {"# Server", "# Clients", "# Stats", "# Keyspace", "# Shards"}) {
    EXPECT_NE(info.find(section), std::string::npos) << section;
  }
  // redis-cli style: every non-empty, non-header line is key:value.
  size_t start = 0;
  while (start < info.size()) {
    size_t end = info.find("\r\n", start);
    ASSERT_NE(end, std::string::npos);
    const std::string line = info.substr(start, end - start);
    start = end + 2;
    if (line.empty() || line[0] == '#') {
      continue;
    }
    EXPECT_NE(line.find(':'), std::string::npos) << line;
  }
  EXPECT_NE(cmd({"PROXY", "INFO", "SHARDS"}).find("shard1:addr=" + shards_[1]->address()),
            std::string::npos);
  EXPECT_EQ(cmd({"PROXY", "INFO", "server"}).find("# Shards"), std::string::npos);
}

TEST_F(AdminTest, InfoKeyspaceSumsTheShards) {
  std::vector<std::string> mset = {"MSET"};
  for (int i = 0; i < 40; ++i) {
    mset.push_back("key" + std::to_string(i));
    mset.push_back("v");
  }
  ASSERT_EQ(cmd(mset), "OK");
  ASSERT_EQ(cmd({"SET", "ttl", "v", "EX", "1000"}), "OK");
  // Polled in the background every 2 s.
  std::string info;
  for (int i = 0; i < 200; ++i) {
    info = cmd({"INFO", "keyspace"});
    if (info.find("db0:keys=41,expires=1,") != std::string::npos) {
      break;
    }
    std::this_thread::sleep_for(milliseconds(50));
  }
  EXPECT_NE(info.find("# Keyspace\r\ndb0:keys=41,expires=1,avg_ttl="), std::string::npos) << info;
}

TEST_F(AdminTest, ShardsReportsAddressStateAndCounters) {
  ASSERT_EQ(cmd({"SET", "a", "1"}), "OK");
  // Each worker connects on its own thread: wait (bounded) until both workers' connections to
  // both shards are up, which a slow (sanitizer) build may not have reached yet.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (std::chrono::steady_clock::now() < deadline) {
    Reply probe(client_->ctx(), {"PROXY", "SHARDS"});
    if (probe.r != nullptr && probe.r->type == REDIS_REPLY_ARRAY && probe.r->elements == 2 &&
        field(probe.r->element[0], "state") == "up" &&
        field(probe.r->element[1], "state") == "up") {
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  Reply reply(client_->ctx(), {"PROXY", "SHARDS"});
  ASSERT_NE(reply.r, nullptr);
  ASSERT_EQ(reply.r->type, REDIS_REPLY_ARRAY);
  ASSERT_EQ(reply.r->elements, 2u);
  uint64_t requests = 0;
  for (size_t i = 0; i < 2; ++i) {
    const redisReply* s = reply.r->element[i];
    EXPECT_EQ(field(s, "name"), "shard" + std::to_string(i));
    EXPECT_EQ(field(s, "addr"), shards_[i]->address());
    EXPECT_EQ(field(s, "state"), "up");
    EXPECT_EQ(field(s, "connections_up"), "(integer) 2");  // one per worker
    EXPECT_EQ(field(s, "connections"), "(integer) 2");
    EXPECT_EQ(field(s, "slots"), i == 0 ? "0-8191" : "8192-16383");
    EXPECT_EQ(field(s, "slot_count"), "(integer) 8192");
    requests += std::stoull(field(s, "requests").substr(10));
  }
  EXPECT_EQ(requests, 1u);
}

TEST_F(AdminTest, SlotsListsRangesLikeClusterSlots) {
  EXPECT_EQ(cmd({"PROXY", "SLOTS"}), "[[(integer) 0, (integer) 8191, [127.0.0.1, (integer) " +
                                         std::to_string(shards_[0]->port()) +
                                         ", shard0]], [(integer) 8192, (integer) "
                                         "16383, [127.0.0.1, (integer) " +
                                         std::to_string(shards_[1]->port()) + ", shard1]]]");
}

TEST_F(AdminTest, ConfigGetMatchesGlobPatterns) {
  EXPECT_EQ(cmd({"PROXY", "CONFIG", "GET", "workers"}), "[workers, 2]");
  EXPECT_EQ(cmd({"PROXY", "CONFIG", "GET", "LIMITS.MAX_CL*"}), "[limits.max_clients, 100000]");
  EXPECT_EQ(cmd({"PROXY", "CONFIG", "GET", "shards[[]1].address"}),
            "[shards[1].address, " + shards_[1]->address() + "]");
  // Several patterns; keys in conf/proxy.yaml order (the harness turns metrics off).
  EXPECT_EQ(cmd({"PROXY", "CONFIG", "GET", "slowlog.*", "metrics.listen"}),
            "[metrics.listen, , slowlog.threshold_us, 10000, slowlog.max_len, 128]");
  EXPECT_EQ(cmd({"PROXY", "CONFIG", "GET", "nothing-matches"}), "[]");
  const std::string all = cmd({"PROXY", "CONFIG", "GET", "*"});
  for (const char* key : {"listen.port", "backend.timeout_ms", "limits.max_bulk_len", "log_level",
                          "shards[0].name", "backend.password"}) {
    EXPECT_NE(all.find(key), std::string::npos) << key;
  }
  EXPECT_EQ(cmd({"PROXY", "CONFIG", "SET", "workers", "3"}).rfind("(error) ERR", 0), 0u);
}

// CONFIG GET shows the backend mode, auth users with their rights and deny_commands, and never a
// password: only "(set)" for one that is.
TEST(AdminConfigTest, ConfigGetShowsAuthAndDeniedCommandsButNoPassword) {
  auto shards = startShards(1);
  TempDir dir;
  const std::string path = dir.path() + "/proxy.yaml";
  {
    std::ofstream out(path);
    out << "auth:\n  password: default-secret-1111\n  users:\n"
           "    - name: ro\n      password: ro-secret-2222\n      read_only: true\n"
           "    - name: root\n      password: root-secret-3333\n      admin: true\n"
           "deny_commands: [keys, \"config set\"]\n";
  }
  ProxyProcess proxy(shardList(shards), 1, {"--config", path});
  Client c(proxy.port());
  ASSERT_EQ(c.cmd({"AUTH", "root", "root-secret-3333"}), "OK");
  EXPECT_EQ(c.cmd({"PROXY", "CONFIG", "GET", "auth.*", "deny_commands", "backend.mode"}),
            "[backend.mode, static, auth.password, (set), auth.users, ro(read_only),root(admin), "
            "deny_commands, keys,config set]");
  EXPECT_EQ(c.cmd({"PROXY", "CONFIG", "GET", "backend.cluster_seeds", "backend.max_redirects"}),
            "[backend.cluster_seeds, , backend.max_redirects, 5]");
  const std::string all = c.cmd({"PROXY", "CONFIG", "GET", "*"});
  for (const char* password : {"default-secret-1111", "ro-secret-2222", "root-secret-3333"}) {
    EXPECT_EQ(all.find(password), std::string::npos) << password;
  }
}

TEST_F(AdminTest, BadCallsGetErrors) {
  EXPECT_EQ(cmd({"PROXY"}), "(error) ERR wrong number of arguments for 'proxy' command");
  EXPECT_EQ(cmd({"PROXY", "NOPE"}), "(error) ERR unknown subcommand 'NOPE'. Try PROXY HELP.");
  EXPECT_EQ(cmd({"PROXY", "SHARDS", "extra"}).rfind("(error) ERR wrong number of arguments", 0),
            0u);
  EXPECT_EQ(cmd({"PROXY", "SLOWLOG", "FROB"}).rfind("(error) ERR unknown subcommand", 0), 0u);
  EXPECT_EQ(cmd({"PROXY", "SLOWLOG", "GET", "x"}).rfind("(error) ERR count", 0), 0u);
  EXPECT_EQ(cmd({"PING"}), "PONG");
  // COMMAND knows PROXY (redis-cli's hints read COMMAND DOCS).
  EXPECT_EQ(cmd({"COMMAND", "INFO", "proxy"}).rfind("[[proxy, (integer) -2, ", 0), 0u);
}

TEST_F(AdminTest, SlowlogRecordsCommandShardDurationAndClient) {
  // A threshold of 200 ms, far above any request here but the one held up by a paused shard.
  TempDir dir;
  const auto proxy = proxyWithSlowlog(dir, 200000);
  Client client(proxy->port());
  auto send = [&](const std::vector<std::string>& argv) { return client.cmd(argv); };
  ASSERT_EQ(send({"CLIENT", "SETNAME", "slowpoke"}), "OK");
  ASSERT_EQ(send({"PROXY", "SLOWLOG", "LEN"}), "(integer) 0");
  std::string key;
  for (int i = 0; key.empty(); ++i) {
    if (testKeySlot("s" + std::to_string(i)) >= 8192) {
      key = "s" + std::to_string(i);
    }
  }
  shards_[1]->pause();
  const char* set_argv[] = {"SET", key.c_str(), "v"};
  ASSERT_EQ(redisAppendCommandArgv(client.ctx(), 3, set_argv, nullptr), REDIS_OK);
  void* raw = nullptr;
  int done = 0;
  ASSERT_EQ(redisBufferWrite(client.ctx(), &done), REDIS_OK);  // sent while the shard is paused
  std::this_thread::sleep_for(milliseconds(500));
  shards_[1]->resume();
  ASSERT_EQ(redisGetReply(client.ctx(), &raw), REDIS_OK);
  EXPECT_EQ(render(static_cast<redisReply*>(raw)), "OK");
  freeReplyObject(raw);
  EXPECT_EQ(send({"GET", key}), "v");  // fast: not logged
  ASSERT_EQ(send({"PROXY", "SLOWLOG", "LEN"}), "(integer) 1");
  Reply log(client.ctx(), {"PROXY", "SLOWLOG", "GET"});
  ASSERT_NE(log.r, nullptr);
  ASSERT_EQ(log.r->elements, 1u) << render(log.r);
  const redisReply* e = log.r->element[0];
  ASSERT_EQ(e->elements, 7u);
  EXPECT_EQ(e->element[0]->integer, 1);                                         // id
  EXPECT_NEAR(static_cast<double>(e->element[1]->integer), time(nullptr), 30);  // unix time
  EXPECT_GE(e->element[2]->integer, 200000);                                    // microseconds
  EXPECT_EQ(render(e->element[3]), "[SET]");
  EXPECT_EQ(str(e->element[4]).rfind("127.0.0.1:", 0), 0u) << str(e->element[4]);
  EXPECT_EQ(str(e->element[5]), "slowpoke");
  EXPECT_EQ(str(e->element[6]), "shard1");
  // SLOWLOG, redis-server's command: the same log in redis-server's six fields.
  EXPECT_EQ(send({"SLOWLOG", "LEN"}), "(integer) 1");
  Reply redis_form(client.ctx(), {"SLOWLOG", "GET", "-1"});
  ASSERT_NE(redis_form.r, nullptr);
  ASSERT_EQ(redis_form.r->elements, 1u) << render(redis_form.r);
  const redisReply* r = redis_form.r->element[0];
  ASSERT_EQ(r->elements, 6u);
  EXPECT_EQ(r->element[0]->integer, 1);
  EXPECT_EQ(r->element[2]->integer, e->element[2]->integer);
  EXPECT_EQ(render(r->element[3]), "[SET]");
  EXPECT_EQ(str(r->element[5]), "slowpoke");
  EXPECT_EQ(send({"SLOWLOG", "GET", "-2"}),
            "(error) ERR count should be greater than or equal to -1");
  EXPECT_EQ(send({"SLOWLOG", "NOSUCH"}),
            "(error) ERR unknown subcommand 'NOSUCH'. Try SLOWLOG HELP.");
  EXPECT_EQ(send({"SLOWLOG", "HELP"}).rfind("[SLOWLOG <subcommand> [<arg> [value] [opt] ...]. ", 0),
            0u);
  EXPECT_EQ(send({"PROXY", "SLOWLOG", "RESET"}), "OK");
  EXPECT_EQ(send({"PROXY", "SLOWLOG", "LEN"}), "(integer) 0");
  EXPECT_EQ(send({"PROXY", "SLOWLOG", "GET", "5"}), "[]");
}

TEST_F(AdminTest, SlowlogIdsAreProxyWideAndNewEntriesAreNumberedAboveEveryIdRead) {
  // Every request is slow (threshold 0); two workers, clients on both.
  TempDir dir;
  const auto proxy = proxyWithSlowlog(dir, 0);
  std::vector<std::unique_ptr<Client>> clients;
  for (int i = 0; i < 8; ++i) {
    clients.push_back(std::make_unique<Client>(proxy->port()));
    ASSERT_EQ(clients.back()->cmd({"CLIENT", "SETNAME", "c" + std::to_string(i)}), "OK");
  }
  Client reader(proxy->port());
  // The ids of a SLOWLOG GET -1 reply, newest first, with each entry's client name.
  auto read = [&]() {
    std::vector<std::pair<long long, std::string>> out;
    Reply log(reader.ctx(), {"PROXY", "SLOWLOG", "GET", "-1"});
    EXPECT_NE(log.r, nullptr);
    for (size_t i = 0; log.r != nullptr && i < log.r->elements; ++i) {
      out.emplace_back(log.r->element[i]->element[0]->integer, str(log.r->element[i]->element[5]));
    }
    return out;
  };
  for (int round = 0; round < 3; ++round) {
    for (auto& c : clients) {
      ASSERT_EQ(c->cmd({"SET", "k" + std::to_string(round), "v"}), "OK");
    }
  }
  const auto first = read();
  ASSERT_GE(first.size(), 24u);
  for (size_t i = 1; i < first.size(); ++i) {
    EXPECT_GT(first[i - 1].first, first[i].first) << "ids not strictly newest first at " << i;
  }
  EXPECT_EQ(first.back().first, 1);  // nothing overwritten yet: ids start at 1, none skipped
  EXPECT_EQ(first.front().first, static_cast<long long>(first.size()));
  ASSERT_EQ(clients[3]->cmd({"GET", "k0"}), "v");
  const auto second = read();
  ASSERT_FALSE(second.empty());
  // The new entries (GET of c3, and the first read itself) come above every id read before; the
  // old ones keep their ids.
  EXPECT_GT(second.front().first, first.front().first);
  bool saw_get = false;
  for (const auto& [id, name] : second) {
    if (id > first.front().first && name == "c3") {
      saw_get = true;
    }
  }
  EXPECT_TRUE(saw_get);
  EXPECT_EQ(second[second.size() - first.size()].first, first.front().first);
}

}  // namespace
}  // namespace sp::test
