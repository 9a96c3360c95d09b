// Ordering and flow control through the proxy: 50 concurrent clients pipelining mixed commands
// with every reply checked against an exact model, a client that pipelines a million GETs
// without reading (bounded proxy memory, replies in order), and clients that vanish mid-pipeline.
#include <gtest/gtest.h>
#include <hiredis/hiredis.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <latch>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "integration/harness.h"

namespace sp::test {
namespace {

using Clock = std::chrono::steady_clock;

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kAddressSanitizer = true;
#else
constexpr bool kAddressSanitizer = false;
#endif
using std::chrono::milliseconds;

// One client's key namespace and the exact state the shards hold for it.
class ClientModel {
 public:
  explicit ClientModel(int id) : prefix_("pl" + std::to_string(id) + ":"), rng_(1000 + id) {}

  // Picks the next command and returns the reply it must get, rendered as Client::cmd does.
  std::string next(int seq, std::vector<std::string>* argv) {
    argv->clear();
    const int op = pick(100);
    if (op < 20) {  // SET
      int k = pick(kStrings);
      std::string v = "v" + prefix_ + std::to_string(seq);
      *argv = {"SET", strKey(k), v};
      strings_[k] = v;
      return "OK";
    }
    if (op < 40) {  // GET
      int k = pick(kStrings);
      *argv = {"GET", strKey(k)};
      return strValue(k);
    }
    if (op < 55) {  // INCR
      int k = pick(kCounters);
      *argv = {"INCR", prefix_ + "n" + std::to_string(k)};
      return "(integer) " + std::to_string(++counters_[k]);
    }
    if (op < 65) {  // LPUSH
      int k = pick(kLists);
      *argv = {"LPUSH", prefix_ + "l" + std::to_string(k), std::to_string(seq)};
      return "(integer) " + std::to_string(++lists_[k]);
    }
    if (op < 75) {  // HSET
      int k = pick(kHashes);
      int f = pick(8);
      *argv = {"HSET", prefix_ + "h" + std::to_string(k), "f" + std::to_string(f),
               std::to_string(seq)};
      return hashes_[k].insert(f).second ? "(integer) 1" : "(integer) 0";
    }
    if (op < 90) {  // MGET over three string keys (usually on different shards)
      *argv = {"MGET"};
      std::string expected = "[";
      for (int i = 0; i < 3; ++i) {
        int k = pick(kStrings);
        argv->push_back(strKey(k));
        expected += (i > 0 ? ", " : "") + strValue(k);
      }
      return expected + "]";
    }
    // DEL of a key of any type.
    switch (pick(4)) {
      case 0: {
        int k = pick(kStrings);
        *argv = {"DEL", strKey(k)};
        return existed(strings_.erase(k) > 0);
      }
      case 1: {
        int k = pick(kCounters);
        *argv = {"DEL", prefix_ + "n" + std::to_string(k)};
        return existed(counters_.erase(k) > 0);
      }
      case 2: {
        int k = pick(kLists);
        *argv = {"DEL", prefix_ + "l" + std::to_string(k)};
        return existed(lists_.erase(k) > 0);
      }
      default: {
        int k = pick(kHashes);
        *argv = {"DEL", prefix_ + "h" + std::to_string(k)};
        return existed(hashes_.erase(k) > 0);
      }
    }
  }

  // A final MGET over every string key and what it must return.
  std::string finalCheck(std::vector<std::string>* argv) {
    *argv = {"MGET"};
    std::string expected = "[";
    for (int k = 0; k < kStrings; ++k) {
      argv->push_back(strKey(k));
      expected += (k > 0 ? ", " : "") + strValue(k);
    }
    return expected + "]";
  }

 private:
  static constexpr int kStrings = 40;
  static constexpr int kCounters = 10;
  static constexpr int kLists = 10;
  static constexpr int kHashes = 10;

  int pick(int n) { return static_cast<int>(rng_() % static_cast<uint32_t>(n)); }
  std::string strKey(int k) const { return prefix_ + "s" + std::to_string(k); }
  std::string strValue(int k) const {
    auto it = strings_.find(k);
    return it == strings_.end() ? "(nil)" : it->second;
  }
  static std::string existed(bool yes) { return yes ? "(integer) 1" : "(integer) 0"; }

  std::string prefix_;
  std::mt19937 rng_;
  std::map<int, std::string> strings_;
  std::map<int, long> counters_;
  std::map<int, long> lists_;
  std::map<int, std::set<int>> hashes_;
};

void appendArgv(redisContext* ctx, const std::vector<std::string>& argv) {
  std::vector<const char*> ptrs;
  std::vector<size_t> lens;
  for (const auto& a : argv) {
    ptrs.push_back(a.data());
    lens.push_back(a.size());
  }
  redisAppendCommandArgv(ctx, static_cast<int>(argv.size()), ptrs.data(), lens.data());
}

TEST(PipelineTest, FiftyClientsPipelineMixedCommandsInOrder) {
  Deployment env(16);
  constexpr int kClients = 50;
  constexpr int kCommands = 10000;
  constexpr int kWindow = 1000;  // commands written before their replies are read

  std::latch start(kClients);
  std::vector<std::string> failures(kClients);
  std::vector<int> checked(kClients, 0);
  std::vector<std::thread> threads;
  for (int c = 0; c < kClients; ++c) {
    threads.emplace_back([&, c] {
      Client client(env.port());
      start.arrive_and_wait();
      if (!client.ok()) {
        failures[c] = "connect failed";
        return;
      }
      ClientModel model(c);
      std::vector<std::string> argv;
      std::vector<std::string> expected;
      std::vector<std::string> sent;
      for (int base = 0; base < kCommands && failures[c].empty(); base += kWindow) {
        expected.clear();
        sent.clear();
        for (int i = base; i < base + kWindow; ++i) {
          expected.push_back(model.next(i, &argv));
          sent.push_back(argv[0] + " " + argv[1]);
          appendArgv(client.ctx(), argv);
        }
        for (int i = 0; i < kWindow; ++i) {
          void* raw = nullptr;
          if (redisGetReply(client.ctx(), &raw) != REDIS_OK || raw == nullptr) {
            failures[c] = "reply " + std::to_string(base + i) + ": " + client.ctx()->errstr;
            break;
          }
          auto* reply = static_cast<redisReply*>(raw);
          std::string got = render(reply);
          freeReplyObject(reply);
          if (got != expected[i]) {
            failures[c] = "reply " + std::to_string(base + i) + " to '" + sent[i] +
                          "': expected '" + expected[i] + "', got '" + got + "'";
            break;
          }
          ++checked[c];
        }
      }
      if (failures[c].empty()) {
        std::string want = model.finalCheck(&argv);
        std::string got = client.cmd(argv);
        if (got != want) {
          failures[c] = "final state: expected " + want + ", got " + got;
        }
      }
    });
  }
  for (auto& t : threads) {
    t.join();
  }
  int total = 0;
  for (int c = 0; c < kClients; ++c) {
    EXPECT_EQ(failures[c], "") << "client " << c;
    total += checked[c];
  }
  EXPECT_EQ(total, kClients * kCommands);
  if (env.proxy() != nullptr) {
    EXPECT_TRUE(env.proxy()->process().alive());
  }
}

// Expected bytes of reply i to "GET bp:<i % kKeys>".
// Values of ~100 bytes make the replies (~110 MB in all) far larger than the socket buffers, so a
// proxy that kept reading without bound would have to hold them.
constexpr int kKeys = 1000;
std::string bpValue(int j) { return "value-" + std::to_string(j) + "-" + std::string(90, 'x'); }
std::string bpReply(int i) {
  std::string v = bpValue(i % kKeys);
  return "$" + std::to_string(v.size()) + "\r\n" + v + "\r\n";
}

TEST(PipelineTest, MillionGetsWithoutReadingKeepMemoryBounded) {
  Deployment env(4);
  constexpr int kRequests = 1000000;
  constexpr long kRssGrowthBoundKb = 100 * 1024;  // well below the ~110 MB of replies
  constexpr long kRssBoundKb = 300 * 1024;
  {
    Client setup(env.port());
    for (int base = 0; base < kKeys; base += 100) {
      std::vector<std::string> mset = {"MSET"};
      for (int j = base; j < base + 100; ++j) {
        mset.push_back("bp:" + std::to_string(j));
        mset.push_back(bpValue(j));
      }
      ASSERT_EQ(setup.cmd(mset), "OK");
    }
  }
  const pid_t pid = env.direct() ? env.shards()[0]->process().pid() : env.proxy()->process().pid();
  const long rss_start = rssKb(pid);

  std::atomic<bool> stop_monitor{false};
  std::atomic<long> rss_max{rss_start};
  std::thread monitor([&] {
    while (!stop_monitor.load()) {
      long r = rssKb(pid);
      if (r > rss_max.load()) {
        rss_max.store(r);
      }
      std::this_thread::sleep_for(milliseconds(20));
    }
  });

  RawConn conn(env.port());
  std::atomic<int> sent{0};
  std::atomic<bool> send_failed{false};
  // A guard against a hang, not a speed bound (ASAN makes the proxy several times slower).
  const auto test_deadline = Clock::now() + std::chrono::seconds(kAddressSanitizer ? 150 : 60);
  std::thread writer([&] {
    std::string batch;
    for (int base = 0; base < kRequests; base += 1000) {
      batch.clear();
      for (int i = base; i < base + 1000; ++i) {
        std::string key = "bp:" + std::to_string(i % kKeys);
        batch += "*2\r\n$3\r\nGET\r\n$" + std::to_string(key.size()) + "\r\n" + key + "\r\n";
      }
      if (!conn.sendAll(batch)) {
        send_failed.store(true);
        return;
      }
      sent.store(base + 1000);
    }
  });

  // Do not read until the writer has stalled (the proxy stopped reading) or finished.
  int last = -1;
  auto last_change = Clock::now();
  while (sent.load() < kRequests && Clock::now() - last_change < milliseconds(700) &&
         Clock::now() < test_deadline - std::chrono::seconds(20)) {
    int now = sent.load();
    if (now != last) {
      last = now;
      last_change = Clock::now();
    }
    std::this_thread::sleep_for(milliseconds(10));
  }
  const int sent_before_reading = sent.load();
  const long rss_stalled = rssKb(pid);

  // Now read everything, byte-exact and in order.
  std::string expected;
  size_t expected_pos = 0;
  int next_reply = 0;
  size_t received = 0;
  size_t mismatch_at = std::string::npos;
  std::string in;
  bool closed = false;
  while (next_reply < kRequests || expected_pos < expected.size()) {
    if (Clock::now() > test_deadline) {
      break;
    }
    in.clear();
    RawConn::Read r = conn.readSome(&in, milliseconds(2000));
    if (r == RawConn::Read::kTimeout) {
      continue;
    }
    if (r != RawConn::Read::kData) {
      closed = true;
      break;
    }
    while (expected.size() - expected_pos < in.size() && next_reply < kRequests) {
      if (expected_pos > (1u << 20)) {
        expected.erase(0, expected_pos);
        expected_pos = 0;
      }
      for (int n = 0; n < 1000 && next_reply < kRequests; ++n) {
        expected += bpReply(next_reply++);
      }
    }
    size_t cmp = std::min(in.size(), expected.size() - expected_pos);
    if (std::memcmp(in.data(), expected.data() + expected_pos, cmp) != 0 || cmp < in.size()) {
      mismatch_at = received;
      break;
    }
    expected_pos += cmp;
    received += cmp;
  }
  writer.join();
  stop_monitor.store(true);
  monitor.join();

  const size_t total_expected = [] {
    size_t n = 0;
    for (int j = 0; j < kKeys; ++j) {
      n += bpReply(j).size();
    }
    return n * (kRequests / kKeys);
  }();
  std::printf(
      "backpressure: sent %d of %d before reading; RSS kB start %ld, stalled %ld, max %ld\n",
      sent_before_reading, kRequests, rss_start, rss_stalled, rss_max.load());
  EXPECT_FALSE(send_failed.load());
  EXPECT_FALSE(closed) << "connection closed after " << received << " bytes";
  EXPECT_EQ(mismatch_at, std::string::npos) << "reply bytes differ at offset " << mismatch_at;
  EXPECT_EQ(received, total_expected);
  if (!env.direct()) {
    if (!kAddressSanitizer) {  // ASAN's quarantine keeps freed buffers resident
      EXPECT_LT(rss_max.load() - rss_start, kRssGrowthBoundKb);
      EXPECT_LT(rss_max.load(), kRssBoundKb);
    }
    EXPECT_TRUE(env.proxy()->process().alive());
    Client after(env.port());
    EXPECT_EQ(after.cmd({"PING"}), "PONG");
  }
}

TEST(PipelineTest, ClientClosingMidPipelineDoesNotDisturbOthers) {
  Deployment env(2);
  for (int round = 0; round < 10; ++round) {
    RawConn conn(env.port());
    std::string pipeline;
    for (int i = 0; i < 1000; ++i) {
      std::string key = "cm:" + std::to_string(i);
      std::string val = "r" + std::to_string(round);
      pipeline += "*3\r\n$3\r\nSET\r\n$" + std::to_string(key.size()) + "\r\n" + key + "\r\n$" +
                  std::to_string(val.size()) + "\r\n" + val + "\r\n";
      pipeline += "*2\r\n$3\r\nGET\r\n$" + std::to_string(key.size()) + "\r\n" + key + "\r\n";
    }
    ASSERT_TRUE(conn.sendAll(pipeline));
    if (round % 2 == 1) {
      std::string some;
      conn.readSome(&some, milliseconds(100));  // read a little, then vanish
    }
    conn.close();
  }
  if (env.proxy() != nullptr) {
    ASSERT_TRUE(env.proxy()->process().alive());
  }
  // A new client gets exactly its own replies, in order, from the shared backend connections.
  Client next(env.port());
  ASSERT_TRUE(next.ok());
  EXPECT_EQ(next.cmd({"PING"}), "PONG");
  for (int i = 0; i < 1000; ++i) {
    appendArgv(next.ctx(), {"SET", "cm:" + std::to_string(i), "next" + std::to_string(i)});
    appendArgv(next.ctx(), {"GET", "cm:" + std::to_string(i)});
  }
  for (int i = 0; i < 1000; ++i) {
    void* raw = nullptr;
    ASSERT_EQ(redisGetReply(next.ctx(), &raw), REDIS_OK);
    EXPECT_EQ(render(static_cast<redisReply*>(raw)), "OK");
    freeReplyObject(raw);
    ASSERT_EQ(redisGetReply(next.ctx(), &raw), REDIS_OK);
    EXPECT_EQ(render(static_cast<redisReply*>(raw)), "next" + std::to_string(i));
    freeReplyObject(raw);
  }
}

}  // namespace
}  // namespace sp::test
