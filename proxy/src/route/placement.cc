// twemproxy's distributions and Codis's slots.
#include "route/placement.h"

#include <algorithm>
#include <cmath>
#include <random>

#include "core/assert.h"

namespace sp::route {
namespace {

// nutcracker's ketama: 160 points per server at equal weight, made 4 at a time from the MD5 of
// "<name>-<i>".
constexpr uint32_t kKetamaPointsPerServer = 160;
constexpr uint32_t kKetamaPointsPerHash = 4;

// nutcracker's arithmetic, in its precision: a float share of the weight, scaled in float, then
// a double nudge, floored in float. Different rounding here would move keys.
uint32_t ketamaPoints(uint32_t weight, uint32_t total_weight, uint32_t servers) {
  const float pct = static_cast<float>(weight) / static_cast<float>(total_weight);
  const float scaled =
      pct * static_cast<float>(kKetamaPointsPerServer) / 4.0f * static_cast<float>(servers);
  const auto nudged = static_cast<float>(static_cast<double>(scaled) + 0.0000000001);
  return static_cast<uint32_t>(std::floor(nudged)) * 4;
}

// nutcracker sorts a pool's servers by name (shorter first, then bytewise) before it builds a
// distribution: modula's order and ketama's tie-breaking follow that order, not the config's.
std::vector<uint16_t> nutcrackerOrder(const std::vector<PlacementServer>& servers) {
  std::vector<uint16_t> order(servers.size());
  for (size_t i = 0; i < order.size(); ++i) {
    order[i] = static_cast<uint16_t>(i);
  }
  std::stable_sort(order.begin(), order.end(), [&](uint16_t a, uint16_t b) {
    const std::string& x = servers[a].name;
    const std::string& y = servers[b].name;
    return x.size() != y.size() ? x.size() < y.size() : x < y;
  });
  return order;
}

uint32_t randomIndex(uint32_t n) {
  thread_local std::minstd_rand generator{std::random_device{}()};
  return static_cast<uint32_t>(generator() % n);
}

}  // namespace

std::string_view placementKindName(PlacementKind kind) {
  switch (kind) {
    case PlacementKind::kClusterSlots:
      return "cluster_slots";
    case PlacementKind::kCodis:
      return "codis";
    case PlacementKind::kTwemproxy:
      return "twemproxy";
  }
  return "?";
}

std::string_view distributionName(Distribution distribution) {
  switch (distribution) {
    case Distribution::kKetama:
      return "ketama";
    case Distribution::kModula:
      return "modula";
    case Distribution::kRandom:
      return "random";
  }
  return "?";
}

bool parseDistribution(std::string_view name, Distribution* out) {
  for (Distribution d : {Distribution::kKetama, Distribution::kModula, Distribution::kRandom}) {
    if (distributionName(d) == name) {
      *out = d;
      return true;
    }
  }
  return false;
}

std::string_view codisHashTag(std::string_view key) {
  const size_t open = key.find('{');
  if (open == std::string_view::npos) {
    return key;
  }
  const size_t close = key.find('}', open + 1);
  if (close == std::string_view::npos) {
    return key;
  }
  return key.substr(open + 1, close - open - 1);
}

uint16_t codisSlot(std::string_view key) {
  return static_cast<uint16_t>(crc32Ieee(codisHashTag(key)) % kCodisSlotCount);
}

std::string_view twemproxyHashTag(std::string_view key, std::string_view tag) {
  if (tag.size() != 2) {
    return key;
  }
  const size_t open = key.find(tag[0]);
  if (open == std::string_view::npos) {
    return key;
  }
  const size_t close = key.find(tag[1], open + 1);
  if (close == std::string_view::npos || close == open + 1) {
    return key;
  }
  return key.substr(open + 1, close - open - 1);
}

TwemproxyPlacement::TwemproxyPlacement(Distribution distribution, TwemHash hash,
                                       std::string hash_tag,
                                       const std::vector<PlacementServer>& servers)
    : distribution_(distribution),
      hash_(hash),
      hash_tag_(std::move(hash_tag)),
      server_count_(static_cast<uint16_t>(servers.size())) {
  SP_ASSERT(!servers.empty() && servers.size() <= UINT16_MAX);
  if (distribution_ == Distribution::kKetama) {
    buildKetama(servers);
  } else if (distribution_ == Distribution::kModula) {
    for (uint16_t i : nutcrackerOrder(servers)) {
      modula_.insert(modula_.end(), servers[i].weight, i);
    }
  }
}

void TwemproxyPlacement::buildKetama(const std::vector<PlacementServer>& servers) {
  uint32_t total_weight = 0;
  for (const PlacementServer& s : servers) {
    total_weight += s.weight;
  }
  const auto n = static_cast<uint32_t>(servers.size());
  for (uint16_t i : nutcrackerOrder(servers)) {
    const uint32_t points = ketamaPoints(servers[i].weight, total_weight, n);
    for (uint32_t p = 0; p < points / kKetamaPointsPerHash; ++p) {
      // The config refuses names nutcracker's 86-byte buffer would cut (kMaxKetamaName).
      const std::string host = servers[i].name + "-" + std::to_string(p);
      const std::array<uint8_t, 16> digest = md5(host);
      for (uint32_t x = 0; x < kKetamaPointsPerHash; ++x) {
        const uint32_t value = static_cast<uint32_t>(digest[3 + x * 4]) << 24 |
                               static_cast<uint32_t>(digest[2 + x * 4]) << 16 |
                               static_cast<uint32_t>(digest[1 + x * 4]) << 8 | digest[x * 4];
        continuum_.push_back({value, i});
      }
    }
  }
  // nutcracker sorts with qsort by value alone; equal values (one in 2^32 per pair) keep the
  // servers' order, as glibc's merge-sort qsort does.
  std::stable_sort(continuum_.begin(), continuum_.end(),
                   [](const Point& a, const Point& b) { return a.value < b.value; });
  SP_ASSERT(!continuum_.empty());
}

uint16_t TwemproxyPlacement::serverOfKey(std::string_view key) const {
  if (server_count_ == 1) {
    return 0;
  }
  if (distribution_ == Distribution::kRandom) {
    return static_cast<uint16_t>(randomIndex(server_count_));
  }
  const std::string_view hashed = twemproxyHashTag(key, hash_tag_);
  const uint32_t hash = hashed.empty() ? 0 : twemHash(hash_, hashed);
  if (distribution_ == Distribution::kModula) {
    return modula_[hash % modula_.size()];
  }
  // The first point at or after the hash, wrapping to the first point.
  auto it = std::lower_bound(continuum_.begin(), continuum_.end(), hash,
                             [](const Point& p, uint32_t h) { return p.value < h; });
  if (it == continuum_.end()) {
    it = continuum_.begin();
  }
  return it->server;
}

}  // namespace sp::route
