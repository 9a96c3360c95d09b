// Config -> route::Topology.
#include "config/topology_builder.h"

#include <string>
#include <vector>

#include "core/assert.h"

namespace sp::config {

std::string ketamaName(const ShardConfig& shard) {
  if (shard.name_given) {
    return shard.name;
  }
  return shard.port == 11211 ? shard.host : shard.host + ":" + std::to_string(shard.port);
}

std::shared_ptr<const sp::route::Topology> makeTopology(const Config& config) {
  SP_ASSERT(!config.shards.empty() && config.shards.size() <= route::kSlotCount);
  std::vector<route::ShardAddress> shards;
  std::vector<route::SlotAssignment> ranges;
  std::vector<route::PlacementServer> servers;
  shards.reserve(config.shards.size());
  bool explicit_slots = false;
  for (size_t i = 0; i < config.shards.size(); ++i) {
    const ShardConfig& shard = config.shards[i];
    route::ShardAddress address{shard.name, shard.host, shard.port};
    address.username = shard.username.empty() ? config.backend_username : shard.username;
    address.password = shard.password.empty() ? config.backend_password : shard.password;
    for (size_t r = 0; r < shard.replicas.size(); ++r) {
      route::ShardAddress replica{shard.name + "-replica" + std::to_string(r),
                                  shard.replicas[r].host, shard.replicas[r].port};
      replica.username = address.username;
      replica.password = address.password;
      address.replicas.push_back(std::move(replica));
    }
    shards.push_back(std::move(address));
    servers.push_back({ketamaName(shard), shard.weight});
    for (const SlotRange& range : shard.slots) {
      explicit_slots = true;
      ranges.push_back({range.first, range.last, static_cast<uint16_t>(i)});
    }
  }
  const PlacementConfig& placement = config.placement;
  if (placement.kind == route::PlacementKind::kTwemproxy) {
    return route::Topology::twemproxy(
        std::move(shards), route::TwemproxyPlacement(placement.distribution, placement.hash,
                                                     placement.hash_tag, servers));
  }
  if (placement.kind == route::PlacementKind::kCodis) {
    return route::Topology::codis(std::move(shards), ranges);
  }
  if (!explicit_slots) {
    return route::Topology::evenSplit(std::move(shards));
  }
  return route::Topology::fromRanges(std::move(shards), ranges);
}

}  // namespace sp::config
