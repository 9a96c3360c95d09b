// Key placement: which shard owns a key. Three schemes, chosen per pool (config `placement`):
//   cluster slots  CRC16(key or {tag}) % 16384 -> slot table    (Redis Cluster, the default)
//   codis slots    CRC32(key or {tag}) % 1024  -> slot table    (Codis)
//   twemproxy      hash(key or tag) -> ketama continuum / modula list / random (nutcracker)
// Topology holds one and answers unitOfKey: the slot for the slot schemes, the shard index for
// twemproxy. Keys of one unit always share a shard, so "same unit" is the multi-key rule.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "route/hashkit.h"

namespace sp::route {

enum class PlacementKind : uint8_t {
  kClusterSlots,
  kCodis,
  kTwemproxy,
};

enum class Distribution : uint8_t {
  kKetama,  // consistent hashing over 160 points per server (weighted), libmemcached-compatible
  kModula,  // hash % total weight over the servers' weights, in server order
  kRandom,  // any server, per request: only for pools whose servers hold the same data
};

inline constexpr uint16_t kCodisSlotCount = 1024;

std::string_view placementKindName(PlacementKind kind);
std::string_view distributionName(Distribution distribution);
bool parseDistribution(std::string_view name, Distribution* out);

// Codis's hash tag: the bytes between the first '{' and the first '}' after it, even when that
// is empty (Codis hashes "" for "a{}b"; Redis Cluster would hash the whole key).
std::string_view codisHashTag(std::string_view key);
uint16_t codisSlot(std::string_view key);

// twemproxy's hash_tag: with tag "ab", the bytes between the first 'a' and the first 'b' after
// it when they are not empty; otherwise the whole key. An empty tag leaves the key whole.
std::string_view twemproxyHashTag(std::string_view key, std::string_view tag);

// One server of a twemproxy pool: the name ketama hashes (nutcracker: the server's name when the
// config gives one, else "host:port", or "host" alone for port 11211) and its weight.
// nutcracker formats "<name>-<point>" into 86 bytes: longer names would not hash as it hashes.
inline constexpr size_t kMaxKetamaName = 80;

struct PlacementServer {
  std::string name;
  uint32_t weight = 1;
};

// nutcracker's server selection for one pool (nc_ketama.c, nc_modula.c, nc_random.c), over the
// servers in nutcracker's order (sorted by name; serverOfKey answers the config's index), with
// every server live: shardproxy never rehashes a dead server's keys onto another (see
// docs/migrating.md). Server names must be unique, as nutcracker requires.
class TwemproxyPlacement {
 public:
  TwemproxyPlacement(Distribution distribution, TwemHash hash, std::string hash_tag,
                     const std::vector<PlacementServer>& servers);

  uint16_t serverOfKey(std::string_view key) const;

  Distribution distribution() const { return distribution_; }
  TwemHash hash() const { return hash_; }
  const std::string& hashTag() const { return hash_tag_; }

 private:
  struct Point {
    uint32_t value;
    uint16_t server;
  };

  void buildKetama(const std::vector<PlacementServer>& servers);

  Distribution distribution_;
  TwemHash hash_;
  std::string hash_tag_;
  uint16_t server_count_ = 0;
  std::vector<Point> continuum_;  // ketama: points sorted by value
  std::vector<uint16_t> modula_;  // modula: one entry per unit of weight, in server order
};

}  // namespace sp::route
