// CONFIG GET / SET, INFO and CLIENT LIST / KILL through the proxy, against a reference
// redis-server 7.0 of their own: CONFIG GET merged over the shards with the proxy's own
// parameters (RESP2 and RESP3), CONFIG SET applied to the proxy, refused or sent to the shards;
// INFO with every section and field redis-server has (but the documented few), the shards'
// figures aggregated and the proxy's commandstats / errorstats / latencystats; CLIENT LIST and
// CLIENT KILL (every filter) seeing the clients of every worker.
#include <hiredis/hiredis.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "integration/clients_helpers.h"
#include "integration/harness.h"

namespace sp::test {
namespace {

using namespace std::chrono_literals;

// CONFIG GET's reply as name -> value (RESP2 flat array), empty on an error.
std::map<std::string, std::string> configGet(Client& c, std::vector<std::string> patterns) {
  patterns.insert(patterns.begin(), {"CONFIG", "GET"});
  std::vector<const char*> argv;
  std::vector<size_t> lens;
  for (const std::string& a : patterns) {
    argv.push_back(a.data());
    lens.push_back(a.size());
  }
  auto* r = static_cast<redisReply*>(
      redisCommandArgv(c.ctx(), static_cast<int>(argv.size()), argv.data(), lens.data()));
  std::map<std::string, std::string> out;
  if (r != nullptr && r->type == REDIS_REPLY_ARRAY) {
    EXPECT_EQ(r->elements % 2, 0u);
    for (size_t i = 0; i + 1 < r->elements; i += 2) {
      EXPECT_EQ(out.count(r->element[i]->str), 0u) << "listed twice: " << r->element[i]->str;
      out[r->element[i]->str] = std::string(r->element[i + 1]->str, r->element[i + 1]->len);
    }
  }
  if (r != nullptr) {
    freeReplyObject(r);
  }
  return out;
}

std::set<std::string> names(const std::map<std::string, std::string>& m) {
  std::set<std::string> out;
  for (const auto& [k, v] : m) {
    out.insert(k);
  }
  return out;
}

// INFO as section -> (key -> value), sections in order in *order.
using InfoMap = std::map<std::string, std::map<std::string, std::string>>;
InfoMap parseInfo(const std::string& text, std::vector<std::string>* order = nullptr) {
  InfoMap out;
  std::string section;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find("\r\n", start);
    end = end == std::string::npos ? text.size() : end;
    const std::string line = text.substr(start, end - start);
    start = end + 2;
    if (line.rfind("# ", 0) == 0) {
      section = line.substr(2);
      out[section];
      if (order != nullptr) {
        order->push_back(section);
      }
    } else if (const size_t colon = line.find(':'); colon != std::string::npos) {
      out[section][line.substr(0, colon)] = line.substr(colon + 1);
    }
  }
  return out;
}

std::vector<std::string> sections(Client& c, std::vector<std::string> argv) {
  argv.insert(argv.begin(), "INFO");
  std::vector<std::string> order;
  parseInfo(c.cmd(argv), &order);
  return order;
}

std::string proxyConfig(const TempDir& dir) {
  return writeFile(dir, "proxy.yaml", "allow_config_set: true\n");
}

class ParityTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (directMode()) {
      GTEST_SKIP() << "compares the proxy with a redis-server of its own";
    }
  }

  void start(int shard_count, int workers) {
    shards_ = startShards(shard_count);
    proxy_ = std::make_unique<ProxyProcess>(
        shardList(shards_), workers, std::vector<std::string>{"--config", proxyConfig(dir_)});
    client_ = std::make_unique<Client>(proxy_->port());
    ref_client_ = std::make_unique<Client>(ref_.port());
  }

  std::string cmd(const std::vector<std::string>& argv) { return client_->cmd(argv); }
  // The same command on both sides: the proxy's reply, after checking it equals redis-server's.
  std::string same(const std::vector<std::string>& argv) {
    const std::string got = client_->cmd(argv);
    EXPECT_EQ(got, ref_client_->cmd(argv)) << argv[0] << " " << (argv.size() > 1 ? argv[1] : "");
    return got;
  }

  TempDir dir_;
  RedisServer ref_;
  std::vector<std::unique_ptr<RedisServer>> shards_;
  std::unique_ptr<ProxyProcess> proxy_;
  std::unique_ptr<Client> client_;
  std::unique_ptr<Client> ref_client_;
};

// ---- CONFIG GET ----

TEST_F(ParityTest, ConfigGetMergesTheShardsWithTheProxysOwnParameters) {
  start(3, 2);
  // Every parameter redis-server has, once each; the shards' values but for the proxy's own.
  const auto all = configGet(*client_, {"*"});
  EXPECT_EQ(names(all), names(configGet(*ref_client_, {"*"})));
  Client shard0(shards_[0]->port());
  const auto direct = configGet(shard0, {"*"});
  const std::set<std::string> own = {
      "bind", "port", "databases", "maxclients", "timeout", "tcp-keepalive", "proto-max-bulk-len",
      "cluster-enabled", "slowlog-log-slower-than", "slowlog-max-len", "requirepass", "masterauth",
      "masteruser",
      // tls.*: the proxy's listener, not the shards'
      "tls-port", "tls-cert-file", "tls-key-file", "tls-ca-cert-file", "tls-auth-clients",
      "tls-protocols", "tls-ciphers", "tls-ciphersuites"};
  for (const auto& [name, value] : all) {
    if (own.count(name) == 0) {
      EXPECT_EQ(value, direct.at(name)) << name;
    }
  }
  EXPECT_EQ(all.at("port"), std::to_string(proxy_->port()));
  EXPECT_EQ(all.at("databases"), "1");
  EXPECT_EQ(all.at("cluster-enabled"), "no");
  EXPECT_EQ(all.at("requirepass"), "");  // never the proxy's or a shard's password
  EXPECT_EQ(all.at("bind"), "127.0.0.1");
  // Several patterns, any case, as redis-server 7 takes them.
  EXPECT_EQ(names(configGet(*client_, {"MAX*", "timeout", "port", "nosuch"})),
            names(configGet(*ref_client_, {"MAX*", "timeout", "port", "nosuch"})));
  EXPECT_EQ(names(configGet(*client_, {"*policy", "maxmemory"})),
            names(configGet(*ref_client_, {"*policy", "maxmemory"})));
  same({"CONFIG", "GET", "nosuch*"});
  same({"CONFIG", "GET", "maxmemory-policy"});
  same({"CONFIG", "GET"});
  EXPECT_EQ(cmd({"CONFIG", "GET", "databases", "nosuch"}), "[databases, 1]");

  // When the shards disagree: the first shard's value, and the disagreement logged.
  Client shard1(shards_[1]->port());
  ASSERT_EQ(shard1.cmd({"CONFIG", "SET", "maxmemory-policy", "allkeys-lru"}), "OK");
  EXPECT_EQ(cmd({"CONFIG", "GET", "maxmemory-policy"}), "[maxmemory-policy, noeviction]");
  EXPECT_TRUE(eventually(
      [&] {
        return proxy_->process().log().find("disagree on maxmemory-policy") != std::string::npos;
      },
      5s))
      << proxy_->process().log();

  // RESP3: a map, as redis-server sends it.
  RawConn raw(proxy_->port());
  RawConn ref_raw(ref_.port());
  for (RawConn* c : {&raw, &ref_raw}) {
    ASSERT_TRUE(c->sendAll(encodeCommand({"HELLO", "3"})));
    ASSERT_NE(c->readUntil("modules", 5s).find("modules"), std::string::npos);
    ASSERT_TRUE(c->sendAll(encodeCommand({"CONFIG", "GET", "maxmemory-policy"})));
  }
  const std::string want = "%1\r\n$16\r\nmaxmemory-policy\r\n$10\r\nnoeviction\r\n";
  EXPECT_EQ(raw.readUntil("noeviction\r\n", 5s), want);
  EXPECT_EQ(ref_raw.readUntil("noeviction\r\n", 5s), want);
  ASSERT_TRUE(raw.sendAll(encodeCommand({"CONFIG", "GET", "maxclients", "timeout"})));
  EXPECT_EQ(raw.readUntil("timeout\r\n$1\r\n0\r\n", 5s).rfind("%2\r\n", 0), 0u);
}

TEST_F(ParityTest, ConfigGetAnswersTheProxysParametersWithoutTheShards) {
  start(2, 1);
  for (auto& s : shards_) {
    s->kill9();
  }
  // Through the shards: their error. The proxy's own parameters alone: the proxy answers.
  EXPECT_EQ(cmd({"CONFIG", "GET", "maxmemory"}).rfind("(error) ERR shard shard0 ", 0), 0u);
  EXPECT_EQ(cmd({"CONFIG", "GET", "timeout", "PORT"}),
            "[port, " + std::to_string(proxy_->port()) + ", timeout, 0]");
}

// ---- CONFIG SET ----

TEST_F(ParityTest, ConfigSetAppliesTheProxysParametersToTheProxy) {
  start(2, 2);
  EXPECT_EQ(cmd({"CONFIG", "SET", "timeout", "70"}), "OK");
  EXPECT_EQ(cmd({"CONFIG", "GET", "timeout"}), "[timeout, 70]");
  EXPECT_EQ(configGet(*client_, {"time*"}).at("timeout"), "70");
  for (auto& s : shards_) {
    Client direct(s->port());
    EXPECT_EQ(direct.cmd({"CONFIG", "GET", "timeout"}), "[timeout, 0]") << "the shards keep theirs";
  }
  // The proxy's and the shards' parameters in one CONFIG SET.
  EXPECT_EQ(
      cmd({"CONFIG", "SET", "maxmemory-policy", "allkeys-lru", "TIMEOUT", "0", "maxmemory", "1gb"}),
      "OK");
  EXPECT_EQ(cmd({"CONFIG", "GET", "timeout"}), "[timeout, 0]");
  for (auto& s : shards_) {
    Client direct(s->port());
    EXPECT_EQ(direct.cmd({"CONFIG", "GET", "maxmemory-policy"}), "[maxmemory-policy, allkeys-lru]");
    EXPECT_EQ(direct.cmd({"CONFIG", "GET", "maxmemory"}), "[maxmemory, 1073741824]");
  }
  EXPECT_EQ(cmd({"CONFIG", "SET", "slowlog-log-slower-than", "-1", "slowlog-max-len", "5"}), "OK");
  EXPECT_EQ(cmd({"CONFIG", "GET", "slowlog-*"}),
            "[slowlog-log-slower-than, -1, slowlog-max-len, 5]");
  EXPECT_EQ(cmd({"CONFIG", "SET", "tcp-keepalive", "60", "maxclients", "500"}), "OK");
  EXPECT_EQ(cmd({"CONFIG", "GET", "tcp-keepalive", "maxclients"}),
            "[maxclients, 500, tcp-keepalive, 60]");
  EXPECT_EQ(cmd({"INFO", "clients"}).find("maxclients:500\r\n") != std::string::npos, true);
  // Every worker applies it: an idle client is closed after `timeout` seconds.
  RawConn idle(proxy_->port());
  EXPECT_EQ(cmd({"CONFIG", "SET", "timeout", "1"}), "OK");
  std::string ignored;
  EXPECT_TRUE(idle.readToClose(&ignored, 10s)) << "closed as idle";
  client_ = std::make_unique<Client>(proxy_->port());  // idle too meanwhile
  EXPECT_EQ(cmd({"CONFIG", "SET", "timeout", "0"}), "OK");
  // redis-server's own errors, word for word.
  same({"CONFIG", "SET", "timeout", "abc"});
  same({"CONFIG", "SET", "timeout", "-1"});
  same({"CONFIG", "SET", "tcp-keepalive", "99999999999"});
  same({"CONFIG", "SET", "slowlog-log-slower-than", "-5"});
  same({"CONFIG", "SET", "timeout", "1", "TIMEOUT", "2"});
  same({"CONFIG", "SET", "timeout", "1", "maxmemory"});
  same({"CONFIG", "SET", "timeout"});
  same({"CONFIG", "SET", "nosuch-parameter", "1"});
  EXPECT_EQ(cmd({"CONFIG", "GET", "timeout"}), "[timeout, 0]") << "nothing applied on an error";
}

TEST_F(ParityTest, ConfigSetRefusesWhatWouldBreakTheProxyOrTheShards) {
  start(2, 1);
  const std::vector<std::vector<std::string>> refused = {
      {"requirepass", "secret"},
      {"masterauth", "x"},
      {"masteruser", "x"},
      {"port", "7777"},
      {"bind", "0.0.0.0"},
      {"replicaof", "no one"},
      {"slaveof", "no one"},
      {"dir", "/tmp"},
      {"dbfilename", "x.rdb"},
      {"cluster-node-timeout", "100"},
      {"databases", "4"},
      {"protected-mode", "yes"},
      {"client-output-buffer-limit", "normal 1mb 1mb 1"},
      {"maxmemory-clients", "1"},
      {"proto-max-bulk-len", "1mb"},
      {"maxmemory", "100"}};
  for (const auto& pair : refused) {
    const std::string reply = cmd({"CONFIG", "SET", pair[0], pair[1]});
    EXPECT_EQ(reply.rfind("(error) ERR CONFIG SET failed (possibly related to argument '" +
                              pair[0] + "') - refused by shardproxy: ",
                          0),
              0u)
        << reply;
  }
  // A refused parameter refuses the whole command: nothing applied, nothing sent.
  EXPECT_EQ(cmd({"CONFIG", "SET", "timeout", "9", "maxmemory-policy", "allkeys-lru", "dir", "/"})
                .rfind("(error) ERR CONFIG SET failed (possibly related to argument 'dir')", 0),
            0u);
  EXPECT_EQ(cmd({"CONFIG", "GET", "timeout"}), "[timeout, 0]");
  for (auto& s : shards_) {
    Client direct(s->port());
    EXPECT_EQ(direct.cmd({"CONFIG", "GET", "requirepass"}), "[requirepass, ]");
    EXPECT_EQ(direct.cmd({"CONFIG", "GET", "maxmemory"}), "[maxmemory, 0]");
    EXPECT_EQ(direct.cmd({"CONFIG", "GET", "maxmemory-policy"}), "[maxmemory-policy, noeviction]");
  }
  // maxmemory below what a shard holds (its used_memory at the last poll) is refused.
  ASSERT_EQ(cmd({"SET", keyOnShard(1, 2, "big"), std::string(3 << 20, 'x')}), "OK");
  EXPECT_TRUE(eventually([&] {
    return cmd({"CONFIG", "SET", "maxmemory", "2mb"})
               .find("less than what shard shard1 uses now") != std::string::npos;
  })) << cmd({"CONFIG", "SET", "maxmemory", "2mb"});
  // maxmemory at or above what every shard uses is sent.
  EXPECT_EQ(cmd({"CONFIG", "SET", "maxmemory", "100mb"}), "OK");
  EXPECT_EQ(cmd({"CONFIG", "GET", "maxmemory"}), "[maxmemory, 104857600]");
  EXPECT_EQ(cmd({"SET", "k", "v"}), "OK");
}

// ---- INFO ----

TEST_F(ParityTest, InfoHasEverySectionAndFieldOfRedisServer) {
  start(2, 2);
  ASSERT_EQ(cmd({"SET", "a", "1"}), "OK");
  ASSERT_EQ(ref_client_->cmd({"SET", "a", "1"}), "OK");
  auto shards_section = [](std::vector<std::string> v) {
    v.push_back("Shards");
    return v;
  };
  EXPECT_EQ(sections(*client_, {}), shards_section(sections(*ref_client_, {})));
  EXPECT_EQ(sections(*client_, {"default"}), shards_section(sections(*ref_client_, {"default"})));
  EXPECT_EQ(sections(*client_, {"all"}), shards_section(sections(*ref_client_, {"all"})));
  EXPECT_EQ(sections(*client_, {"everything"}),
            shards_section(sections(*ref_client_, {"everything"})));
  EXPECT_EQ(sections(*client_, {"Server", "CLIENTS"}),
            (std::vector<std::string>{"Server", "Clients"}));
  EXPECT_EQ(sections(*client_, {"commandstats", "latencystats"}),
            sections(*ref_client_, {"commandstats", "latencystats"}));
  EXPECT_EQ(cmd({"INFO", "nosuch"}), ref_client_->cmd({"INFO", "nosuch"}));
  // Every field of the shards' sections, once the first poll is in.
  ASSERT_TRUE(eventually([&] { return !infoField(*client_, "memory", "mem_allocator").empty(); }));
  const InfoMap got = parseInfo(cmd({"INFO", "everything"}));
  const InfoMap want = parseInfo(ref_client_->cmd({"INFO", "everything"}));
  for (const char* section :
       {"Server", "Clients", "Memory", "Persistence", "Stats", "Replication", "CPU", "Cluster"}) {
    for (const auto& [key, value] : want.at(section)) {
      EXPECT_EQ(got.at(section).count(key), 1u) << section << ": " << key;
    }
  }
  // redis-cli --stat reads these: real numbers.
  EXPECT_GT(std::stoull(got.at("Memory").at("used_memory")), 0u);
  EXPECT_EQ(got.at("Clients").at("blocked_clients"), "0");
  EXPECT_EQ(got.at("Memory").at("maxmemory"), "0");
  EXPECT_EQ(got.at("Persistence").at("rdb_last_bgsave_status"), "ok");
  EXPECT_EQ(got.at("Replication").at("role"), "master");
  EXPECT_EQ(got.at("Server").at("tcp_port"), std::to_string(proxy_->port()));
}

TEST_F(ParityTest, InfoAggregatesTheShardsAndCountsTheProxysCommands) {
  start(2, 2);
  const std::string k0 = keyOnShard(0, 2, "k");
  const std::string k1 = keyOnShard(1, 2, "k");
  ASSERT_EQ(cmd({"SET", k0, "v"}), "OK");
  ASSERT_EQ(cmd({"SET", k1, "v"}), "OK");
  ASSERT_EQ(cmd({"GET", k0}), "v");
  ASSERT_EQ(cmd({"GET", k1}), "v");
  ASSERT_EQ(cmd({"GET", "missing"}), "(nil)");
  EXPECT_EQ(cmd({"INCR", k0}), "(error) ERR value is not an integer or out of range");
  EXPECT_EQ(cmd({"LPUSH", k1, "x"}).rfind("(error) WRONGTYPE", 0), 0u);
  EXPECT_EQ(cmd({"NOSUCHCOMMAND"}).rfind("(error) ERR unknown command", 0), 0u);
  // The shards' own figures: sums (keyspace hits and misses, used_memory), once polled.
  uint64_t hits = 0, misses = 0;
  for (auto& s : shards_) {
    Client direct(s->port());
    hits += std::stoull(infoField(direct, "stats", "keyspace_hits"));
    misses += std::stoull(infoField(direct, "stats", "keyspace_misses"));
  }
  EXPECT_EQ(hits, 2u);
  EXPECT_TRUE(eventually([&] {
    return infoField(*client_, "stats", "keyspace_hits") == std::to_string(hits) &&
           infoField(*client_, "stats", "keyspace_misses") == std::to_string(misses);
  })) << cmd({"INFO", "stats"});
  EXPECT_NE(cmd({"INFO", "keyspace"}).find("db0:keys=2,expires=0,"), std::string::npos);
  uint64_t used = 0;
  for (auto& s : shards_) {
    Client direct(s->port());
    used = std::max<uint64_t>(used, std::stoull(infoField(direct, "memory", "used_memory")));
  }
  EXPECT_GT(std::stoull(infoField(*client_, "memory", "used_memory")), used) << "two shards' sum";
  // The proxy's own: the commands it served.
  const InfoMap info = parseInfo(cmd({"INFO", "commandstats", "errorstats", "latencystats"}));
  const auto& commands = info.at("Commandstats");
  EXPECT_EQ(commands.at("cmdstat_set").rfind("calls=2,usec=", 0), 0u) << commands.at("cmdstat_set");
  EXPECT_NE(commands.at("cmdstat_get").find(",rejected_calls=0,failed_calls=0"), std::string::npos);
  EXPECT_EQ(commands.at("cmdstat_get").rfind("calls=3,", 0), 0u);
  EXPECT_NE(commands.at("cmdstat_incr").find("failed_calls=1"), std::string::npos);
  EXPECT_EQ(info.at("Errorstats").at("errorstat_WRONGTYPE"), "count=1");
  EXPECT_EQ(info.at("Errorstats").at("errorstat_ERR"), "count=2");
  EXPECT_EQ(infoField(*client_, "stats", "total_error_replies"), "3");
  EXPECT_EQ(info.at("Latencystats").at("latency_percentiles_usec_get").rfind("p50=", 0), 0u);
  EXPECT_NE(info.at("Latencystats").at("latency_percentiles_usec_get").find(",p99.9="),
            std::string::npos);
  // A client blocked through the proxy is blocked on a shard.
  RawConn blocked(proxy_->port());
  ASSERT_TRUE(blocked.sendAll(encodeCommand({"BLPOP", "nothing-here", "30"})));
  EXPECT_TRUE(eventually([&] { return infoField(*client_, "clients", "blocked_clients") == "1"; }))
      << cmd({"INFO", "clients"});
  // CONFIG RESETSTAT: the proxy's figures count from now, and every shard resets its own.
  EXPECT_EQ(cmd({"CONFIG", "RESETSTAT"}), "OK");
  const InfoMap reset = parseInfo(cmd({"INFO", "commandstats", "errorstats"}));
  EXPECT_EQ(reset.at("Commandstats").count("cmdstat_get"), 0u);
  EXPECT_EQ(reset.at("Commandstats").at("cmdstat_config|resetstat").rfind("calls=1,", 0), 0u);
  EXPECT_TRUE(reset.count("Errorstats") == 0 || reset.at("Errorstats").empty());
  EXPECT_EQ(infoField(*client_, "stats", "total_error_replies"), "0");
  EXPECT_TRUE(eventually([&] {
    return infoField(*client_, "stats", "keyspace_hits") == "0" &&
           infoField(*client_, "stats", "keyspace_misses") == "0";
  })) << cmd({"INFO", "stats"});
  EXPECT_EQ(cmd({"GET", "nothing-here-either"}), "(nil)");
  EXPECT_EQ(parseInfo(cmd({"INFO", "commandstats"}))
                .at("Commandstats")
                .at("cmdstat_get")
                .rfind("calls=1,", 0),
            0u);
}

// ---- CLIENT LIST / KILL ----

struct Named {
  std::unique_ptr<Client> client;
  std::string id;
};

TEST_F(ParityTest, ClientListAndKillSeeTheClientsOfEveryWorker) {
  start(2, 4);
  std::vector<Named> clients;
  for (int i = 0; i < 12; ++i) {
    Named n{std::make_unique<Client>(proxy_->port()), ""};
    ASSERT_EQ(n.client->cmd({"CLIENT", "SETNAME", "c" + std::to_string(i)}), "OK");
    n.id = n.client->cmd({"CLIENT", "ID"}).substr(10);
    clients.push_back(std::move(n));
  }
  // SO_REUSEPORT spread them over the workers.
  int busy_workers = 0;
  for (int w = 0; w < 4; ++w) {
    busy_workers +=
        infoField(*client_, "clients", "worker" + std::to_string(w) + "_clients") != "0";
  }
  EXPECT_GE(busy_workers, 2);
  const std::string list = cmd({"CLIENT", "LIST"});
  for (size_t i = 0; i < clients.size(); ++i) {
    EXPECT_NE(list.find("id=" + clients[i].id + " "), std::string::npos) << list;
    EXPECT_NE(list.find(" name=c" + std::to_string(i) + " "), std::string::npos) << list;
  }
  EXPECT_NE(list.find(" cmd=client|id user=default redir=-1 resp=2\n"), std::string::npos) << list;
  EXPECT_NE(list.find(" cmd=client|list user=default"), std::string::npos) << "the caller's own";
  EXPECT_EQ(std::count(list.begin(), list.end(), '\n'), 13);
  const std::string some = cmd({"CLIENT", "LIST", "ID", clients[3].id, clients[7].id});
  EXPECT_EQ(std::count(some.begin(), some.end(), '\n'), 2) << some;
  EXPECT_EQ(some.rfind("id=" + clients[3].id + " ", 0), 0u) << "in id order: " << some;

  // KILL ID: each client, whichever worker serves it.
  for (size_t i = 0; i < 6; ++i) {
    EXPECT_EQ(cmd({"CLIENT", "KILL", "ID", clients[i].id}), "(integer) 1");
    EXPECT_EQ(clients[i].client->cmd({"PING"}).rfind("(io-error)", 0), 0u) << i;
  }
  EXPECT_EQ(cmd({"CLIENT", "KILL", "ID", clients[0].id}), "(integer) 0");
  // ADDR (and the old form) and LADDR.
  const std::string info6 = clients[6].client->cmd({"CLIENT", "INFO"});
  const std::string addr6 =
      info6.substr(info6.find(" addr=") + 6,
                   info6.find(' ', info6.find(" addr=") + 1) - info6.find(" addr=") - 6);
  EXPECT_EQ(cmd({"CLIENT", "KILL", "ADDR", addr6}), "(integer) 1");
  const std::string info7 = clients[7].client->cmd({"CLIENT", "INFO"});
  const std::string addr7 =
      info7.substr(info7.find(" addr=") + 6,
                   info7.find(' ', info7.find(" addr=") + 1) - info7.find(" addr=") - 6);
  EXPECT_EQ(cmd({"CLIENT", "KILL", addr7}), "OK");
  EXPECT_EQ(clients[7].client->cmd({"PING"}).rfind("(io-error)", 0), 0u);
  // TYPE pubsub, and MAXAGE (Redis 7.4) that no client is old enough for.
  RawConn subscriber(proxy_->port());
  ASSERT_TRUE(subscriber.sendAll(encodeCommand({"SUBSCRIBE", "news"})));
  ASSERT_NE(subscriber.readUntil(":1\r\n", 5s).find("subscribe"), std::string::npos);
  const std::string pubsub = cmd({"CLIENT", "LIST", "TYPE", "pubsub"});
  EXPECT_EQ(std::count(pubsub.begin(), pubsub.end(), '\n'), 1) << pubsub;
  EXPECT_NE(pubsub.find(" flags=P db=0 sub=1 psub=0 "), std::string::npos) << pubsub;
  EXPECT_EQ(cmd({"CLIENT", "KILL", "MAXAGE", "100000"}), "(integer) 0");
  EXPECT_EQ(cmd({"CLIENT", "KILL", "TYPE", "pubsub"}), "(integer) 1");
  std::string rest;
  EXPECT_TRUE(subscriber.readToClose(&rest, 5s));
  EXPECT_EQ(cmd({"CLIENT", "KILL", "TYPE", "master"}), "(integer) 0");
  // USER and LADDR take every other client (SKIPME yes by default).
  EXPECT_EQ(cmd({"CLIENT", "KILL", "USER", "default", "LADDR",
                 "127.0.0.1:" + std::to_string(proxy_->port())}),
            "(integer) 4");
  for (size_t i = 8; i < clients.size(); ++i) {
    EXPECT_EQ(clients[i].client->cmd({"PING"}).rfind("(io-error)", 0), 0u) << i;
  }
  EXPECT_EQ(cmd({"PING"}), "PONG");
  // SKIPME no: the caller too, after its reply.
  RawConn self(proxy_->port());
  ASSERT_TRUE(self.sendAll(encodeCommand({"CLIENT", "KILL", "SKIPME", "no", "USER", "default"})));
  std::string reply;
  EXPECT_TRUE(self.readToClose(&reply, 5s));
  EXPECT_EQ(reply, ":2\r\n") << "itself and client_";
  EXPECT_EQ(cmd({"PING"}).rfind("(io-error)", 0), 0u);
}

TEST_F(ParityTest, ClientListAndKillAnswerRedisServersErrors) {
  start(2, 2);
  for (const std::vector<std::string>& argv :
       std::vector<std::vector<std::string>>{{"CLIENT", "KILL", "ID", "0"},
                                             {"CLIENT", "KILL", "ID", "abc"},
                                             {"CLIENT", "KILL", "TYPE", "foo"},
                                             {"CLIENT", "KILL", "USER", "nosuch"},
                                             {"CLIENT", "KILL", "SKIPME", "maybe"},
                                             {"CLIENT", "KILL", "ID", "5", "foo"},
                                             {"CLIENT", "KILL", "1.2.3.4:5"},
                                             {"CLIENT", "KILL", "ADDR", "1.2.3.4:5"},
                                             {"CLIENT", "KILL", "FOO", "bar"},
                                             {"CLIENT", "LIST", "ID", "abc"},
                                             {"CLIENT", "LIST", "TYPE", "foo"},
                                             {"CLIENT", "LIST", "foo"}}) {
    same(argv);
  }
}

}  // namespace
}  // namespace sp::test
