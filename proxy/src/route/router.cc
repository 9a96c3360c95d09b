// Routing decisions: same-unit check for ordinary commands (the slot, or the shard where the
// placement has no slots), shard grouping for split ones.
#include "route/router.h"

namespace sp::route {

void planRoute(const resp::CommandInfo& cmd, std::span<const std::string_view> args,
               std::span<const uint32_t> keys, const Topology& topology, RoutePlan* plan,
               bool by_slot) {
  plan->key_shard.clear();
  plan->fragment_of.clear();
  plan->fragment_shard.clear();
  plan->key_slot.clear();
  plan->fragment_slot.clear();
  if (keys.empty()) {
    plan->kind = RouteKind::kNoKeys;
    plan->shard = 0;
    return;
  }
  const uint32_t first_unit = topology.unitOfKey(args[keys[0]]);
  plan->shard = topology.shardOfUnit(first_unit);
  if (!cmd.has(resp::kCmdSplit)) {
    for (size_t i = 1; i < keys.size(); ++i) {
      if (topology.unitOfKey(args[keys[i]]) != first_unit) {
        plan->kind = RouteKind::kCrossSlot;
        return;
      }
    }
    plan->kind = RouteKind::kSingle;
    return;
  }
  if (by_slot) {
    const uint16_t first_slot = keySlot(args[keys[0]]);
    bool one_slot = true;
    for (uint32_t k : keys) {
      const uint16_t slot = keySlot(args[k]);
      plan->key_slot.push_back(slot);
      plan->key_shard.push_back(topology.shardOfSlot(slot));
      one_slot = one_slot && slot == first_slot;
    }
    if (one_slot) {
      plan->kind = RouteKind::kSingle;
      return;
    }
    plan->kind = RouteKind::kSplit;
    for (uint16_t slot : plan->key_slot) {
      uint16_t fragment = 0;
      while (fragment < plan->fragment_slot.size() && plan->fragment_slot[fragment] != slot) {
        ++fragment;
      }
      if (fragment == plan->fragment_slot.size()) {
        plan->fragment_slot.push_back(slot);
        plan->fragment_shard.push_back(topology.shardOfSlot(slot));
      }
      plan->fragment_of.push_back(fragment);
    }
    return;
  }
  bool one_shard = true;
  for (uint32_t k : keys) {
    uint16_t shard = topology.shardOfKey(args[k]);
    plan->key_shard.push_back(shard);
    one_shard = one_shard && shard == plan->shard;
  }
  if (one_shard) {
    plan->kind = RouteKind::kSingle;
    return;
  }
  plan->kind = RouteKind::kSplit;
  for (uint16_t shard : plan->key_shard) {
    uint16_t fragment = 0;
    while (fragment < plan->fragment_shard.size() && plan->fragment_shard[fragment] != shard) {
      ++fragment;
    }
    if (fragment == plan->fragment_shard.size()) {
      plan->fragment_shard.push_back(shard);
    }
    plan->fragment_of.push_back(fragment);
  }
}

}  // namespace sp::route
