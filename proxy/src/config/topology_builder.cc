// Config -> route::Topology.
#include "config/topology_builder.h"

#include <vector>

#include "core/assert.h"

namespace sp::config {

std::shared_ptr<const sp::route::Topology> makeTopology(const Config& config) {
  SP_ASSERT(!config.shards.empty() && config.shards.size() <= route::kSlotCount);
  std::vector<route::ShardAddress> shards;
  std::vector<route::SlotAssignment> ranges;
  shards.reserve(config.shards.size());
  bool explicit_slots = false;
  for (size_t i = 0; i < config.shards.size(); ++i) {
    const ShardConfig& shard = config.shards[i];
    shards.push_back({shard.name, shard.host, shard.port});
    for (const SlotRange& range : shard.slots) {
      explicit_slots = true;
      ranges.push_back({range.first, range.last, static_cast<uint16_t>(i)});
    }
  }
  if (!explicit_slots) {
    return route::Topology::evenSplit(std::move(shards));
  }
  return route::Topology::fromRanges(std::move(shards), ranges);
}

}  // namespace sp::config
