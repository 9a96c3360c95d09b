// FakeShards: a set of in-process RESP2 shards on loopback, served by one thread, for tests and
// fuzz targets that drive a real Worker. Each shard checks that every key it is sent belongs to
// it under the topology it was built for (a command on another shard's connection is a routing
// bug), and answers so that the client can tell which request and which shard a reply is for:
//
//   keyed command   ->  bulk "s<shard>|<the arguments joined by spaces>"
//   MGET k...       ->  array of bulk "s<shard>|<k>"
//   DEL/EXISTS k... ->  :<number of keys>
//   MSET            ->  +OK
//   BLPOP/BRPOP     ->  [<first key>, "s<shard>|<arguments>"]
//   PING, ECHO, DBSIZE (:1), MULTI/EXEC/DISCARD/WATCH/UNWATCH, (P)(UN)SUBSCRIBE, RESET as
//   redis-server answers them (RESP2), EXEC with the replies queued since MULTI.
//
// Anything else gets bulk "s<shard>|<arguments>" too. The first violation is kept and handed to
// the violation handler (a fuzz target aborts there).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "route/topology.h"

namespace sp::fakes {

class FakeShards {
 public:
  using ViolationHandler = std::function<void(const std::string&)>;

  // `count` shards on 127.0.0.1, free ports; topology() splits the slots evenly over them.
  FakeShards(size_t count, ViolationHandler on_violation);
  ~FakeShards();
  FakeShards(const FakeShards&) = delete;
  FakeShards& operator=(const FakeShards&) = delete;

  route::TopologyPtr topology() const { return topology_; }
  uint16_t port(size_t shard) const { return ports_[shard]; }
  size_t count() const { return ports_.size(); }
  // Commands served so far, over all shards (health PINGs included).
  uint64_t commandsServed() const { return served_.load(std::memory_order_relaxed); }

  // The keys of a command as the fakes read them (the commands listed above; none otherwise).
  static std::vector<std::string_view> keysOf(const std::vector<std::string>& argv);

 private:
  struct Conn;
  void serve();
  void onReadable(Conn& conn);
  // Appends the reply to `argv` (or +QUEUED and queues it) to conn's output.
  void answer(Conn& conn, const std::vector<std::string>& argv);
  std::string replyFor(Conn& conn, const std::vector<std::string>& argv);
  void violation(const std::string& what);

  ViolationHandler on_violation_;
  std::vector<int> listen_fds_;
  std::vector<uint16_t> ports_;
  route::TopologyPtr topology_;
  std::vector<std::unique_ptr<Conn>> conns_;  // the serving thread's
  std::atomic<bool> stop_{false};
  std::atomic<uint64_t> served_{0};
  std::thread thread_;
};

}  // namespace sp::fakes
