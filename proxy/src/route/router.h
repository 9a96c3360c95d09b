// Router: decides where a request goes from its command entry, its key positions and the topology.
// Pure and allocation-free in steady state (the plan's vectors are reused by the caller).
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "resp/command_table.h"
#include "route/topology.h"

namespace sp::route {

enum class RouteKind : uint8_t {
  kSingle,     // every key in one unit (or one shard for a split command): send as is
  kSplit,      // a split command whose keys span shards: one fragment per shard
  kCrossSlot,  // a non-split command whose keys span units (Topology::unitOfKey): -CROSSSLOT
  kNoKeys,     // no key at all (EVAL with numkeys 0, ...): any shard will do
};

struct RoutePlan {
  RouteKind kind = RouteKind::kNoKeys;
  uint16_t shard = 0;                    // kSingle: the shard
  std::vector<uint16_t> key_shard;       // kSplit: shard of each key group (in key order)
  std::vector<uint16_t> fragment_of;     // kSplit: fragment index of each key group
  std::vector<uint16_t> fragment_shard;  // kSplit: shard of each fragment, in first-seen order
  std::vector<uint16_t> key_slot;        // kSplit by slot: slot of each key group
  std::vector<uint16_t> fragment_slot;   // kSplit by slot: slot of each fragment
};

// `keys` are the argument indexes of the keys (resp::extractKeys). For split commands with
// args_per_key > 1 (MSET), each key index starts a group of that many arguments.
// by_slot (cluster mode, always cluster slots): a split command gets one fragment per slot rather
// than per shard, because a Redis Cluster node refuses multi-key commands across slots.
void planRoute(const resp::CommandInfo& cmd, std::span<const std::string_view> args,
               std::span<const uint32_t> keys, const Topology& topology, RoutePlan* plan,
               bool by_slot = false);

}  // namespace sp::route
