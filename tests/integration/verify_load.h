// VerifyLoad: client threads that pipeline SET/GET pairs over their own keys through a proxy and
// check every reply: a GET must return the value last written for its key, or, after the key's
// shard failed a request, nil or a value of that same key; errors must be the proxy's
// shard-unavailable error. A misrouted, stale or misordered reply counts as a mismatch.
#pragma once

#include <hiredis/hiredis.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "harness.h"
#include "route/topology.h"

namespace sp::test {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// The shard a key lands on behind a proxy that splits the slots evenly over `count` shards.
inline uint16_t shardOf(const std::string& key, int count) {
  // Built once, before any load thread reads it (a function-local static is initialised
  // thread-safely).
  static const std::vector<route::TopologyPtr> by_count = [] {
    std::vector<route::TopologyPtr> out(17);
    for (int n = 1; n < 17; ++n) {
      std::vector<route::ShardAddress> shards;
      for (int i = 0; i < n; ++i) {
        shards.emplace_back("s" + std::to_string(i), "127.0.0.1", static_cast<uint16_t>(1 + i));
      }
      out[n] = route::Topology::evenSplit(std::move(shards));
    }
    return out;
  }();
  return by_count[count]->shardOfKey(key);
}

inline std::string writeFile(const std::string& path, const std::string& text) {
  std::ofstream(path) << text;
  return path;
}

// Threads that pipeline SET/GET pairs over their own keys through the proxy and check every
// reply. A key whose shard returned an error has an unknown value until its next good SET.
class VerifyLoad {
 public:
  // shard_count: the proxy's even split, to attribute keys to shards (1 when not needed).
  VerifyLoad(uint16_t port, int shard_count, int threads) : shard_count_(shard_count) {
    for (int t = 0; t < threads; ++t) {
      threads_.emplace_back([this, port, t] { run(port, t); });
    }
  }
  ~VerifyLoad() { stop(); }

  void stop() {
    stop_ = true;
    for (auto& th : threads_) {
      if (th.joinable()) {
        th.join();
      }
    }
  }

  uint64_t mismatches() const { return mismatches_; }
  uint64_t okFor(int shard) const { return ok_[shard]; }
  uint64_t errorsFor(int shard) const { return errors_[shard]; }
  std::string firstMismatch() {
    std::lock_guard<std::mutex> lock(mu_);
    return first_mismatch_;
  }
  std::string lastError(int shard) {
    std::lock_guard<std::mutex> lock(mu_);
    return last_error_[shard];
  }
  // Last time a request for `shard` succeeded.
  Clock::time_point lastOk(int shard) const { return Clock::time_point(last_ok_[shard].load()); }

 private:
  static constexpr int kKeys = 64;
  static constexpr int kDepth = 16;

  void mismatch(const std::string& what) {
    ++mismatches_;
    std::lock_guard<std::mutex> lock(mu_);
    if (first_mismatch_.empty()) {
      first_mismatch_ = what;
    }
  }

  void noteError(int shard, const std::string& text) {
    ++errors_[shard];
    std::lock_guard<std::mutex> lock(mu_);
    last_error_[shard] = text;
  }

  void noteOk(int shard) {
    ++ok_[shard];
    last_ok_[shard] = Clock::now().time_since_epoch();
  }

  void run(uint16_t port, int t) {
    redisContext* c = redisConnect("127.0.0.1", port);
    if (c == nullptr || c->err) {
      mismatch("cannot connect");
      return;
    }
    struct timeval tv {
      5, 0
    };
    redisSetTimeout(c, tv);
    std::vector<std::string> keys;
    std::vector<int> shard_of;
    for (int k = 0; k < kKeys; ++k) {
      keys.push_back("vl:" + std::to_string(t) + ":" + std::to_string(k));
      shard_of.push_back(shardOf(keys.back(), shard_count_));
    }
    std::vector<std::string> known(kKeys);  // "" = unknown
    std::vector<bool> is_known(kKeys, false);
    uint64_t seq = 0;
    int next = 0;
    while (!stop_) {
      std::vector<int> batch;
      std::vector<std::string> values;
      for (int i = 0; i < kDepth; ++i) {
        int k = next++ % kKeys;
        batch.push_back(k);
        values.push_back(keys[k] + ":" + std::to_string(++seq));
        redisAppendCommand(c, "SET %s %s", keys[k].c_str(), values.back().c_str());
        redisAppendCommand(c, "GET %s", keys[k].c_str());
      }
      for (int i = 0; i < kDepth; ++i) {
        const int k = batch[i];
        const int shard = shard_of[k];
        for (int part = 0; part < 2; ++part) {
          redisReply* r = nullptr;
          if (redisGetReply(c, reinterpret_cast<void**>(&r)) != REDIS_OK || r == nullptr) {
            mismatch("connection to the proxy lost: " + std::string(c->errstr));
            redisFree(c);
            return;
          }
          const std::string text = render(r);
          freeReplyObject(r);
          if (text.rfind("(error) ", 0) == 0) {
            noteError(shard, text);
            // "(error) ERR shard <name> (127.0.0.1:<port>) unavailable: <reason>"
            const bool shard_error = text.rfind("(error) ERR shard ", 0) == 0 &&
                                     text.find(" (127.0.0.1:") != std::string::npos &&
                                     text.find(") unavailable: ") != std::string::npos;
            if (!shard_error) {
              mismatch("unexpected error for " + keys[k] + ": " + text);
            }
            is_known[k] = false;
            continue;
          }
          if (part == 0) {
            if (text != "OK") {
              mismatch("SET " + keys[k] + " got " + text);
            }
            known[k] = values[i];
            is_known[k] = true;
          } else if (is_known[k]) {
            if (text != known[k]) {
              mismatch("GET " + keys[k] + " got " + text + ", expected " + known[k]);
            }
          } else if (text != "(nil)" && text.rfind(keys[k] + ":", 0) != 0) {
            mismatch("GET " + keys[k] + " (unknown value) got a foreign value " + text);
          }
          noteOk(shard);
        }
      }
    }
    redisFree(c);
  }

  int shard_count_;
  std::atomic<bool> stop_{false};
  std::vector<std::thread> threads_;
  std::atomic<uint64_t> mismatches_{0};
  std::atomic<uint64_t> ok_[16] = {};
  std::atomic<uint64_t> errors_[16] = {};
  std::atomic<Clock::duration> last_ok_[16] = {};
  std::mutex mu_;
  std::string first_mismatch_;
  std::string last_error_[16];
};

}  // namespace sp::test
