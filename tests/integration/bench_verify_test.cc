// shardbench --verify through a 4-shard proxy while shards fail: a shard killed and restarted empty
// in the middle of a run, a shard that is down when the run starts and joins later, and values
// planted on a shard behind shardbench's back. The runs are request counts paced by --rate, so
// each lasts a known minimum time and the failure lands inside it; nothing asserts a duration.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <cctype>
#include <chrono>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "integration/harness.h"

namespace sp::test {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;
using std::chrono::seconds;

// One shardbench run against the proxy, bounded: past the timeout it is killed and counts as hung.
class Bench {
 public:
  Bench(uint16_t port, std::vector<std::string> args) {
    std::vector<std::string> argv = {SP_SHARDBENCH_BIN, "-p", std::to_string(port),
                                     "--no-progress"};
    argv.insert(argv.end(), args.begin(), args.end());
    process_ = std::make_unique<Process>(argv, dir_.path() + "/bench.log");
    deadline_ = Clock::now() + seconds(60);
  }
  bool alive() { return process_->alive(); }

  // The exit status (-1 when killed by a signal or hung) and the whole log.
  int wait(std::string* log) {
    while (process_->alive() && Clock::now() < deadline_) {
      std::this_thread::sleep_for(milliseconds(5));
    }
    if (process_->alive()) {
      process_->stop(SIGKILL);
      *log = process_->log() + "\n[test: shardbench hung and was killed]";
      return -1;
    }
    *log = process_->log();
    const int st = process_->exitStatus();
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  }

 private:
  TempDir dir_;
  Clock::time_point deadline_;
  std::unique_ptr<Process> process_;
};

struct VerifyLine {
  long long mismatches = -1;
  long long unverified = -1;
  long long lost = -1;
};

// "Verify: 0 mismatches, 12 unverified reads (no single expected value), 3 lost writes"
// (parsed by hand: std::regex trips GCC 12's -Wmaybe-uninitialized in sanitizer builds).
VerifyLine verifyLine(const std::string& log) {
  VerifyLine v;
  const size_t at = log.find("Verify: ");
  if (at == std::string::npos) {
    return v;
  }
  const std::string line = log.substr(at, log.find('\n', at) - at);
  // The number just before each label.
  auto numberBefore = [&line](const std::string& label, long long* out) {
    const size_t end = line.find(label);
    if (end == std::string::npos || end == 0) {
      return;
    }
    size_t begin = end;
    while (begin > 0 && std::isdigit(static_cast<unsigned char>(line[begin - 1])) != 0) {
      --begin;
    }
    if (begin < end) {
      *out = std::stoll(line.substr(begin, end - begin));
    }
  };
  numberBefore(" mismatches,", &v.mismatches);
  numberBefore(" unverified reads", &v.unverified);
  numberBefore(" lost writes", &v.lost);
  return v;
}

long long dbsize(uint16_t port) {
  Client c(port);
  const std::string r = c.cmd({"DBSIZE"});
  return r.rfind("(integer) ", 0) == 0 ? std::stoll(r.substr(10)) : -1;
}

// Polls until pred() holds or shardbench exits (false then), within 20 s.
template <typename Pred>
bool waitWhileRunning(Bench& b, Pred pred) {
  const auto deadline = Clock::now() + seconds(20);
  while (Clock::now() < deadline && b.alive()) {
    if (pred()) {
      return true;
    }
    std::this_thread::sleep_for(milliseconds(5));
  }
  return false;
}

class BenchVerifyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (directMode()) {
      GTEST_SKIP() << "needs the proxy in front of several shards";
    }
    shards_ = startShards(4);
  }

  // A proxy that notices a dead shard and takes it back quickly (backoff and ejection in
  // hundreds of milliseconds rather than seconds), so a run sees the shard leave and return.
  void startProxy() {
    std::string yaml = "shards:\n";
    for (size_t i = 0; i < shards_.size(); ++i) {
      yaml +=
          "  - name: shard" + std::to_string(i) + "\n    address: " + shards_[i]->address() + "\n";
    }
    yaml +=
        "backend:\n"
        "  reconnect_min_ms: 50\n"
        "  reconnect_max_ms: 200\n"
        "  ping_interval_ms: 200\n"
        "  retry_timeout_ms: 200\n"
        "  retry_timeout_max_ms: 400\n";
    const std::string conf = conf_dir_.path() + "/proxy.yaml";
    std::ofstream(conf) << yaml;
    proxy_ = std::make_unique<ProxyProcess>("", 2, std::vector<std::string>{"--config", conf});
  }

  // A SET/GET mix over 1000 keys, 4 connections, paced to last 4 s.
  std::vector<std::string> mixArgs(bool allow_loss) {
    std::vector<std::string> args = {"--ratio=1:1",
                                     "--key-minimum=0",
                                     "--key-maximum=999",
                                     "-n",
                                     "40000",
                                     "--rate",
                                     "10000",
                                     "-c",
                                     "4",
                                     "--threads",
                                     "2",
                                     "-d",
                                     "64",
                                     "--verify"};
    if (allow_loss) {
      args.push_back("--verify-allow-loss");
    }
    return args;
  }

  // Kills shard 1 once it holds data, restarts it empty a moment later, and returns the run's
  // exit status and log.
  int runWithAKilledShard(bool allow_loss, std::string* log) {
    startProxy();
    RedisServer& victim = *shards_[1];
    Bench b(proxy_->port(), mixArgs(allow_loss));
    const bool has_data = waitWhileRunning(b, [&] { return dbsize(victim.port()) >= 100; });
    EXPECT_TRUE(has_data) << "shardbench ended before the shard had data";
    victim.kill9();
    std::this_thread::sleep_for(milliseconds(200));
    victim.restart();  // empty: no persistence
    const bool written_again = waitWhileRunning(b, [&] { return dbsize(victim.port()) > 0; });
    EXPECT_TRUE(written_again) << "shardbench ended before the restarted shard was written";
    return b.wait(log);
  }

  TempDir conf_dir_;
  std::vector<std::unique_ptr<RedisServer>> shards_;
  std::unique_ptr<ProxyProcess> proxy_;
};

// Writes that failed while the shard was down are unknown until their next +OK, and under
// --verify-allow-loss the acknowledged writes the restart wiped read back as lost: no mismatch.
// The error replies alone make the exit status 1 (3 would be mismatches).
TEST_F(BenchVerifyTest, KilledAndRestartedShardGivesNoMismatch) {
  std::string log;
  const int status = runWithAKilledShard(true, &log);
  EXPECT_EQ(status, 1) << log;
  const VerifyLine v = verifyLine(log);
  EXPECT_EQ(v.mismatches, 0) << log;
  EXPECT_GT(v.lost, 0) << log;  // keys acked before the kill, read after the restart
  EXPECT_NE(log.find("unavailable"), std::string::npos) << log;  // the proxy's shard error
  EXPECT_TRUE(proxy_->process().alive());
}

// Without --verify-allow-loss the same wiped writes are mismatches: a nil where an acknowledged
// value should be.
TEST_F(BenchVerifyTest, WithoutAllowLossTheWipedWritesAreMismatches) {
  std::string log;
  const int status = runWithAKilledShard(false, &log);
  EXPECT_EQ(status, 3) << log;
  const VerifyLine v = verifyLine(log);
  EXPECT_GT(v.mismatches, 0) << log;
  EXPECT_EQ(v.lost, 0) << log;
  EXPECT_NE(log.find("is missing"), std::string::npos) << log;
  EXPECT_EQ(log.find("stale"), std::string::npos) << log;
}

// Shard 3 is down when the proxy and the run start and joins in the middle: its keys fail (and
// are unknown) until then, and nothing it ever acknowledged is lost.
TEST_F(BenchVerifyTest, ShardThatStartsLateGivesNoMismatch) {
  RedisServer& late = *shards_[3];
  late.kill9();
  startProxy();
  Bench b(proxy_->port(), mixArgs(false));
  const bool running = waitWhileRunning(b, [&] { return dbsize(shards_[0]->port()) >= 50; });
  EXPECT_TRUE(running) << "shardbench ended before the late shard started";
  late.restart();
  const bool joined = waitWhileRunning(b, [&] { return dbsize(late.port()) > 0; });
  EXPECT_TRUE(joined) << "shardbench ended before the late shard was written";
  std::string log;
  EXPECT_EQ(b.wait(&log), 1) << log;  // error replies while the shard was down
  const VerifyLine v = verifyLine(log);
  EXPECT_EQ(v.mismatches, 0) << log;
  EXPECT_EQ(v.lost, 0) << log;
  EXPECT_GT(v.unverified, 0) << log;  // reads of keys whose only writes failed
  EXPECT_GT(dbsize(late.port()), 0);
}

// One connection alternates SET and GET on key 1. Once the key holds a value, the test keeps
// putting a value of its choice back on the shard behind shardbench's back (directly, not
// through the proxy) whenever shardbench has written a newer one; whenever a GET comes before
// the next SET, shardbench must report it.
class BenchVerifyPlantedTest : public BenchVerifyTest {
 protected:
  // plant(first value seen, current value) -> the value to put in the key.
  template <typename Plant>
  int runPlanting(Plant plant, std::string* log) {
    startProxy();
    Bench b(proxy_->port(), {"--ratio=1:1", "--key-minimum=1", "--key-maximum=1", "-c", "1", "-n",
                             "6000", "--rate", "2000", "-d", "48", "--verify"});
    const std::string key = "memtier-1";
    std::unique_ptr<Client> shard;  // the shard that holds the key
    std::string first;
    waitWhileRunning(b, [&] {
      for (auto& s : shards_) {
        auto c = std::make_unique<Client>(s->port());
        const std::string v = c->cmd({"GET", key});
        if (v.rfind("sbv1:1:", 0) == 0) {
          first = v;
          shard = std::move(c);
          return true;
        }
      }
      return false;
    });
    EXPECT_FALSE(first.empty()) << "shardbench ended before it wrote " << key;
    int planted = 0;
    std::string last = first;
    while (shard != nullptr && b.alive()) {
      const std::string now = shard->cmd({"GET", key});
      if (now != first && now != last && now.rfind("sbv1:1:", 0) == 0) {
        last = plant(first, now);
        EXPECT_EQ(shard->cmd({"SET", key, last}), "OK");
        planted++;
      }
    }
    EXPECT_GT(planted, 0);
    return b.wait(log);
  }
};

TEST_F(BenchVerifyPlantedTest, StaleValueIsAMismatch) {
  std::string log;
  const int status =
      runPlanting([](const std::string& first, const std::string&) { return first; }, &log);
  EXPECT_EQ(status, 3) << log;
  EXPECT_GT(verifyLine(log).mismatches, 0) << log;
  EXPECT_NE(log.find("holds a stale value"), std::string::npos) << log;
}

// "sbv1:1:<run>:<seq>:..." rewritten to name key 2, or another run: no write of this run could
// have left either in key 1.
TEST_F(BenchVerifyPlantedTest, ForeignHeadersAreMismatches) {
  int n = 0;
  auto plant = [&n](const std::string&, const std::string& now) {
    const size_t run_at = now.find(':', 5) + 1;  // after "sbv1:1:"
    if (n++ % 2 == 0) {
      return "sbv1:2:" + now.substr(run_at);
    }
    std::string other = now;  // the run id with its last hex digit changed
    char& digit = other[other.find(':', run_at) - 1];
    digit = digit == '0' ? '1' : '0';
    return other;
  };
  std::string log;
  EXPECT_EQ(runPlanting(plant, &log), 3) << log;
  EXPECT_GT(verifyLine(log).mismatches, 0) << log;
  EXPECT_TRUE(log.find("holds the value of key 2") != std::string::npos ||
              log.find("holds a value from another run") != std::string::npos)
      << log;
}

}  // namespace
}  // namespace sp::test
