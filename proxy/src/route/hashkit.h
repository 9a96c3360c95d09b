// twemproxy's (nutcracker's) key hash functions, bit for bit, so that a pool placed by twemproxy
// keeps its keys where they are when shardproxy takes it over. Each function returns what
// nutcracker's hash_<name> returns on x86-64, quirks included: several of them widen a signed
// char, so bytes >= 0x80 sign-extend (one_at_a_time, fnv*, hsieh's tail) and crc32 keeps 15 bits.
// Checked against placements recorded from nutcracker itself (tools/record-twemproxy-placement.py).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

namespace sp::route {

enum class TwemHash : uint8_t {
  kOneAtATime,
  kMd5,
  kCrc16,
  kCrc32,
  kCrc32a,
  kFnv1_32,
  kFnv1a_32,
  kFnv1_64,
  kFnv1a_64,
  kHsieh,
  kMurmur,
  kJenkins,
};

inline constexpr size_t kTwemHashCount = 12;

// nutcracker.yml's names ("fnv1a_64", ...); nullopt for any other.
std::optional<TwemHash> parseTwemHash(std::string_view name);
std::string_view twemHashName(TwemHash hash);

uint32_t twemHash(TwemHash hash, std::string_view key);

// RFC 1321 MD5 (ketama's continuum points and the md5 hash).
std::array<uint8_t, 16> md5(std::string_view bytes);

// The standard CRC-32 (IEEE 802.3, as zlib's crc32 and Go's crc32.ChecksumIEEE): twemproxy's
// crc32a, and Codis's slot hash.
uint32_t crc32Ieee(std::string_view bytes);

}  // namespace sp::route
