// Routing decisions: same-slot check for ordinary commands, shard grouping for split ones.
#include "route/router.h"

namespace sp::route {

void planRoute(const resp::CommandInfo& cmd, std::span<const std::string_view> args,
               std::span<const uint32_t> keys, const Topology& topology, RoutePlan* plan) {
  plan->key_shard.clear();
  plan->fragment_of.clear();
  plan->fragment_shard.clear();
  if (keys.empty()) {
    plan->kind = RouteKind::kNoKeys;
    plan->shard = 0;
    return;
  }
  const uint16_t first_slot = keySlot(args[keys[0]]);
  plan->shard = topology.shardOfSlot(first_slot);
  if (!cmd.has(resp::kCmdSplit)) {
    for (size_t i = 1; i < keys.size(); ++i) {
      if (keySlot(args[keys[i]]) != first_slot) {
        plan->kind = RouteKind::kCrossSlot;
        return;
      }
    }
    plan->kind = RouteKind::kSingle;
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
