// CLUSTER SLOTS parsing and fetching.
#include "route/cluster_topology.h"

#include <hiredis/hiredis.h>

#include <chrono>
#include <map>

#include "route/blocking_client.h"

namespace sp::route {
namespace {

constexpr std::chrono::milliseconds kTimeout{1000};  // to connect, and for each reply

std::string nodeName(const std::string& host, uint16_t port) {
  return host + ":" + std::to_string(port);
}

// [host, port, id, ...] -> host and port; false when malformed.
bool readNode(const redisReply* node, std::string* host, uint16_t* port) {
  if (node == nullptr || node->type != REDIS_REPLY_ARRAY || node->elements < 2 ||
      node->element[0]->type != REDIS_REPLY_STRING ||
      node->element[1]->type != REDIS_REPLY_INTEGER || node->element[1]->integer <= 0 ||
      node->element[1]->integer > 65535) {
    return false;
  }
  *host = std::string(node->element[0]->str, node->element[0]->len);
  *port = static_cast<uint16_t>(node->element[1]->integer);
  return true;
}

}  // namespace

Status topologyFromClusterSlots(const redisReply* reply, const std::string& username,
                                const std::string& password, TopologyPtr* out) {
  if (reply == nullptr || reply->type != REDIS_REPLY_ARRAY) {
    return Status::failure("CLUSTER SLOTS did not answer an array");
  }
  std::vector<ShardAddress> shards;
  std::map<std::string, uint16_t> index_of;
  std::vector<SlotAssignment> ranges;
  std::vector<bool> covered(kSlotCount, false);
  for (size_t i = 0; i < reply->elements; ++i) {
    const redisReply* entry = reply->element[i];
    if (entry->type != REDIS_REPLY_ARRAY || entry->elements < 3 ||
        entry->element[0]->type != REDIS_REPLY_INTEGER ||
        entry->element[1]->type != REDIS_REPLY_INTEGER) {
      return Status::failure("malformed CLUSTER SLOTS entry " + std::to_string(i));
    }
    const long long first = entry->element[0]->integer;
    const long long last = entry->element[1]->integer;
    std::string host;
    uint16_t port = 0;
    if (first < 0 || last < first || last >= kSlotCount ||
        !readNode(entry->element[2], &host, &port)) {
      return Status::failure("malformed CLUSTER SLOTS entry " + std::to_string(i));
    }
    const std::string name = nodeName(host, port);
    auto [it, inserted] = index_of.emplace(name, static_cast<uint16_t>(shards.size()));
    if (inserted) {
      ShardAddress master(name, host, port);
      master.username = username;
      master.password = password;
      for (size_t r = 3; r < entry->elements; ++r) {
        std::string rhost;
        uint16_t rport = 0;
        if (readNode(entry->element[r], &rhost, &rport)) {
          ShardAddress replica(nodeName(rhost, rport), rhost, rport);
          replica.username = username;
          replica.password = password;
          master.replicas.push_back(std::move(replica));
        }
      }
      shards.push_back(std::move(master));
    }
    ranges.push_back({static_cast<uint16_t>(first), static_cast<uint16_t>(last), it->second});
    for (long long s = first; s <= last; ++s) {
      covered[static_cast<size_t>(s)] = true;
    }
  }
  if (shards.empty()) {
    return Status::failure("the cluster serves no slots");
  }
  for (uint32_t s = 0; s < kSlotCount; ++s) {
    if (!covered[s]) {
      ranges.push_back({static_cast<uint16_t>(s), static_cast<uint16_t>(s), 0});
    }
  }
  *out = Topology::fromRanges(std::move(shards), ranges);
  return Status();
}

Status fetchClusterTopology(const std::vector<SentinelAddress>& seeds, const std::string& username,
                            const std::string& password,
                            const std::shared_ptr<const tls::TlsContext>& tls, TopologyPtr* out) {
  std::string errors;
  for (const auto& seed : seeds) {
    const std::string label = nodeName(seed.host, seed.port);
    BlockingClient c(BlockingClient::Options{kTimeout, kTimeout, tls});
    std::string why;
    if (!c.connect(seed.host, seed.port)) {
      why = label + ": " + c.error();
    } else {
      bool authed = true;
      if (!password.empty()) {
        Reply a = username.empty() ? c.command({"AUTH", password})
                                   : c.command({"AUTH", username, password});
        authed = a && a->type != REDIS_REPLY_ERROR;
        if (!authed) {
          why = label + ": AUTH failed";
        }
      }
      if (authed) {
        Reply r = c.command({"CLUSTER", "SLOTS"});
        if (r && r->type == REDIS_REPLY_ERROR) {
          why = label + ": " + std::string(r->str, r->len);
        } else if (!r) {
          why = label + ": " + c.error();
        } else if (Status built = topologyFromClusterSlots(r.get(), username, password, out);
                   built.ok()) {
          return Status();
        } else {
          why = label + ": " + built.message();
        }
      }
    }
    errors += errors.empty() ? why : "; " + why;
  }
  return Status::failure("no seed answered CLUSTER SLOTS (" + errors + ")");
}

bool sameRouting(const Topology& a, const Topology& b) {
  for (uint32_t s = 0; s < kSlotCount; ++s) {
    const ShardAddress& x = a.shards()[a.shardOfSlot(static_cast<uint16_t>(s))];
    const ShardAddress& y = b.shards()[b.shardOfSlot(static_cast<uint16_t>(s))];
    if (x.host != y.host || x.port != y.port) {
      return false;
    }
  }
  if (a.shardCount() != b.shardCount()) {
    return false;
  }
  for (size_t i = 0; i < a.shardCount(); ++i) {
    const auto& ra = a.shards()[i].replicas;
    const auto& rb = b.shards()[i].replicas;
    if (ra.size() != rb.size()) {
      return false;
    }
    for (size_t r = 0; r < ra.size(); ++r) {
      if (ra[r].host != rb[r].host || ra[r].port != rb[r].port) {
        return false;
      }
    }
  }
  return true;
}

}  // namespace sp::route
