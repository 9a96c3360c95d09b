// Whole-keyspace commands through the proxy, against real shards: SCAN over 100,000 keys on 8
// shards returns every key exactly once (MATCH, COUNT and TYPE passed through, the cursor
// encoding the shard); DBSIZE, KEYS, RANDOMKEY merged; FLUSHALL / FLUSHDB empty every shard
// (checked on each redis-server); scripts routed by their keys and SCRIPT LOAD on every shard;
// FUNCTION LOAD + FCALL; TIME, LASTSAVE, MEMORY USAGE; deny_commands and CONFIG SET refused.
#include <gtest/gtest.h>
#include <hiredis/hiredis.h>

#include <set>
#include <string>
#include <unordered_set>
#include <vector>

#include "integration/clients_helpers.h"
#include "integration/harness.h"

namespace sp::test {
namespace {

constexpr const char* kCrossSlot = "(error) CROSSSLOT Keys in request don't hash to the same slot";

// Runs SCAN to the end and returns every key seen, duplicates included.
std::vector<std::string> scanAll(Client& c, const std::vector<std::string>& options) {
  std::vector<std::string> keys;
  std::string cursor = "0";
  for (int calls = 0; calls < 100000; ++calls) {
    std::vector<const char*> argv = {"SCAN", cursor.c_str()};
    for (const std::string& o : options) {
      argv.push_back(o.c_str());
    }
    auto* r = static_cast<redisReply*>(
        redisCommandArgv(c.ctx(), static_cast<int>(argv.size()), argv.data(), nullptr));
    if (r == nullptr || r->type != REDIS_REPLY_ARRAY || r->elements != 2) {
      ADD_FAILURE() << "SCAN " << cursor << ": " << render(r);
      freeReplyObject(r);
      return keys;
    }
    cursor.assign(r->element[0]->str, r->element[0]->len);
    for (size_t i = 0; i < r->element[1]->elements; ++i) {
      keys.emplace_back(r->element[1]->element[i]->str, r->element[1]->element[i]->len);
    }
    freeReplyObject(r);
    if (cursor == "0") {
      return keys;
    }
  }
  ADD_FAILURE() << "SCAN did not end";
  return keys;
}

class KeyspaceTest : public ::testing::Test {
 protected:
  void start(int shards, std::vector<std::string> proxy_args = {}) {
    env_ = std::make_unique<Deployment>(shards, 1, std::move(proxy_args));
    client_ = std::make_unique<Client>(env_->port());
    ASSERT_TRUE(client_->ok());
  }
  std::string cmd(const std::vector<std::string>& argv) { return client_->cmd(argv); }
  long long shardTotal() {
    long long n = 0;
    for (auto& s : env_->shards()) {
      Client direct(s->port());
      n += integerOf(direct.cmd({"DBSIZE"}));
    }
    return n;
  }
  std::unique_ptr<Deployment> env_;
  std::unique_ptr<Client> client_;
};

TEST_F(KeyspaceTest, ScanOver100kKeysOn8ShardsReturnsEachKeyOnce) {
  start(8);
  constexpr int kKeys = 100000;
  constexpr int kBatch = 500;
  // MSET in pipelined batches of 500 keys (split over the shards by the proxy).
  for (int base = 0; base < kKeys; base += kBatch * 20) {
    int sent = 0;
    for (int b = base; b < std::min(kKeys, base + kBatch * 20); b += kBatch) {
      std::vector<std::string> args = {"MSET"};
      for (int k = b; k < b + kBatch; ++k) {
        args.push_back("key:" + std::to_string(k));
        args.push_back(std::to_string(k));
      }
      std::vector<const char*> argv;
      std::vector<size_t> lens;
      for (const std::string& a : args) {
        argv.push_back(a.data());
        lens.push_back(a.size());
      }
      redisAppendCommandArgv(client_->ctx(), static_cast<int>(argv.size()), argv.data(),
                             lens.data());
      ++sent;
    }
    for (int i = 0; i < sent; ++i) {
      void* r = nullptr;
      ASSERT_EQ(redisGetReply(client_->ctx(), &r), REDIS_OK);
      ASSERT_EQ(render(static_cast<redisReply*>(r)), "OK");
      freeReplyObject(r);
    }
  }
  ASSERT_EQ(cmd({"DBSIZE"}), "(integer) " + std::to_string(kKeys));
  if (!env_->direct()) {
    for (auto& s : env_->shards()) {
      Client direct(s->port());
      EXPECT_GT(integerOf(direct.cmd({"DBSIZE"})), kKeys / 16) << "keys on " << s->address();
    }
  }
  const std::vector<std::string> keys = scanAll(*client_, {"COUNT", "1000"});
  const std::unordered_set<std::string> unique(keys.begin(), keys.end());
  EXPECT_EQ(keys.size(), static_cast<size_t>(kKeys)) << "no key twice";
  EXPECT_EQ(unique.size(), static_cast<size_t>(kKeys)) << "every key";
  for (int k = 0; k < kKeys; k += 997) {
    EXPECT_EQ(unique.count("key:" + std::to_string(k)), 1u) << k;
  }

  // MATCH and TYPE reach the shards as they are.
  const std::vector<std::string> matched = scanAll(*client_, {"MATCH", "key:9999*"});
  EXPECT_EQ(std::set<std::string>(matched.begin(), matched.end()),
            (std::set<std::string>{"key:9999", "key:99990", "key:99991", "key:99992", "key:99993",
                                   "key:99994", "key:99995", "key:99996", "key:99997", "key:99998",
                                   "key:99999"}));
  for (int h = 0; h < 8; ++h) {
    ASSERT_EQ(cmd({"HSET", "hash:" + std::to_string(h), "f", "v"}), "(integer) 1");
  }
  const std::vector<std::string> hashes = scanAll(*client_, {"TYPE", "hash", "COUNT", "5000"});
  EXPECT_EQ(hashes.size(), 8u);
  EXPECT_EQ(cmd({"SCAN", "not-a-number"}), "(error) ERR invalid cursor");
}

TEST_F(KeyspaceTest, DbsizeKeysRandomkey) {
  start(4);
  EXPECT_EQ(cmd({"RANDOMKEY"}), "(nil)");
  EXPECT_EQ(cmd({"KEYS", "*"}), "[]");
  std::set<std::string> written;
  for (int i = 0; i < 40; ++i) {
    const std::string key = "k" + std::to_string(i);
    ASSERT_EQ(cmd({"SET", key, "v"}), "OK");
    written.insert(key);
  }
  EXPECT_EQ(cmd({"DBSIZE"}), "(integer) 40");
  auto* r = static_cast<redisReply*>(redisCommand(client_->ctx(), "KEYS k*"));
  ASSERT_NE(r, nullptr);
  std::set<std::string> listed;
  for (size_t i = 0; i < r->elements; ++i) {
    listed.emplace(r->element[i]->str, r->element[i]->len);
  }
  freeReplyObject(r);
  EXPECT_EQ(listed, written);
  EXPECT_EQ(cmd({"KEYS", "k1?"}).size(), std::string("[k10, k11, k12, k13, k14, k15, k16, k17, "
                                                     "k18, k19]")
                                             .size());
  for (int i = 0; i < 10; ++i) {
    EXPECT_EQ(written.count(cmd({"RANDOMKEY"})), 1u);
  }
  EXPECT_EQ(cmd({"MEMORY", "USAGE", "k1"}).rfind("(integer) ", 0), 0u);
  EXPECT_EQ(cmd({"TIME"}).rfind("[", 0), 0u);
  EXPECT_EQ(cmd({"LASTSAVE"}).rfind("(integer) ", 0), 0u);
}

TEST_F(KeyspaceTest, FlushallEmptiesEveryShard) {
  start(4);
  for (int i = 0; i < 200; ++i) {
    ASSERT_EQ(cmd({"SET", "f" + std::to_string(i), "v"}), "OK");
  }
  ASSERT_EQ(shardTotal(), 200);
  if (!env_->direct()) {
    for (auto& s : env_->shards()) {
      Client direct(s->port());
      EXPECT_GT(integerOf(direct.cmd({"DBSIZE"})), 0) << s->address();
    }
  }
  EXPECT_EQ(cmd({"FLUSHALL"}), "OK");
  for (auto& s : env_->shards()) {
    Client direct(s->port());
    EXPECT_EQ(direct.cmd({"DBSIZE"}), "(integer) 0") << s->address();
  }
  ASSERT_EQ(cmd({"SET", "again", "v"}), "OK");
  EXPECT_EQ(cmd({"FLUSHDB", "ASYNC"}), "OK");
  EXPECT_TRUE(eventually([&] { return shardTotal() == 0; }));
  EXPECT_EQ(cmd({"FLUSHALL", "SYNC"}), "OK");
  EXPECT_EQ(cmd({"FLUSHALL", "BOGUS"}).rfind("(error) ", 0), 0u);
}

TEST_F(KeyspaceTest, ScriptsRoutedByTheirKeys) {
  start(4);
  EXPECT_EQ(cmd({"EVAL", "redis.call('SET', KEYS[1], ARGV[1]); return redis.call('GET', KEYS[1])",
                 "1", "{s}a", "v1"}),
            "v1");
  EXPECT_EQ(cmd({"EVAL", "return redis.call('MGET', KEYS[1], KEYS[2])", "2", "{s}a", "{s}b"}),
            "[v1, (nil)]");
  if (!env_->direct()) {
    EXPECT_EQ(cmd({"EVAL", "return 1", "2", "a", "b"}), kCrossSlot);
  }
  EXPECT_EQ(cmd({"EVAL", "return 42", "0"}), "(integer) 42");
  EXPECT_EQ(cmd({"EVAL_RO", "return redis.call('GET', KEYS[1])", "1", "{s}a"}), "v1");

  // SCRIPT LOAD reaches every shard, so EVALSHA works whatever shard its key is on.
  const std::string sha = cmd({"SCRIPT", "LOAD", "return redis.call('INCR', KEYS[1])"});
  ASSERT_EQ(sha.size(), 40u) << sha;
  for (auto& s : env_->shards()) {
    Client direct(s->port());
    EXPECT_EQ(direct.cmd({"SCRIPT", "EXISTS", sha}), "[(integer) 1]") << s->address();
  }
  for (int i = 0; i < 8; ++i) {
    EXPECT_EQ(cmd({"EVALSHA", sha, "1", "counter" + std::to_string(i)}), "(integer) 1");
  }
  EXPECT_EQ(cmd({"SCRIPT", "EXISTS", sha, "0000000000000000000000000000000000000000"}),
            "[(integer) 1, (integer) 0]");
  EXPECT_EQ(cmd({"SCRIPT", "FLUSH"}), "OK");
  EXPECT_EQ(cmd({"SCRIPT", "EXISTS", sha}), "[(integer) 0]");

  // Functions: loaded on every shard, called by key.
  const std::string lib =
      "#!lua name=proxylib\nredis.register_function('getset2', function(keys, args) "
      "return redis.call('GETSET', keys[1], args[1]) end)";
  EXPECT_EQ(cmd({"FUNCTION", "LOAD", lib}), "proxylib");
  EXPECT_EQ(cmd({"FCALL", "getset2", "1", "fk", "new"}), "(nil)");
  EXPECT_EQ(cmd({"FCALL", "getset2", "1", "fk", "newer"}), "new");
  EXPECT_EQ(cmd({"FUNCTION", "LIST"}).find("proxylib") != std::string::npos, true);
  EXPECT_EQ(cmd({"FUNCTION", "FLUSH"}), "OK");
}

// A script or function called with no keys runs on one shard, so one that can reach the keyspace
// is refused (it would read nil for keys elsewhere) unless keyless_scripts names a shard for it.
TEST_F(KeyspaceTest, KeylessScriptsThatReachTheKeyspaceAreRefused) {
  if (directMode()) {
    GTEST_SKIP() << "proxy policy";
  }
  start(4);
  constexpr const char* kRefused =
      "(error) ERR a script or function called with no keys runs on one shard of shardproxy's";
  const std::string elsewhere = keyOnShard(2, 4, "keyless");
  ASSERT_EQ(cmd({"SET", elsewhere, "v"}), "OK");
  const std::string get = "return redis.call('get','" + elsewhere + "')";
  EXPECT_EQ(cmd({"EVAL", get, "0"}).rfind(kRefused, 0), 0u);
  EXPECT_EQ(cmd({"EVAL_RO", "return redis.pcall('dbsize')", "0"}).rfind(kRefused, 0), 0u);
  const std::string sha = cmd({"SCRIPT", "LOAD", "return 7"});
  EXPECT_EQ(cmd({"EVALSHA", sha, "0"}).rfind(kRefused, 0), 0u);  // its body is not seen
  EXPECT_EQ(cmd({"FCALL", "anything", "0"}).rfind(kRefused, 0), 0u);
  // Scripts that cannot reach the keyspace, and those that declare their keys, run as before.
  EXPECT_EQ(cmd({"EVAL", "return 42", "0"}), "(integer) 42");
  EXPECT_EQ(cmd({"EVAL", "return redis.call('get', KEYS[1])", "1", elsewhere}), "v");
  // Inside MULTI, the refusal aborts the transaction like any other.
  EXPECT_EQ(cmd({"MULTI"}), "OK");
  EXPECT_EQ(cmd({"EVAL", get, "0"}).rfind(kRefused, 0), 0u);
  EXPECT_EQ(cmd({"EXEC"}), "(error) EXECABORT Transaction discarded because of previous errors.");
}

TEST_F(KeyspaceTest, KeylessScriptsRunOnTheConfiguredShard) {
  if (directMode()) {
    GTEST_SKIP() << "proxy configuration";
  }
  TempDir dir;
  start(4, {"--config", writeFile(dir, "keyless.yaml", "keyless_scripts: shard2\n")});
  const std::string there = keyOnShard(2, 4, "there");
  ASSERT_EQ(cmd({"SET", there, "v"}), "OK");
  EXPECT_EQ(cmd({"EVAL", "return redis.call('get','" + there + "')", "0"}), "v");
  EXPECT_EQ(cmd({"EVAL", "return redis.call('dbsize')", "0"}), "(integer) 1");
}

TEST_F(KeyspaceTest, DenyCommandsAndConfigSet) {
  if (directMode()) {
    GTEST_SKIP() << "proxy configuration";
  }
  TempDir dir;
  const std::string config = writeFile(
      dir, "deny.yaml",
      "deny_commands: [flushall, KEYS, \"script flush\"]\nlimits:\n  max_clients: 1000\n");
  start(2, {"--config", config});
  EXPECT_EQ(cmd({"FLUSHALL"}),
            "(error) ERR command 'flushall' is disabled by the shardproxy configuration "
            "(deny_commands)");
  EXPECT_EQ(cmd({"KEYS", "*"}).rfind("(error) ERR command 'keys' is disabled", 0), 0u);
  EXPECT_EQ(cmd({"SCRIPT", "FLUSH"}).rfind("(error) ERR command 'script flush' is disabled", 0),
            0u);
  EXPECT_EQ(cmd({"FLUSHDB"}), "OK");
  EXPECT_EQ(cmd({"CONFIG", "SET", "maxmemory", "0"}).rfind("(error) ERR CONFIG SET is disabled", 0),
            0u);
  // limits.max_clients (as far as the open-files limit allows: 1000 fits any test machine).
  EXPECT_EQ(cmd({"CONFIG", "GET", "maxclients"}), "[maxclients, 1000]");
  EXPECT_EQ(cmd({"CONFIG", "GET", "databases", "nosuch"}), "[databases, 1]");
}

TEST_F(KeyspaceTest, ConfigSetWhenAllowed) {
  if (directMode()) {
    GTEST_SKIP() << "proxy configuration";
  }
  TempDir dir;
  start(2, {"--config", writeFile(dir, "set.yaml", "allow_config_set: true\n")});
  EXPECT_EQ(cmd({"CONFIG", "SET", "maxmemory-policy", "allkeys-lru"}), "OK");
  for (auto& s : env_->shards()) {
    Client direct(s->port());
    EXPECT_EQ(direct.cmd({"CONFIG", "GET", "maxmemory-policy"}), "[maxmemory-policy, allkeys-lru]");
  }
}

}  // namespace
}  // namespace sp::test
