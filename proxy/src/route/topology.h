// Topology: an immutable snapshot of the shard list and the key placement over it (Redis Cluster
// slots by default; route/placement.h). Built off the hot path (at start-up or on reload/refresh)
// and shared with workers as shared_ptr<const Topology>; a worker swaps its pointer between loop
// iterations, never mid-request.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "resp/errors.h"
#include "route/key_slot.h"
#include "route/placement.h"

namespace sp::route {

struct ShardAddress {
  ShardAddress() = default;
  ShardAddress(std::string name_in, std::string host_in, uint16_t port_in)
      : name(std::move(name_in)), host(std::move(host_in)), port(port_in) {}

  // A Unix socket's address is its path (port 0): the config's "unix:/path" or "/path".
  bool isUnixSocket() const { return !host.empty() && host.front() == '/'; }

  std::string name;
  std::string host;
  uint16_t port = 0;
  std::string username;  // AUTH sent on every (re)connect when password is set
  std::string password;
  std::vector<ShardAddress> replicas;  // read-only copies (backend.read_from)
  std::string label() const;           // "name (host:port)" for error replies and logs
};

// One slot range's owner: Redis Cluster slots (0..16383) or Codis slots (0..1023).

struct SlotAssignment {
  uint16_t first = 0;  // inclusive
  uint16_t last = 0;   // inclusive
  uint16_t shard = 0;  // index into the shard list
};

class Topology {
 public:
  // Splits the slots evenly over the shards: shard i owns a contiguous range whose bounds are
  // i * 16384 / n rounded, as redis-cli --cluster create splits them.
  static std::shared_ptr<const Topology> evenSplit(std::vector<ShardAddress> shards);

  // Explicit ranges; the caller has validated that they cover every slot exactly once.
  static std::shared_ptr<const Topology> fromRanges(std::vector<ShardAddress> shards,
                                                    const std::vector<SlotAssignment>& ranges);

  // Codis slots: ranges over 0..1023, validated as for fromRanges.
  static std::shared_ptr<const Topology> codis(std::vector<ShardAddress> shards,
                                               const std::vector<SlotAssignment>& ranges);

  // A twemproxy pool: shard i is the placement's server i.
  static std::shared_ptr<const Topology> twemproxy(std::vector<ShardAddress> shards,
                                                   TwemproxyPlacement placement);

  // The key's placement unit: its slot (cluster or Codis slots) or its shard (twemproxy). Keys
  // of one unit share a shard; a multi-key command that is not split needs one unit.
  uint32_t unitOfKey(std::string_view key) const {
    if (kind_ == PlacementKind::kClusterSlots) [[likely]] {
      return keySlot(key);
    }
    return otherUnitOfKey(key);
  }
  uint16_t shardOfUnit(uint32_t unit) const { return unit_to_shard_[unit]; }
  uint16_t shardOfKey(std::string_view key) const { return shardOfUnit(unitOfKey(key)); }
  // Redis Cluster slots only (cluster mode, CLUSTER commands, the slot ranges of PROXY SLOTS).
  uint16_t shardOfSlot(uint16_t slot) const { return unit_to_shard_[slot]; }

  PlacementKind placementKind() const { return kind_; }
  // "cluster_slots", "codis", "twemproxy ketama fnv1a_64 hash_tag {}"
  std::string placementSummary() const;
  // The refusal of a multi-key command whose keys fall in several units (CROSSSLOT; "shard"
  // rather than "slot" where the placement has no slots).
  resp::err::Own crossUnitError() const;

  const std::vector<ShardAddress>& shards() const { return shards_; }
  size_t shardCount() const { return shards_.size(); }

  // Contiguous runs of slots per shard, in slot order; empty for twemproxy placement.
  std::vector<SlotAssignment> ranges() const;

 private:
  static std::shared_ptr<const Topology> withSlots(PlacementKind kind,
                                                   std::vector<ShardAddress> shards,
                                                   const std::vector<SlotAssignment>& ranges);
  uint32_t otherUnitOfKey(std::string_view key) const;

  PlacementKind kind_ = PlacementKind::kClusterSlots;
  uint32_t unit_count_ = kSlotCount;
  std::vector<ShardAddress> shards_;
  std::shared_ptr<const TwemproxyPlacement> twemproxy_;
  // slot -> shard (cluster: 16384, Codis: the first 1024); twemproxy: shard i -> i.
  std::array<uint16_t, kSlotCount> unit_to_shard_{};
};

using TopologyPtr = std::shared_ptr<const Topology>;

}  // namespace sp::route
