// Tests for route/placement.cc and route/hashkit.cc: every twemproxy hash function under modula
// and ketama against placements recorded from nutcracker itself
// (data/twemproxy_placement.json, made by tools/record-twemproxy-placement.py), Codis slots
// against an independent CRC-32, MD5 against RFC 1321's vectors, and the hash-tag rules.
#include "route/placement.h"

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <cstdio>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "resp/errors.h"
#include "route/topology.h"

namespace sp::route {
namespace {

std::string fromHex(const std::string& hex) {
  std::string out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) {
    out.push_back(static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16)));
  }
  return out;
}

std::string toHex(std::string_view bytes) {
  std::string out;
  char buf[3];
  for (unsigned char c : bytes) {
    std::snprintf(buf, sizeof(buf), "%02x", c);
    out += buf;
  }
  return out;
}

struct RecordedCase {
  std::string label;
  Distribution distribution = Distribution::kKetama;
  TwemHash hash = TwemHash::kFnv1a_64;
  std::string hash_tag;
  std::vector<PlacementServer> servers;
  std::vector<int> placement;
};

struct Recorded {
  std::vector<std::string> keys;
  std::vector<RecordedCase> cases;
};

const Recorded& recorded() {
  static const Recorded data = [] {
    Recorded out;
    const YAML::Node root =
        YAML::LoadFile(SP_SOURCE_DIR "/tests/unit/route/data/twemproxy_placement.json");
    for (const auto& k : root["keys_hex"]) {
      out.keys.push_back(fromHex(k.as<std::string>()));
    }
    for (const auto& c : root["cases"]) {
      RecordedCase rc;
      const auto dist = c["distribution"].as<std::string>();
      const auto hash = c["hash"].as<std::string>();
      EXPECT_TRUE(parseDistribution(dist, &rc.distribution)) << dist;
      const auto parsed = parseTwemHash(hash);
      EXPECT_TRUE(parsed.has_value()) << hash;
      rc.hash = parsed.value_or(TwemHash::kFnv1a_64);
      rc.hash_tag = c["hash_tag"].as<std::string>();
      rc.label = dist + "/" + hash + " tag '" + rc.hash_tag + "' servers";
      for (const auto& s : c["servers"]) {
        rc.servers.push_back({s["name"].as<std::string>(), s["weight"].as<uint32_t>()});
        rc.label += " " + rc.servers.back().name + ":" + std::to_string(rc.servers.back().weight);
      }
      for (const auto& p : c["placement"]) {
        rc.placement.push_back(p.as<int>());
      }
      out.cases.push_back(std::move(rc));
    }
    return out;
  }();
  return data;
}

TEST(TwemproxyPlacementTest, EveryRecordedCaseMatchesNutcrackerKeyForKey) {
  const Recorded& data = recorded();
  ASSERT_EQ(data.keys.size(), 200u);
  ASSERT_GE(data.cases.size(), 99u);
  std::map<TwemHash, int> cases_per_hash;
  for (const RecordedCase& c : data.cases) {
    ASSERT_EQ(c.placement.size(), data.keys.size()) << c.label;
    const TwemproxyPlacement placement(c.distribution, c.hash, c.hash_tag, c.servers);
    int wrong = 0;
    std::string first_wrong;
    for (size_t k = 0; k < data.keys.size(); ++k) {
      const int ours = placement.serverOfKey(data.keys[k]);
      if (ours != c.placement[k] && wrong++ == 0) {
        first_wrong = "key " + toHex(data.keys[k]) + ": ours " + std::to_string(ours) +
                      ", nutcracker " + std::to_string(c.placement[k]);
      }
    }
    EXPECT_EQ(wrong, 0) << c.label << " — first: " << first_wrong;
    ++cases_per_hash[c.hash];
  }
  // Every hash function is covered, under both distributions.
  EXPECT_EQ(cases_per_hash.size(), kTwemHashCount);
}

// Modula with n servers of weight 1 places a key on hash % n (in nutcracker's name order), so
// the recorded 16/13/11/9/7-server cases pin each hash function's value modulo 720720.
TEST(TwemproxyPlacementTest, ModulaCasesCoverSeveralModuli) {
  std::map<std::string, std::set<size_t>> moduli;
  for (const RecordedCase& c : recorded().cases) {
    if (c.distribution == Distribution::kModula) {
      moduli[std::string(twemHashName(c.hash))].insert(c.servers.size());
    }
  }
  ASSERT_EQ(moduli.size(), kTwemHashCount);
  for (const auto& [hash, sizes] : moduli) {
    for (size_t n : {16u, 13u, 11u, 9u, 7u}) {
      EXPECT_TRUE(sizes.count(n)) << hash << " has no " << n << "-server modula case";
    }
  }
}

// The checks bite: one server's weight changed moves keys.
TEST(TwemproxyPlacementTest, AChangedWeightMovesKeys) {
  const std::vector<PlacementServer> servers = {{"a", 1}, {"b", 1}, {"c", 1}, {"d", 1}};
  std::vector<PlacementServer> heavier = servers;
  heavier[2].weight = 3;
  const TwemproxyPlacement even(Distribution::kKetama, TwemHash::kFnv1a_64, "", servers);
  const TwemproxyPlacement uneven(Distribution::kKetama, TwemHash::kFnv1a_64, "", heavier);
  int moved = 0;
  int on_c = 0;
  for (int i = 0; i < 2000; ++i) {
    const std::string key = "key:" + std::to_string(i);
    moved += even.serverOfKey(key) != uneven.serverOfKey(key);
    on_c += uneven.serverOfKey(key) == 2;
  }
  EXPECT_GT(moved, 200);
  EXPECT_GT(on_c, 2000 / 3);  // half the weight: about half the keys
}

TEST(TwemproxyPlacementTest, ServerOrderIsNutcrackersNotTheConfigs) {
  // The same servers listed in another order place every key on the same named server.
  const std::vector<PlacementServer> listed = {{"gamma", 1}, {"alpha", 1}, {"beta", 1}};
  const std::vector<PlacementServer> sorted = {{"beta", 1}, {"alpha", 1}, {"gamma", 1}};
  const TwemproxyPlacement a(Distribution::kModula, TwemHash::kMurmur, "", listed);
  const TwemproxyPlacement b(Distribution::kModula, TwemHash::kMurmur, "", sorted);
  for (int i = 0; i < 500; ++i) {
    const std::string key = "k" + std::to_string(i);
    EXPECT_EQ(listed[a.serverOfKey(key)].name, sorted[b.serverOfKey(key)].name) << key;
  }
}

TEST(TwemproxyPlacementTest, OneServerTakesEveryKeyAndRandomStaysInRange) {
  const TwemproxyPlacement one(Distribution::kKetama, TwemHash::kMd5, "", {{"only", 1}});
  EXPECT_EQ(one.serverOfKey("anything"), 0);
  const TwemproxyPlacement random(Distribution::kRandom, TwemHash::kMd5, "",
                                  {{"a", 1}, {"b", 1}, {"c", 1}});
  std::set<uint16_t> seen;
  for (int i = 0; i < 300; ++i) {
    const uint16_t s = random.serverOfKey("same");
    ASSERT_LT(s, 3);
    seen.insert(s);
  }
  EXPECT_EQ(seen.size(), 3u);
}

TEST(HashTagTest, TwemproxyTagNeedsBothCharactersAndSomethingBetween) {
  EXPECT_EQ(twemproxyHashTag("{user1}:a", "{}"), "user1");
  EXPECT_EQ(twemproxyHashTag("a{}b", "{}"), "a{}b");  // empty tag: the whole key
  EXPECT_EQ(twemproxyHashTag("{", "{}"), "{");
  EXPECT_EQ(twemproxyHashTag("}{x}", "{}"), "x");
  EXPECT_EQ(twemproxyHashTag("x$tag$y", "$$"), "tag");
  EXPECT_EQ(twemproxyHashTag("$$ab", "$$"), "$$ab");
  EXPECT_EQ(twemproxyHashTag("{user1}:a", ""), "{user1}:a");
}

TEST(HashTagTest, CodisHashesAnEmptyTagAsEmpty) {
  EXPECT_EQ(codisHashTag("{user1}:a"), "user1");
  EXPECT_EQ(codisHashTag("a{}b"), "");
  EXPECT_EQ(codisHashTag("no tag"), "no tag");
  EXPECT_EQ(codisHashTag("{open"), "{open");
}

// CRC-32 bit by bit, with no table: independent of hashkit's.
uint32_t bitwiseCrc32(std::string_view bytes) {
  uint32_t crc = 0xffffffffu;
  for (unsigned char c : bytes) {
    crc ^= c;
    for (int i = 0; i < 8; ++i) {
      crc = (crc >> 1) ^ (0xedb88320u & (0u - (crc & 1u)));
    }
  }
  return ~crc;
}

TEST(CodisPlacementTest, SlotIsCrc32OfTheTagModulo1024) {
  EXPECT_EQ(crc32Ieee("123456789"), 0xcbf43926u);  // the CRC-32 check value
  for (int i = 0; i < 5000; ++i) {
    const std::string key = "key:" + std::to_string(i * 7919);
    EXPECT_EQ(codisSlot(key), bitwiseCrc32(key) % 1024) << key;
    const std::string tagged = "{" + std::to_string(i) + "}:x";
    EXPECT_EQ(codisSlot(tagged), bitwiseCrc32(std::to_string(i)) % 1024) << tagged;
  }
}

TEST(CodisPlacementTest, AnUnevenSlotTablePlacesKeysByItsRanges) {
  std::vector<ShardAddress> shards;
  for (int i = 0; i < 4; ++i) {
    shards.push_back(
        {"group" + std::to_string(i + 1), "127.0.0.1", static_cast<uint16_t>(7000 + i)});
  }
  // Four groups, uneven and out of order: 0-99 g2, 100-611 g1, 612-1000 g4, 1001-1023 g3.
  const std::vector<SlotAssignment> ranges = {
      {0, 99, 1}, {100, 611, 0}, {612, 1000, 3}, {1001, 1023, 2}};
  const auto topo = Topology::codis(shards, ranges);
  EXPECT_EQ(topo->placementKind(), PlacementKind::kCodis);
  auto expected = [](uint32_t slot) {
    return slot <= 99 ? 1 : slot <= 611 ? 0 : slot <= 1000 ? 3 : 2;
  };
  std::set<uint16_t> used;
  for (int i = 0; i < 20000; ++i) {
    const std::string key = "k" + std::to_string(i);
    const uint32_t slot = bitwiseCrc32(key) % 1024;
    ASSERT_EQ(topo->shardOfKey(key), expected(slot)) << key;
    used.insert(topo->shardOfKey(key));
  }
  EXPECT_EQ(used.size(), 4u);
  EXPECT_EQ(topo->ranges().size(), 4u);
  EXPECT_EQ(topo->ranges().back().last, 1023);
  EXPECT_EQ(topo->crossUnitError().text, resp::err::kCrossSlot.text);  // Codis has slots
}

TEST(TwemproxyTopologyTest, UnitsAreShardsAndCrossUnitSaysShard) {
  std::vector<ShardAddress> shards = {{"a", "127.0.0.1", 7000}, {"b", "127.0.0.1", 7001}};
  const auto topo = Topology::twemproxy(
      shards,
      TwemproxyPlacement(Distribution::kModula, TwemHash::kCrc32a, "{}", {{"a", 1}, {"b", 1}}));
  for (int i = 0; i < 100; ++i) {
    const std::string key = "{t" + std::to_string(i) + "}x";
    EXPECT_EQ(topo->unitOfKey(key), bitwiseCrc32("t" + std::to_string(i)) % 2) << key;
    EXPECT_EQ(topo->shardOfKey(key), topo->unitOfKey(key));
  }
  EXPECT_TRUE(topo->ranges().empty());
  EXPECT_EQ(topo->crossUnitError().kind, resp::err::ProxyError::kCrossSlot);
  EXPECT_NE(topo->crossUnitError().text.find("same shard"), std::string_view::npos);
  EXPECT_EQ(topo->placementSummary(), "twemproxy modula crc32a hash_tag {}");
}

TEST(Md5Test, Rfc1321Vectors) {
  const std::pair<std::string, std::string> vectors[] = {
      {"", "d41d8cd98f00b204e9800998ecf8427e"},
      {"a", "0cc175b9c0f1b6a831c399e269772661"},
      {"abc", "900150983cd24fb0d6963f7d28e17f72"},
      {"message digest", "f96b697d7cb7938d525a2f31aaf161d0"},
      {"abcdefghijklmnopqrstuvwxyz", "c3fcd3d76192e4007dfb496cca67e13b"},
      {"12345678901234567890123456789012345678901234567890123456789012345678901234567890",
       "57edf4a22be3c955ac49da2e2107b67a"},
  };
  for (const auto& [input, digest] : vectors) {
    const auto d = md5(input);
    EXPECT_EQ(toHex(std::string_view(reinterpret_cast<const char*>(d.data()), d.size())), digest)
        << input;
  }
  // 55, 56 and 64 bytes: the padding's one- and two-block edges.
  EXPECT_EQ(toHex([] {
              const auto d = md5(std::string(56, 'a'));
              return std::string(reinterpret_cast<const char*>(d.data()), d.size());
            }()),
            "3b0c8ac703f828b04c6c197006d17218");
}

}  // namespace
}  // namespace sp::route
