// Redis Cluster as the backend: a real cluster built with redis-cli --cluster on loopback, and the
// proxy in front of it (--cluster seeds). Routing agrees with redis-cli -c; live resharding under
// a verifying load shows no error and no mismatch and really exercises MOVED/ASK.
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <sstream>

#include "harness.h"
#include "verify_load.h"

namespace sp::test {
namespace {

// A port whose cluster bus port (port + 10000) is free as well.
uint16_t freeClusterPort() {
  for (;;) {
    const uint16_t port = freePort();
    if (port > 55000) {
      continue;
    }
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons(static_cast<uint16_t>(port + 10000));
    const bool ok = ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
    ::close(fd);
    if (ok) {
      return port;
    }
  }
}

class ClusterNode {
 public:
  ClusterNode() : port_(freeClusterPort()) { start(); }
  uint16_t port() const { return port_; }
  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }
  void kill9() { process_->stop(SIGKILL); }
  std::string id() {
    Client c(port_);
    return c.cmd({"CLUSTER", "MYID"});
  }

 private:
  void start() {
    process_ = std::make_unique<Process>(
        std::vector<std::string>{"/usr/bin/redis-server", "--port", std::to_string(port_), "--bind",
                                 "127.0.0.1", "--cluster-enabled", "yes", "--cluster-config-file",
                                 dir_.path() + "/nodes.conf", "--cluster-node-timeout", "2000",
                                 "--save", "", "--appendonly", "no", "--dir", dir_.path()},
        dir_.path() + "/redis.log");
    EXPECT_TRUE(waitForListener(*process_, port_, std::chrono::seconds(10))) << process_->log();
  }
  TempDir dir_;
  uint16_t port_;
  std::unique_ptr<Process> process_;
};

bool clusterOk(const std::vector<std::unique_ptr<ClusterNode>>& nodes, size_t skip = SIZE_MAX) {
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (i == skip) {
      continue;
    }
    Client c(nodes[i]->port());
    if (c.cmd({"CLUSTER", "INFO"}).find("cluster_state:ok") == std::string::npos) {
      return false;
    }
  }
  return true;
}

bool waitFor(const std::function<bool()>& cond, std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  while (Clock::now() < deadline) {
    if (cond()) {
      return true;
    }
    std::this_thread::sleep_for(milliseconds(100));
  }
  return cond();
}

class ClusterBackendTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string addrs;
    for (int i = 0; i < 6; ++i) {
      nodes_.push_back(std::make_unique<ClusterNode>());
      addrs += " " + nodes_.back()->address();
    }
    const std::string out = commandOutput("redis-cli --cluster create" + addrs +
                                          " --cluster-replicas 1 --cluster-yes 2>&1");
    ASSERT_NE(out.find("All 16384 slots covered"), std::string::npos) << out;
    ASSERT_TRUE(waitFor([&] { return clusterOk(nodes_); }, std::chrono::seconds(30)));
    // Every node must see the three replicas attached, or a failover has no one to promote.
    ASSERT_TRUE(waitFor(
        [&] {
          for (const auto& node : nodes_) {
            const std::string all =
                commandOutput("redis-cli -p " + std::to_string(node->port()) + " CLUSTER NODES");
            size_t replicas = 0;
            for (size_t at = all.find("slave"); at != std::string::npos;
                 at = all.find("slave", at + 1)) {
              ++replicas;
            }
            if (replicas != 3) {
              return false;
            }
          }
          return true;
        },
        std::chrono::seconds(30)));
    // And every replica must have finished its first sync: a replica that never synced counts
    // as too stale to be promoted, so a killed master would never be failed over.
    ASSERT_TRUE(waitFor(
        [&] {
          for (const auto& node : nodes_) {
            Client n(node->port());
            const std::string info = n.cmd({"INFO", "replication"});
            if (info.find("role:slave") != std::string::npos &&
                info.find("master_link_status:up") == std::string::npos) {
              return false;
            }
          }
          return true;
        },
        std::chrono::seconds(30)));
    proxy_ = std::make_unique<ProxyProcess>(
        "", 2,
        std::vector<std::string>{"--cluster", nodes_[0]->address() + "," + nodes_[1]->address()});
  }

  // The live masters, by CLUSTER NODES of node 0: address -> node id.
  std::map<std::string, std::string> masterIds() {
    std::map<std::string, std::string> ids;  // address -> id
    std::string raw =
        commandOutput("redis-cli -p " + std::to_string(nodes_[0]->port()) + " CLUSTER NODES");
    std::istringstream in(raw);
    std::string line;
    while (std::getline(in, line)) {
      std::istringstream fields(line);
      std::string id, addr, flags;
      fields >> id >> addr >> flags;
      if (flags.find("master") != std::string::npos && flags.find("fail") == std::string::npos) {
        ids[addr.substr(0, addr.find('@'))] = id;
      }
    }
    return ids;
  }

  // Hand-made slot moves between two masters, for tests that need a redirect at a known moment.
  struct MasterPair {
    std::string a, b;        // addresses
    std::string a_id, b_id;  // node ids
    uint16_t a_port = 0, b_port = 0;
  };
  MasterPair twoMasters() {
    auto ids = masterIds();
    EXPECT_EQ(ids.size(), 3u);
    MasterPair m;
    m.a = ids.begin()->first;
    m.b = std::next(ids.begin())->first;
    m.a_id = ids[m.a];
    m.b_id = ids[m.b];
    m.a_port = static_cast<uint16_t>(std::stoi(m.a.substr(m.a.find(':') + 1)));
    m.b_port = static_cast<uint16_t>(std::stoi(m.b.substr(m.b.find(':') + 1)));
    return m;
  }

  // `count` never-written keys named prefix + N that the node at `port` serves, each in a slot
  // of its own.
  static std::vector<std::string> keysServedBy(uint16_t port, const std::string& prefix,
                                               size_t count) {
    Client direct(port);
    std::vector<std::string> keys;
    std::vector<std::string> slots;
    for (int i = 0; keys.size() < count && i < 100000; ++i) {
      const std::string k = prefix + std::to_string(i);
      const std::string slot = keySlot(direct, k);
      if (direct.cmd({"GET", k}).rfind("(error) MOVED", 0) != 0 &&
          std::find(slots.begin(), slots.end(), slot) == slots.end()) {
        slots.push_back(slot);
        keys.push_back(k);
      }
    }
    EXPECT_EQ(keys.size(), count);
    return keys;
  }

  // Gives `key`'s slot to B in both masters' views, then waits (5 s at most) until B serves the
  // key. Between the two SETSLOTs, A's gossip can win the slot back in B's view when A's config
  // epoch is the higher one; B then claims it again with a bumped epoch until its claim stands.
  static bool giveSlotToB(const MasterPair& m, Client& direct_a, Client& direct_b,
                          const std::string& key) {
    const std::string slot = keySlot(direct_a, key);
    if (direct_b.cmd({"CLUSTER", "SETSLOT", slot, "NODE", m.b_id}) != "OK" ||
        direct_a.cmd({"CLUSTER", "SETSLOT", slot, "NODE", m.b_id}) != "OK") {
      return false;
    }
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (direct_b.cmd({"EXISTS", key}).rfind("(error) MOVED", 0) == 0) {
      if (std::chrono::steady_clock::now() > deadline) {
        return false;
      }
      direct_b.cmd({"CLUSTER", "SETSLOT", slot, "NODE", m.b_id});
      direct_b.cmd({"CLUSTER", "BUMPEPOCH"});
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return true;
  }

  static std::string keySlot(Client& node, const std::string& key) {
    return node.cmd({"CLUSTER", "KEYSLOT", key}).substr(10);  // after "(integer) "
  }

  // A proxy (1 worker) in cluster mode that learns the topology once: no timer refresh, ping or
  // request timeout interferes with a test that stages redirects. `more` adds backend keys.
  static std::string stagedProxyConfig(const std::string& seed, const std::string& more) {
    return "backend:\n  mode: cluster\n  cluster_seeds: [" + seed +
           "]\n  cluster_refresh_ms: 600000\n  ping_interval_ms: 600000\n"
           "  timeout_ms: 20000\n" +
           more;
  }

  // Two keys of one slot of A (one hash tag), written through `proxy`; then the slot starts
  // migrating to B and the first key moves, so A answers TRYAGAIN to a multi-key command on it.
  struct HalfMigrated {
    std::string k1, k2, slot;
  };
  static HalfMigrated halfMigrateASlot(const MasterPair& m, Client& proxy,
                                       const std::string& prefix) {
    HalfMigrated h;
    const std::vector<std::string> tags = keysServedBy(m.a_port, prefix, 1);
    if (tags.empty()) {
      return h;
    }
    h.k1 = "{" + tags[0] + "}1";
    h.k2 = "{" + tags[0] + "}2";
    EXPECT_EQ(proxy.cmd({"MSET", h.k1, "one", h.k2, "two"}), "OK");
    Client direct_a(m.a_port);
    Client direct_b(m.b_port);
    h.slot = keySlot(direct_a, h.k1);
    EXPECT_EQ(direct_b.cmd({"CLUSTER", "SETSLOT", h.slot, "IMPORTING", m.a_id}), "OK");
    EXPECT_EQ(direct_a.cmd({"CLUSTER", "SETSLOT", h.slot, "MIGRATING", m.b_id}), "OK");
    EXPECT_EQ(direct_a.cmd({"MIGRATE", "127.0.0.1", std::to_string(m.b_port), h.k1, "0", "5000"}),
              "OK");
    EXPECT_EQ(direct_a.cmd({"MGET", h.k1, h.k2}).rfind("(error) TRYAGAIN", 0), 0u);
    return h;
  }

  // That proxy, with its config file in a directory of its own.
  struct StagedProxy {
    explicit StagedProxy(const std::string& seed, const std::string& more = "")
        : proxy(
              "", 1,
              {"--config", writeFile(dir.path() + "/proxy.yaml", stagedProxyConfig(seed, more))}) {}
    std::string config() const { return dir.path() + "/proxy.yaml"; }
    uint16_t port() const { return proxy.port(); }
    TempDir dir;
    ProxyProcess proxy;
  };

  // Writes the commands appended to `client` without reading their replies.
  static bool flushCommands(Client& client) {
    int done = 0;
    while (done == 0) {
      if (redisBufferWrite(client.ctx(), &done) != REDIS_OK) {
        return false;
      }
    }
    return true;
  }

  static uint64_t infoCounter(Client& proxy, const std::string& name) {
    const std::string stats = proxy.cmd({"INFO", "stats"});
    const size_t at = stats.find(name + ":");
    return at == std::string::npos ? 0 : std::stoull(stats.substr(at + name.size() + 1));
  }

  std::vector<std::unique_ptr<ClusterNode>> nodes_;
  std::unique_ptr<ProxyProcess> proxy_;
};

TEST_F(ClusterBackendTest, RoutingAgreesWithRedisCliCluster) {
  Client c(proxy_->port());
  const int kKeys = 10000;
  for (int i = 0; i < kKeys; i += 500) {
    for (int j = i; j < i + 500; ++j) {
      const std::string key =
          (j % 5 == 0 ? "{tag" + std::to_string(j % 37) + "}" : "") + "key:" + std::to_string(j);
      redisAppendCommand(c.ctx(), "SET %s v%d", key.c_str(), j);
    }
    for (int j = i; j < i + 500; ++j) {
      redisReply* r = nullptr;
      ASSERT_EQ(redisGetReply(c.ctx(), reinterpret_cast<void**>(&r)), REDIS_OK);
      ASSERT_EQ(render(r), "OK");
      freeReplyObject(r);
    }
  }
  // redis-cli -c follows the cluster's redirects itself: it must read back every value.
  TempDir dir;
  {
    std::ofstream script(dir.path() + "/gets.txt");
    for (int j = 0; j < kKeys; ++j) {
      script << "GET " << (j % 5 == 0 ? "{tag" + std::to_string(j % 37) + "}" : "") << "key:" << j
             << "\n";
    }
  }
  const std::string out = commandOutput("redis-cli -c -p " + std::to_string(nodes_[2]->port()) +
                                        " < " + dir.path() + "/gets.txt");
  std::istringstream lines(out);
  std::string line;
  int j = 0;
  int wrong = 0;
  while (std::getline(lines, line) && j < kKeys) {
    if (line.rfind("-> Redirected", 0) == 0) {
      continue;  // redis-cli -c reports each redirect it follows
    }
    wrong += line == "v" + std::to_string(j) ? 0 : 1;
    ++j;
  }
  EXPECT_EQ(j, kKeys);
  EXPECT_EQ(wrong, 0);
  // And the proxy agrees with what was written straight into the cluster.
  commandOutput("redis-cli -c -p " + std::to_string(nodes_[1]->port()) + " SET direct:1 d1");
  EXPECT_EQ(c.cmd({"GET", "direct:1"}), "d1");
  EXPECT_EQ(c.cmd({"MGET", "key:1", "key:2", "{tag5}key:5", "key:3"}), "[v1, v2, v5, v3]");
  EXPECT_EQ(c.cmd({"RENAME", "key:1", "key:2"}).rfind("(error) CROSSSLOT", 0), 0u);
}

TEST_F(ClusterBackendTest, LiveReshardingUnderLoadShowsNoErrors) {
  VerifyLoad load(proxy_->port(), 1, 4);
  std::this_thread::sleep_for(milliseconds(500));
  auto ids = masterIds();
  ASSERT_EQ(ids.size(), 3u);
  const std::string from = ids.begin()->second;
  const std::string to = std::next(ids.begin())->second;
  const std::string out = commandOutput(
      "redis-cli --cluster reshard " + nodes_[0]->address() + " --cluster-from " + from +
      " --cluster-to " + to + " --cluster-slots 1000 --cluster-yes --cluster-pipeline 10 2>&1");
  std::this_thread::sleep_for(milliseconds(1500));
  load.stop();
  EXPECT_EQ(load.mismatches(), 0u) << load.firstMismatch();
  EXPECT_EQ(load.errorsFor(0), 0u) << load.lastError(0);
  EXPECT_GT(load.okFor(0), 1000u);
  Client c(proxy_->port());
  const std::string stats = c.cmd({"INFO", "stats"});
  auto counter = [&](const std::string& name) {
    size_t at = stats.find(name + ":");
    return at == std::string::npos ? -1L : std::stol(stats.substr(at + name.size() + 1));
  };
  EXPECT_GT(counter("cluster_moved_redirects") + counter("cluster_ask_redirects"), 0)
      << "resharding did not exercise MOVED/ASK\n"
      << out.substr(0, 2000);
}

TEST_F(ClusterBackendTest, KilledMasterIsFailedOverWithoutRestart) {
  Client c(proxy_->port());
  // A key of node 0's slots (node 0 is a master: redis-cli --cluster create makes the first
  // three addresses the masters).
  std::string key;
  for (int i = 0; key.empty(); ++i) {
    const std::string k = "failover:" + std::to_string(i);
    Client direct(nodes_[0]->port());
    if (direct.cmd({"GET", k}).rfind("(error) MOVED", 0) != 0) {
      key = k;
    }
  }
  ASSERT_EQ(c.cmd({"SET", key, "before"}), "OK");
  {
    // Replication is asynchronous: make sure the replica has the write before its master dies,
    // or the promoted replica may come up without it. WAIT counts this connection's writes, so
    // repeat the write here (the replication stream is ordered, so the proxy's is there too).
    Client master(nodes_[0]->port());
    ASSERT_EQ(master.cmd({"SET", key, "before"}), "OK");
    ASSERT_EQ(master.cmd({"WAIT", "1", "10000"}), "(integer) 1") << "the replica never acked";
  }
  const pid_t pid = proxy_->process().pid();
  nodes_[0]->kill9();
  // The cluster notices (node timeout 2 s) and promotes node 0's replica: wait until a surviving
  // node serves the key's slot itself and the cluster is whole again.
  ASSERT_TRUE(waitFor(
      [&] {
        for (size_t i = 1; i < nodes_.size(); ++i) {
          Client n(nodes_[i]->port());
          const std::string role = n.cmd({"ROLE"});
          if (role.rfind("[master", 0) == 0 && n.cmd({"GET", key}) == "before") {
            return clusterOk(nodes_, 0);
          }
        }
        return false;
      },
      std::chrono::seconds(30)));
  const auto failed_over = Clock::now();
  std::string last;
  const bool written = waitFor(
      [&] {
        last = c.cmd({"SET", key, "after"});
        return last == "OK";
      },
      std::chrono::seconds(10));
  EXPECT_TRUE(written) << "last reply: " << last;
  EXPECT_EQ(c.cmd({"GET", key}), "after");
  EXPECT_LT(Clock::now() - failed_over, std::chrono::seconds(10));
  // Keys of the other masters kept working, and it is the same proxy process.
  EXPECT_EQ(c.cmd({"SET", "other:1", "x"}), "OK");
  EXPECT_EQ(proxy_->process().pid(), pid);
  EXPECT_FALSE(proxy_->process().exitedOnItsOwn());
  // Once the topology settles, no request of the load times out on a kept connection: the
  // proxy's per-shard errors stop growing.
  VerifyLoad load(proxy_->port(), 1, 2);
  std::this_thread::sleep_for(std::chrono::seconds(3));
  load.stop();
  EXPECT_EQ(load.mismatches(), 0u) << load.firstMismatch();
  EXPECT_EQ(load.errorsFor(0), 0u) << load.lastError(0);
  EXPECT_GT(load.okFor(0), 100u);
}

TEST_F(ClusterBackendTest, NewMasterAndRebalanceArePickedUp) {
  VerifyLoad load(proxy_->port(), 1, 2);
  auto extra = std::make_unique<ClusterNode>();
  const std::string add = commandOutput("redis-cli --cluster add-node " + extra->address() + " " +
                                        nodes_[0]->address() + " 2>&1");
  ASSERT_NE(add.find("[OK] New node added correctly"), std::string::npos) << add;
  // redis-cli plans the rebalance from what the nodes know: every node must have finished its
  // handshake with the new one (it is listed as a master, not in handshake), and the new node
  // must see every slot covered.
  ASSERT_TRUE(waitFor(
      [&] {
        if (commandOutput("redis-cli -p " + std::to_string(extra->port()) + " CLUSTER INFO")
                .find("cluster_state:ok") == std::string::npos) {
          return false;
        }
        for (const auto& node : nodes_) {
          std::istringstream in(
              commandOutput("redis-cli -p " + std::to_string(node->port()) + " CLUSTER NODES"));
          bool known = false;
          for (std::string line; std::getline(in, line);) {
            known = known || (line.find(extra->address() + "@") != std::string::npos &&
                              line.find("master") != std::string::npos &&
                              line.find("handshake") == std::string::npos);
          }
          if (!known) {
            return false;
          }
        }
        return true;
      },
      std::chrono::seconds(20)));
  // A rebalance refused because a node's view was still settling ("Nodes don't agree") is
  // retried; the load keeps running throughout.
  std::string out;
  for (int attempt = 0; attempt < 5 && out.find("Moving") == std::string::npos; ++attempt) {
    if (attempt > 0) {
      std::this_thread::sleep_for(std::chrono::seconds(1));
    }
    out = commandOutput("redis-cli --cluster rebalance " + nodes_[0]->address() +
                        " --cluster-use-empty-masters --cluster-pipeline 10 2>&1");
  }
  ASSERT_NE(out.find("Moving"), std::string::npos) << out.substr(0, 2000);
  // The proxy's shard list gains the new master without a restart.
  Client c(proxy_->port());
  std::string shards;
  EXPECT_TRUE(waitFor(
      [&] {
        shards = c.cmd({"PROXY", "SHARDS"});
        return shards.find(extra->address()) != std::string::npos;
      },
      std::chrono::seconds(10)))
      << shards;
  std::this_thread::sleep_for(std::chrono::seconds(1));
  load.stop();
  EXPECT_EQ(load.mismatches(), 0u) << load.firstMismatch() << "\n" << proxy_->process().log();
  EXPECT_EQ(load.errorsFor(0), 0u) << load.lastError(0) << "\n" << proxy_->process().log();
  EXPECT_GT(load.okFor(0), 1000u);
  // And keys on the new master are served straight from it: write one through the proxy, read
  // it from the node directly.
  std::string key;
  for (int i = 0; key.empty() && i < 100000; ++i) {
    const std::string k = "newmaster:" + std::to_string(i);
    Client direct(extra->port());
    if (direct.cmd({"GET", k}).rfind("(error) MOVED", 0) != 0) {
      key = k;
    }
  }
  ASSERT_FALSE(key.empty());
  EXPECT_EQ(c.cmd({"SET", key, "fresh"}), "OK");
  Client direct(extra->port());
  EXPECT_EQ(direct.cmd({"GET", key}), "fresh");
}

// A connection replaced by a topology change (here a reload that changes backend.connections)
// finishes the requests already sent on it. When the last of them is answered with -MOVED, that
// redirect is followed like any other: the client gets the value, never the MOVED.
TEST_F(ClusterBackendTest, RedirectOnAReplacedConnectionIsFollowed) {
  const MasterPair m = twoMasters();
  // Two never-written keys of A's slots: `moved` changes owner, `held` keeps A's connection busy.
  const std::vector<std::string> keys = keysServedBy(m.a_port, "replaced:", 2);
  ASSERT_EQ(keys.size(), 2u);
  const std::string& moved = keys[0];
  const std::string& held = keys[1];
  StagedProxy proxy(m.b, "  connections: 1\n");
  Client c(proxy.port());
  ASSERT_EQ(c.cmd({"GET", held}), "(nil)");
  // Move the slot of `moved` from A to B by hand (it holds no keys), and write the key on B.
  Client direct_a(m.a_port);
  Client direct_b(m.b_port);
  ASSERT_TRUE(giveSlotToB(m, direct_a, direct_b, moved));
  ASSERT_EQ(direct_b.cmd({"SET", moved, "on-b"}), "OK");
  // A holds its next write for 5 s (ample for the reload below, even under a sanitizer): SET
  // `held` blocks the proxy's connection to A, and GET `moved`, which the proxy still routes to
  // A, waits behind it as the last request sent there.
  ASSERT_EQ(direct_a.cmd({"CLIENT", "PAUSE", "5000", "WRITE"}), "OK");
  redisAppendCommand(c.ctx(), "SET %s v", held.c_str());
  redisAppendCommand(c.ctx(), "GET %s", moved.c_str());
  ASSERT_TRUE(flushCommands(c));
  std::this_thread::sleep_for(milliseconds(300));
  // Replace every backend connection while both requests wait on A.
  writeFile(proxy.config(), stagedProxyConfig(m.b, "  connections: 2\n"));
  Client admin(proxy.port());
  ASSERT_EQ(admin.cmd({"PROXY", "RELOAD"}), "OK") << proxy.proxy.process().log();
  for (const std::string expected : {"OK", "on-b"}) {
    redisReply* r = nullptr;
    ASSERT_EQ(redisGetReply(c.ctx(), reinterpret_cast<void**>(&r)), REDIS_OK);
    EXPECT_EQ(render(r), expected);
    freeReplyObject(r);
  }
  EXPECT_EQ(infoCounter(admin, "cluster_moved_redirects"), 1u);
}

// Each fragment of a split command has its own redirect budget: an MGET over more moved slots
// than backend.max_redirects gets every value, one MOVED per fragment.
TEST_F(ClusterBackendTest, EveryFragmentOfASplitFollowsItsRedirect) {
  const MasterPair m = twoMasters();
  const size_t kSlots = 12;  // more than max_redirects (5)
  const std::vector<std::string> keys = keysServedBy(m.a_port, "split:", kSlots);
  ASSERT_EQ(keys.size(), kSlots);
  StagedProxy proxy(m.b);
  Client c(proxy.port());
  ASSERT_EQ(c.cmd({"GET", keys[0]}), "(nil)");  // the proxy is up and has the topology
  Client direct_a(m.a_port);
  Client direct_b(m.b_port);
  std::vector<std::string> mget = {"MGET"};
  std::string expected;
  for (size_t i = 0; i < kSlots; ++i) {
    ASSERT_TRUE(giveSlotToB(m, direct_a, direct_b, keys[i]));
    ASSERT_EQ(direct_b.cmd({"SET", keys[i], "v" + std::to_string(i)}), "OK");
    mget.push_back(keys[i]);
    expected += (i == 0 ? "[v" : ", v") + std::to_string(i);
  }
  // All twelve fragments go to A (the proxy's snapshot predates the moves) and come back MOVED.
  EXPECT_EQ(c.cmd(mget), expected + "]");
  EXPECT_EQ(infoCounter(c, "cluster_moved_redirects"), kSlots);
}

// A RESP3 client's requests follow MOVED on RESP3 connections too: its replies keep their RESP3
// types (a map, the null type) after the redirect, on both a plain and a split request.
TEST_F(ClusterBackendTest, Resp3ClientsFollowRedirectsToo) {
  const MasterPair m = twoMasters();
  const std::vector<std::string> keys = keysServedBy(m.a_port, "r3:", 3);
  ASSERT_EQ(keys.size(), 3u);
  StagedProxy proxy(m.b);
  RawConn c(proxy.port());
  ASSERT_TRUE(c.sendAll("*2\r\n$5\r\nHELLO\r\n$1\r\n3\r\n"));
  ASSERT_NE(c.readUntil("$7\r\nmodules\r\n*0\r\n", std::chrono::seconds(10)).find("proto\r\n:3"),
            std::string::npos);
  Client direct_a(m.a_port);
  Client direct_b(m.b_port);
  std::string mget = "*4\r\n$4\r\nMGET\r\n";
  for (const std::string& key : keys) {
    ASSERT_TRUE(giveSlotToB(m, direct_a, direct_b, key));
    mget += "$" + std::to_string(key.size()) + "\r\n" + key + "\r\n";
  }
  ASSERT_EQ(direct_b.cmd({"HSET", keys[0], "f", "v"}), "(integer) 1");
  ASSERT_EQ(direct_b.cmd({"SET", keys[1], "x"}), "OK");
  const std::string hgetall =
      "*2\r\n$7\r\nHGETALL\r\n$" + std::to_string(keys[0].size()) + "\r\n" + keys[0] + "\r\n";
  ASSERT_TRUE(c.sendAll(hgetall));
  EXPECT_EQ(c.readUntil("$1\r\nv\r\n", std::chrono::seconds(10)), "%1\r\n$1\r\nf\r\n$1\r\nv\r\n");
  // MGET: the hash is a wrong type for GET, hence a null, as redis-server answers MGET.
  ASSERT_TRUE(c.sendAll(mget));
  EXPECT_EQ(c.readUntil("_\r\n$1\r\nx\r\n_\r\n", std::chrono::seconds(10)),
            "*3\r\n_\r\n$1\r\nx\r\n_\r\n");
  // At least the HGETALL's (the refresh its MOVED asks for may come before the MGET).
  Client admin(proxy.port());
  EXPECT_GE(infoCounter(admin, "cluster_moved_redirects"), 1u);
}

// -TRYAGAIN (a multi-key command on a slot whose keys are half migrated) is retried after a
// pause; once the migration completes, the client gets the values and never the TRYAGAIN.
TEST_F(ClusterBackendTest, TryAgainDuringAMigrationIsRetried) {
  const MasterPair m = twoMasters();
  StagedProxy proxy(m.b);
  Client c(proxy.port());
  const HalfMigrated h = halfMigrateASlot(m, c, "tryagain");
  ASSERT_FALSE(h.slot.empty());
  redisAppendCommand(c.ctx(), "MGET %s %s", h.k1.c_str(), h.k2.c_str());
  ASSERT_TRUE(flushCommands(c));
  // While the proxy retries, finish the migration: the last key, then the slot's new owner.
  std::this_thread::sleep_for(milliseconds(20));
  Client direct_a(m.a_port);
  Client direct_b(m.b_port);
  ASSERT_EQ(direct_a.cmd({"MIGRATE", "127.0.0.1", std::to_string(m.b_port), h.k2, "0", "5000"}),
            "OK");
  ASSERT_EQ(direct_b.cmd({"CLUSTER", "SETSLOT", h.slot, "NODE", m.b_id}), "OK");
  ASSERT_EQ(direct_a.cmd({"CLUSTER", "SETSLOT", h.slot, "NODE", m.b_id}), "OK");
  redisReply* r = nullptr;
  ASSERT_EQ(redisGetReply(c.ctx(), reinterpret_cast<void**>(&r)), REDIS_OK);
  EXPECT_EQ(render(r), "[one, two]");
  freeReplyObject(r);
  Client admin(proxy.port());
  EXPECT_GT(infoCounter(admin, "cluster_tryagain_replies"), 0u);
}

// A TRYAGAIN that outlasts the retries reaches the client as it is, and the proxy goes on.
TEST_F(ClusterBackendTest, TryAgainPastTheRetriesReachesTheClient) {
  const MasterPair m = twoMasters();
  StagedProxy proxy(m.b);
  Client c(proxy.port());
  const HalfMigrated h = halfMigrateASlot(m, c, "stuck");
  ASSERT_FALSE(h.slot.empty());
  // The migration never finishes: after its retries the proxy answers the TRYAGAIN.
  EXPECT_EQ(c.cmd({"MGET", h.k1, h.k2}).rfind("(error) TRYAGAIN", 0), 0u);
  EXPECT_EQ(infoCounter(c, "cluster_tryagain_replies"), 11u);  // the first, then 10 retries
  // A client that goes while its request waits for a retry: the proxy drops the request.
  {
    Client gone(proxy.port());
    redisAppendCommand(gone.ctx(), "MGET %s %s", h.k1.c_str(), h.k2.c_str());
    ASSERT_TRUE(flushCommands(gone));
    std::this_thread::sleep_for(milliseconds(10));
  }
  std::this_thread::sleep_for(milliseconds(800));  // past its retries
  EXPECT_EQ(c.cmd({"PING"}), "PONG");
  EXPECT_EQ(c.cmd({"MGET", h.k1, h.k2}).rfind("(error) TRYAGAIN", 0), 0u);
  EXPECT_FALSE(proxy.proxy.process().exitedOnItsOwn());
}

TEST_F(ClusterBackendTest, ReplicaReadsUseTheClusterReplicas) {
  TempDir dir;
  const std::string conf = writeFile(dir.path() + "/proxy.yaml",
                                     "backend:\n  mode: cluster\n  cluster_seeds: [" +
                                         nodes_[1]->address() + "]\n  read_from: replica-only\n");
  ProxyProcess replica_proxy("", 1, {"--config", conf});
  Client c(replica_proxy.port());
  const int kKeys = 300;
  for (int i = 0; i < kKeys; ++i) {
    ASSERT_EQ(c.cmd({"SET", "rr:" + std::to_string(i), std::to_string(i)}), "OK");
  }
  // Replication is asynchronous: wait until every replica has caught up with its master.
  ASSERT_TRUE(waitFor(
      [&] {
        for (const auto& node : nodes_) {
          Client n(node->port());
          const std::string info = n.cmd({"INFO", "keyspace"});
          const std::string role = n.cmd({"ROLE"});
          if (role.rfind("[slave", 0) == 0 && info.find("keys=") == std::string::npos) {
            return false;
          }
        }
        return true;
      },
      std::chrono::seconds(10)));
  // CLUSTER SLOTS lists a replica only once its replication offset is non-zero (after the first
  // writes): the periodic refresh brings the replicas in, with a READONLY connection each.
  std::string shards;
  ASSERT_TRUE(waitFor(
      [&] {
        shards = c.cmd({"PROXY", "SHARDS"});
        size_t up = 0;
        for (size_t at = shards.find("replica_connections_up, (integer) 1,");
             at != std::string::npos;
             at = shards.find("replica_connections_up, (integer) 1,", at + 1)) {
          ++up;
        }
        return up == 3;
      },
      std::chrono::seconds(15)))
      << shards;
  for (int i = 0; i < kKeys; ++i) {
    ASSERT_EQ(c.cmd({"GET", "rr:" + std::to_string(i)}), std::to_string(i)) << i;
  }
  // Every GET was served by a replica (READONLY on its connection), none by a master.
  uint64_t replica_gets = 0;
  uint64_t master_gets = 0;
  for (const auto& node : nodes_) {
    Client n(node->port());
    const std::string stats = n.cmd({"INFO", "commandstats"});
    const size_t at = stats.find("cmdstat_get:calls=");
    const uint64_t calls = at == std::string::npos ? 0 : std::stoull(stats.substr(at + 18));
    (n.cmd({"ROLE"}).rfind("[slave", 0) == 0 ? replica_gets : master_gets) += calls;
  }
  EXPECT_EQ(replica_gets, static_cast<uint64_t>(kKeys));
  EXPECT_EQ(master_gets, 0u);
  // Writes still go to the masters.
  EXPECT_EQ(c.cmd({"SET", "rr:w", "1"}), "OK");
}

}  // namespace
}  // namespace sp::test
