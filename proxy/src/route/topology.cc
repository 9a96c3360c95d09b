// Topology construction.
#include "route/topology.h"

#include "core/assert.h"
#include "resp/errors.h"

namespace sp::route {

std::string ShardAddress::label() const {
  std::string out = name;
  out += " (";
  const bool v6 = host.find(':') != std::string::npos;
  if (v6) {
    out += '[';
  }
  out += host;
  if (v6) {
    out += ']';
  }
  out += ':';
  out += std::to_string(port);
  out += ')';
  return out;
}

std::shared_ptr<const Topology> Topology::evenSplit(std::vector<ShardAddress> shards) {
  SP_ASSERT(!shards.empty() && shards.size() <= kSlotCount);
  auto topo = std::make_shared<Topology>();
  const uint32_t n = static_cast<uint32_t>(shards.size());
  // Shard i owns [round(i * 16384 / n), round((i + 1) * 16384 / n)), as redis-cli --cluster
  // create splits (it rounds a float cursor; exact arithmetic agrees with it for n < 78 and stays
  // balanced for every n).
  uint32_t slot = 0;
  for (uint32_t i = 0; i < n; ++i) {
    const uint64_t twice = 2ull * (i + 1) * kSlotCount;
    const uint32_t end = static_cast<uint32_t>((twice + n) / (2ull * n));
    for (; slot < end; ++slot) {
      topo->unit_to_shard_[slot] = static_cast<uint16_t>(i);
    }
  }
  SP_ASSERT(slot == kSlotCount);
  topo->shards_ = std::move(shards);
  return topo;
}

std::shared_ptr<const Topology> Topology::fromRanges(std::vector<ShardAddress> shards,
                                                     const std::vector<SlotAssignment>& ranges) {
  return withSlots(PlacementKind::kClusterSlots, std::move(shards), ranges);
}

std::shared_ptr<const Topology> Topology::codis(std::vector<ShardAddress> shards,
                                                const std::vector<SlotAssignment>& ranges) {
  return withSlots(PlacementKind::kCodis, std::move(shards), ranges);
}

std::shared_ptr<const Topology> Topology::withSlots(PlacementKind kind,
                                                    std::vector<ShardAddress> shards,
                                                    const std::vector<SlotAssignment>& ranges) {
  auto topo = std::make_shared<Topology>();
  topo->kind_ = kind;
  topo->unit_count_ = kind == PlacementKind::kCodis ? kCodisSlotCount : kSlotCount;
  for (const auto& r : ranges) {
    SP_ASSERT(r.first <= r.last && r.last < topo->unit_count_ && r.shard < shards.size());
    for (uint32_t s = r.first; s <= r.last; ++s) {
      topo->unit_to_shard_[s] = r.shard;
    }
  }
  topo->shards_ = std::move(shards);
  return topo;
}

std::shared_ptr<const Topology> Topology::twemproxy(std::vector<ShardAddress> shards,
                                                    TwemproxyPlacement placement) {
  SP_ASSERT(!shards.empty() && shards.size() <= kSlotCount);
  auto topo = std::make_shared<Topology>();
  topo->kind_ = PlacementKind::kTwemproxy;
  topo->unit_count_ = static_cast<uint32_t>(shards.size());
  for (uint32_t i = 0; i < shards.size(); ++i) {
    topo->unit_to_shard_[i] = static_cast<uint16_t>(i);
  }
  topo->twemproxy_ = std::make_shared<const TwemproxyPlacement>(std::move(placement));
  topo->shards_ = std::move(shards);
  return topo;
}

uint32_t Topology::otherUnitOfKey(std::string_view key) const {
  if (kind_ == PlacementKind::kCodis) {
    return codisSlot(key);
  }
  return twemproxy_->serverOfKey(key);
}

std::string Topology::placementSummary() const {
  std::string out(placementKindName(kind_));
  if (twemproxy_ != nullptr) {
    out += ' ';
    out += distributionName(twemproxy_->distribution());
    out += ' ';
    out += twemHashName(twemproxy_->hash());
    if (!twemproxy_->hashTag().empty()) {
      out += " hash_tag ";
      out += twemproxy_->hashTag();
    }
  }
  return out;
}

resp::err::Own Topology::crossUnitError() const {
  return kind_ == PlacementKind::kTwemproxy ? resp::err::kCrossShard : resp::err::kCrossSlot;
}

std::vector<SlotAssignment> Topology::ranges() const {
  std::vector<SlotAssignment> out;
  if (kind_ == PlacementKind::kTwemproxy) {
    return out;
  }
  for (uint32_t s = 0; s < unit_count_; ++s) {
    uint16_t shard = unit_to_shard_[s];
    if (!out.empty() && out.back().shard == shard && out.back().last + 1u == s) {
      out.back().last = static_cast<uint16_t>(s);
    } else {
      out.push_back({static_cast<uint16_t>(s), static_cast<uint16_t>(s), shard});
    }
  }
  return out;
}

}  // namespace sp::route
