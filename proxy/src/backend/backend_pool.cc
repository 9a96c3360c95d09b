// BackendPool: build, pick, reconcile on reload, retire, and on-demand cluster nodes.
#include "backend/backend_pool.h"

#include <algorithm>

#include "backend/backend_conn.h"
#include "net/worker.h"

namespace sp::backend {
namespace {

bool sameServer(const route::ShardAddress& a, const route::ShardAddress& b) {
  return a.name == b.name && a.host == b.host && a.port == b.port && a.username == b.username &&
         a.password == b.password;
}

bool sameShard(const route::ShardAddress& a, const route::ShardAddress& b) {
  if (!sameServer(a, b) || a.replicas.size() != b.replicas.size()) {
    return false;
  }
  for (size_t i = 0; i < a.replicas.size(); ++i) {
    if (!sameServer(a.replicas[i], b.replicas[i])) {
      return false;
    }
  }
  return true;
}

}  // namespace

BackendPool::BackendPool(net::Worker& worker) : worker_(worker) {
  const route::Topology& topology = worker_.topology();
  const size_t shards = topology.shardCount();
  primaries_.resize(shards);
  replicas_.resize(shards);
  resp3_primaries_.resize(shards);
  resp3_replicas_.resize(shards);
  read_turn_.assign(shards, 0);
  for (size_t s = 0; s < shards; ++s) {
    buildShard(topology, s, &primaries_[s], &replicas_[s], resp::Protocol::kResp2);
  }
}

BackendPool::~BackendPool() = default;

void BackendPool::start() {
  forEach([](BackendConn& conn) { conn.start(); });
}

void BackendPool::buildShard(const route::Topology& topology, size_t s, Conns* primaries,
                             Conns* replicas, resp::Protocol protocol) {
  const route::ShardAddress& address = topology.shards()[s];
  const auto shard = static_cast<uint16_t>(s);
  const Credentials creds{address.username, address.password};
  for (int i = 0; i < worker_.config().backend_connections; ++i) {
    primaries->push_back(
        std::make_unique<BackendConn>(worker_, shard, address, creds, false, protocol));
  }
  for (const auto& replica : address.replicas) {
    replicas->push_back(std::make_unique<BackendConn>(
        worker_, shard, replica, Credentials{replica.username, replica.password}, true, protocol));
  }
}

void BackendPool::buildResp3Shard(uint16_t shard) {
  buildShard(worker_.topology(), shard, &resp3_primaries_[shard], &resp3_replicas_[shard],
             resp::Protocol::kResp3);
  for (auto* group : {&resp3_primaries_[shard], &resp3_replicas_[shard]}) {
    for (auto& conn : *group) {
      if (shut_down_) {
        conn->shutdown();  // requests get "proxy shutting down" at once
      } else {
        conn->start();
      }
    }
  }
}

BackendConn& BackendPool::primary(uint16_t shard, uint64_t client_id, resp::Protocol protocol) {
  if (protocol == resp::Protocol::kResp3 && resp3_primaries_[shard].empty()) {
    buildResp3Shard(shard);
  }
  auto& conns = protocol == resp::Protocol::kResp2 ? primaries_[shard] : resp3_primaries_[shard];
  return *conns[conns.size() == 1 ? 0 : client_id % conns.size()];
}

BackendConn& BackendPool::forRead(uint16_t shard, uint64_t client_id, resp::Protocol protocol) {
  BackendConn& primary_conn = primary(shard, client_id, protocol);
  auto& replicas = protocol == resp::Protocol::kResp2 ? replicas_[shard] : resp3_replicas_[shard];
  const config::ReadFrom mode = worker_.config().read_from;
  if (replicas.empty() || mode == config::ReadFrom::kPrimary) {
    return primary_conn;
  }
  // Take the next candidate in turn that serves reads now (a replica that is up and not slow,
  // BackendConn::servingReads); the primary counts as one in round-robin mode and is the
  // fallback of prefer-replica. replica-only, with no replica serving, queues on one that still
  // accepts (connecting, or slow), else returns an ejected one, so the request fails with that
  // replica's error.
  const uint64_t now = worker_.timers().nowMs();
  const size_t candidates = replicas.size() + (mode == config::ReadFrom::kRoundRobin ? 1 : 0);
  for (size_t tried = 0; tried < candidates; ++tried) {
    const size_t pick = read_turn_[shard]++ % candidates;
    BackendConn& conn = pick < replicas.size() ? *replicas[pick] : primary_conn;
    if (pick < replicas.size() ? conn.servingReads(now) : conn.accepting()) {
      return conn;
    }
  }
  if (mode != config::ReadFrom::kReplicaOnly) {
    return primary_conn;
  }
  for (auto& replica : replicas) {
    if (replica->accepting()) {
      return *replica;
    }
  }
  return *replicas[0];
}

BackendConn& BackendPool::node(const std::string& host, uint16_t port, uint16_t shard,
                               uint64_t client_id, resp::Protocol protocol) {
  const auto& shards = worker_.topology().shards();
  for (size_t s = 0; s < shards.size(); ++s) {
    if (shards[s].host == host && shards[s].port == port) {
      return primary(static_cast<uint16_t>(s), client_id, protocol);
    }
  }
  const std::string key = host + ":" + std::to_string(port);
  auto& conn = extra_nodes_[protocol == resp::Protocol::kResp3 ? key + " resp3" : key];
  if (conn == nullptr) {
    const config::Config& config = worker_.config();
    conn = std::make_unique<BackendConn>(
        worker_, shard, route::ShardAddress(key, host, port),
        Credentials{config.backend_username, config.backend_password}, false, protocol);
    if (shut_down_) {
      conn->shutdown();
    } else {
      conn->start();
    }
  }
  return *conn;
}

void BackendPool::forEach(const std::function<void(BackendConn&)>& fn) {
  for (auto* group : {&primaries_, &replicas_, &resp3_primaries_, &resp3_replicas_}) {
    for (auto& shard : *group) {
      for (auto& conn : shard) {
        fn(*conn);
      }
    }
  }
  for (auto& [address, conn] : extra_nodes_) {
    fn(*conn);
  }
}

void BackendPool::retire(std::unique_ptr<BackendConn> conn) {
  conn->retire();
  retired_.push_back(std::move(conn));
}

BackendPool::Reconciled BackendPool::reconcile(const route::Topology& old,
                                               const route::Topology& now, bool same_connections) {
  Reconciled result;
  const size_t shards = now.shardCount();
  PerShard primaries(shards);
  PerShard replicas(shards);
  for (size_t s = 0; s < shards; ++s) {
    if (same_connections && s < old.shardCount() && sameShard(old.shards()[s], now.shards()[s])) {
      primaries[s] = std::move(primaries_[s]);
      replicas[s] = std::move(replicas_[s]);
      ++result.kept;
      continue;
    }
    buildShard(now, s, &primaries[s], &replicas[s], resp::Protocol::kResp2);
    for (auto* group : {&primaries[s], &replicas[s]}) {
      for (auto& conn : *group) {
        conn->start();
      }
    }
  }
  // RESP3 connections are all rebuilt on first use under the new topology.
  for (auto* group : {&primaries_, &replicas_, &resp3_primaries_, &resp3_replicas_}) {
    for (auto& shard : *group) {
      for (auto& conn : shard) {
        if (conn != nullptr) {
          retire(std::move(conn));
          ++result.retired;
        }
      }
    }
  }
  for (auto& [address, conn] : extra_nodes_) {
    retire(std::move(conn));
  }
  extra_nodes_.clear();
  primaries_ = std::move(primaries);
  replicas_ = std::move(replicas);
  resp3_primaries_.clear();
  resp3_primaries_.resize(shards);
  resp3_replicas_.clear();
  resp3_replicas_.resize(shards);
  read_turn_.assign(shards, 0);
  return result;
}

void BackendPool::sweepRetired() {
  std::erase_if(retired_, [](const auto& conn) { return conn->fullyClosed(); });
}

void BackendPool::shutdown() {
  shut_down_ = true;
  forEach([](BackendConn& conn) { conn.shutdown(); });
  for (auto& conn : retired_) {
    conn->shutdown();
  }
}

}  // namespace sp::backend
