// Small helpers shared by the clients_*_test.cc suites (transactions, blocking commands, pub/sub,
// whole-keyspace commands, AUTH): keys placed on a chosen shard, integer replies, INFO fields of a
// redis-server, polling with a deadline, and a proxy config file.
#pragma once

#include <hiredis/hiredis.h>

#include <chrono>
#include <fstream>
#include <functional>
#include <string>
#include <thread>

#include "integration/harness.h"

namespace sp::test {

// A key whose slot lies well inside shard `shard`'s range when `shards` shards split the slots
// evenly (shard i owns about [i, i+1) * 16384 / shards).
inline std::string keyOnShard(int shard, int shards, const std::string& prefix) {
  const double width = 16384.0 / shards;
  const auto lo = static_cast<uint16_t>((shard + 0.25) * width);
  const auto hi = static_cast<uint16_t>((shard + 0.75) * width);
  for (int i = 0;; ++i) {
    std::string key = prefix + std::to_string(i);
    const uint16_t slot = testKeySlot(key);
    if (slot >= lo && slot <= hi) {
      return key;
    }
  }
}

// "(integer) 42" -> 42; -1 for anything else.
inline long long integerOf(const std::string& rendered) {
  if (rendered.rfind("(integer) ", 0) != 0) {
    return -1;
  }
  return std::stoll(rendered.substr(10));
}

// A field of a redis-server's INFO (e.g. "blocked_clients"), "" when absent.
inline std::string infoField(Client& direct, const std::string& section, const std::string& field) {
  const std::string info = direct.cmd({"INFO", section});
  const std::string needle = field + ":";
  size_t at = info.find("\n" + needle);
  at = info.rfind(needle, 0) == 0 ? 0 : (at == std::string::npos ? at : at + 1);
  if (at == std::string::npos) {
    return "";
  }
  const size_t end = info.find_first_of("\r\n", at);
  return info.substr(at + needle.size(), end - at - needle.size());
}

// Polls `ok` every 20 ms until it holds or `timeout` passes.
inline bool eventually(const std::function<bool()>& ok,
                       std::chrono::milliseconds timeout = std::chrono::seconds(20)) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (ok()) {
      return true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return ok();
}

// Reads one reply (a pub/sub push) within the timeout; "(timeout)" when none came.
inline std::string nextReply(Client& c, std::chrono::milliseconds timeout) {
  timeval tv{};
  tv.tv_sec = static_cast<time_t>(timeout.count() / 1000);
  tv.tv_usec = static_cast<suseconds_t>((timeout.count() % 1000) * 1000);
  redisSetTimeout(c.ctx(), tv);
  void* reply = nullptr;
  if (redisGetReply(c.ctx(), &reply) != REDIS_OK || reply == nullptr) {
    return "(timeout)";
  }
  std::string out = render(static_cast<redisReply*>(reply));
  freeReplyObject(reply);
  return out;
}

// Writes `text` to `dir`/name and returns the path.
inline std::string writeFile(const TempDir& dir, const std::string& name, const std::string& text) {
  const std::string path = dir.path() + "/" + name;
  std::ofstream(path) << text;
  return path;
}

}  // namespace sp::test
