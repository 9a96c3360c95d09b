// Topology: an immutable snapshot of the shard list and the slot -> shard table. Built off the hot
// path (at start-up or on reload/refresh) and shared with workers as shared_ptr<const Topology>;
// a worker swaps its pointer between loop iterations, never mid-request.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "route/key_slot.h"

namespace sp::route {

struct ShardAddress {
  ShardAddress() = default;
  ShardAddress(std::string name_in, std::string host_in, uint16_t port_in)
      : name(std::move(name_in)), host(std::move(host_in)), port(port_in) {}

  std::string name;
  std::string host;
  uint16_t port = 0;
  std::string username;  // AUTH sent on every (re)connect when password is set
  std::string password;
  std::vector<ShardAddress> replicas;  // read-only copies (backend.read_from)
  std::string label() const;           // "name (host:port)" for error replies and logs
};

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

  uint16_t shardOfSlot(uint16_t slot) const { return slot_to_shard_[slot]; }
  uint16_t shardOfKey(std::string_view key) const { return slot_to_shard_[keySlot(key)]; }
  const std::vector<ShardAddress>& shards() const { return shards_; }
  size_t shardCount() const { return shards_.size(); }

  // Contiguous runs of slots per shard, in slot order.
  std::vector<SlotAssignment> ranges() const;

 private:
  std::vector<ShardAddress> shards_;
  std::array<uint16_t, kSlotCount> slot_to_shard_{};
};

using TopologyPtr = std::shared_ptr<const Topology>;

}  // namespace sp::route
