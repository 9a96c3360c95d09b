// twemproxy's hash functions. Where nutcracker reads a key byte through a plain (signed) char and
// widens it, sbyte() does the same; where it reads unsigned bytes, ubyte().
#include "route/hashkit.h"

#include <cstring>

namespace sp::route {
namespace {

constexpr std::string_view kNames[kTwemHashCount] = {
    "one_at_a_time", "md5",     "crc16",    "crc32", "crc32a", "fnv1_32",
    "fnv1a_32",      "fnv1_64", "fnv1a_64", "hsieh", "murmur", "jenkins"};

uint32_t ubyte(char c) { return static_cast<unsigned char>(c); }
// A char widened the way C widens a signed char: 0x80..0xff become 0xffffff80..0xffffffff.
uint32_t sbyte(char c) {
  return static_cast<uint32_t>(static_cast<int32_t>(static_cast<signed char>(c)));
}
uint64_t sbyte64(char c) {
  return static_cast<uint64_t>(static_cast<int64_t>(static_cast<signed char>(c)));
}
uint32_t le16(const char* p) { return ubyte(p[0]) | (ubyte(p[1]) << 8); }
uint32_t le32(const char* p) { return le16(p) | (le16(p + 2) << 16); }
uint32_t rotl(uint32_t x, int k) { return (x << k) | (x >> (32 - k)); }

constexpr std::array<uint32_t, 256> makeCrc32Table() {
  std::array<uint32_t, 256> table{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t crc = i;
    for (int bit = 0; bit < 8; ++bit) {
      crc = (crc & 1) ? (crc >> 1) ^ 0xedb88320u : crc >> 1;
    }
    table[i] = crc;
  }
  return table;
}

// CRC-16/XMODEM (polynomial 0x1021), the table of nutcracker 0.5's crc16.
constexpr std::array<uint16_t, 256> makeCrc16Table() {
  std::array<uint16_t, 256> table{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t crc = i << 8;
    for (int bit = 0; bit < 8; ++bit) {
      crc = (crc & 0x8000) ? (crc << 1) ^ 0x1021u : crc << 1;
    }
    table[i] = static_cast<uint16_t>(crc);
  }
  return table;
}

constexpr std::array<uint32_t, 256> kCrc32Table = makeCrc32Table();
constexpr std::array<uint16_t, 256> kCrc16Table = makeCrc16Table();

uint32_t oneAtATime(std::string_view key) {
  uint32_t value = 0;
  for (char c : key) {
    value += sbyte(c);
    value += value << 10;
    value ^= value >> 6;
  }
  value += value << 3;
  value ^= value >> 11;
  value += value << 15;
  return value;
}

uint32_t md5Hash(std::string_view key) {
  const std::array<uint8_t, 16> d = md5(key);
  return static_cast<uint32_t>(d[3]) << 24 | static_cast<uint32_t>(d[2]) << 16 |
         static_cast<uint32_t>(d[1]) << 8 | d[0];
}

// nutcracker 0.5's crc16 keeps its running value in 32 bits and never masks it: past two bytes
// the upper bits carry the shifted-out history, so this is not CRC-16 but what it returns.
uint32_t crc16Nutcracker(std::string_view key) {
  uint32_t crc = 0;
  for (char c : key) {
    crc = (crc << 8) ^ kCrc16Table[((crc >> 8) ^ ubyte(c)) & 0xff];
  }
  return crc;
}

// libmemcached's crc32: the standard CRC, then 15 bits of its upper half.
uint32_t crc32Memcached(std::string_view key) {
  uint32_t crc = 0xffffffffu;
  for (char c : key) {
    crc = (crc >> 8) ^ kCrc32Table[(crc ^ ubyte(c)) & 0xff];
  }
  return ((~crc) >> 16) & 0x7fff;
}

constexpr uint64_t kFnv64Init = 0xcbf29ce484222325ull;
constexpr uint64_t kFnv64Prime = 0x100000001b3ull;
constexpr uint32_t kFnv32Init = 2166136261u;
constexpr uint32_t kFnv32Prime = 16777619u;

uint32_t fnv1_64(std::string_view key) {
  uint64_t hash = kFnv64Init;
  for (char c : key) {
    hash *= kFnv64Prime;
    hash ^= sbyte64(c);
  }
  return static_cast<uint32_t>(hash);
}

// nutcracker's fnv1a_64 runs in 32 bits with the 64-bit constants truncated.
uint32_t fnv1a_64(std::string_view key) {
  uint32_t hash = static_cast<uint32_t>(kFnv64Init);
  for (char c : key) {
    hash ^= sbyte(c);
    hash *= static_cast<uint32_t>(kFnv64Prime);
  }
  return hash;
}

uint32_t fnv1_32(std::string_view key) {
  uint32_t hash = kFnv32Init;
  for (char c : key) {
    hash *= kFnv32Prime;
    hash ^= sbyte(c);
  }
  return hash;
}

uint32_t fnv1a_32(std::string_view key) {
  uint32_t hash = kFnv32Init;
  for (char c : key) {
    hash ^= sbyte(c);
    hash *= kFnv32Prime;
  }
  return hash;
}

// Paul Hsieh's SuperFastHash.
uint32_t hsieh(std::string_view key) {
  if (key.empty()) {
    return 0;
  }
  const char* p = key.data();
  uint32_t hash = 0;
  for (size_t blocks = key.size() >> 2; blocks > 0; --blocks, p += 4) {
    hash += le16(p);
    const uint32_t tmp = (le16(p + 2) << 11) ^ hash;
    hash = (hash << 16) ^ tmp;
    hash += hash >> 11;
  }
  switch (key.size() & 3) {
    case 3:
      hash += le16(p);
      hash ^= hash << 16;
      hash ^= sbyte(p[2]) << 18;
      hash += hash >> 11;
      break;
    case 2:
      hash += le16(p);
      hash ^= hash << 11;
      hash += hash >> 17;
      break;
    case 1:
      hash += ubyte(p[0]);
      hash ^= hash << 10;
      hash += hash >> 1;
      break;
    default:
      break;
  }
  hash ^= hash << 3;
  hash += hash >> 5;
  hash ^= hash << 4;
  hash += hash >> 17;
  hash ^= hash << 25;
  hash += hash >> 6;
  return hash;
}

// MurmurHash2 with nutcracker's seed (0xdeadbeef times the length).
uint32_t murmur(std::string_view key) {
  constexpr uint32_t m = 0x5bd1e995;
  const auto length = static_cast<uint32_t>(key.size());
  uint32_t h = (0xdeadbeefu * length) ^ length;
  const char* p = key.data();
  size_t left = key.size();
  for (; left >= 4; left -= 4, p += 4) {
    uint32_t k = le32(p);
    k *= m;
    k ^= k >> 24;
    k *= m;
    h *= m;
    h ^= k;
  }
  switch (left) {
    case 3:
      h ^= ubyte(p[2]) << 16;
      [[fallthrough]];
    case 2:
      h ^= ubyte(p[1]) << 8;
      [[fallthrough]];
    case 1:
      h ^= ubyte(p[0]);
      h *= m;
      break;
    default:
      break;
  }
  h ^= h >> 13;
  h *= m;
  h ^= h >> 15;
  return h;
}

// Bob Jenkins' lookup3 hashlittle with nutcracker's initial value 13. On a little-endian machine
// its aligned and unaligned paths agree, so the byte-wise one is enough.
uint32_t jenkins(std::string_view key) {
  uint32_t a = 0xdeadbeefu + static_cast<uint32_t>(key.size()) + 13;
  uint32_t b = a;
  uint32_t c = a;
  const char* p = key.data();
  size_t length = key.size();
  if (length == 0) {
    return c;
  }
  for (; length > 12; length -= 12, p += 12) {
    a += le32(p);
    b += le32(p + 4);
    c += le32(p + 8);
    a -= c, a ^= rotl(c, 4), c += b;
    b -= a, b ^= rotl(a, 6), a += c;
    c -= b, c ^= rotl(b, 8), b += a;
    a -= c, a ^= rotl(c, 16), c += b;
    b -= a, b ^= rotl(a, 19), a += c;
    c -= b, c ^= rotl(b, 4), b += a;
  }
  uint32_t tail[3] = {0, 0, 0};
  for (size_t i = 0; i < length; ++i) {
    tail[i / 4] |= ubyte(p[i]) << (8 * (i % 4));
  }
  a += tail[0];
  b += tail[1];
  c += tail[2];
  c ^= b, c -= rotl(b, 14);
  a ^= c, a -= rotl(c, 11);
  b ^= a, b -= rotl(a, 25);
  c ^= b, c -= rotl(b, 16);
  a ^= c, a -= rotl(c, 4);
  b ^= a, b -= rotl(a, 14);
  c ^= b, c -= rotl(b, 24);
  return c;
}

// ---- MD5 (RFC 1321) ----

constexpr uint32_t kMd5Shift[64] = {7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22,
                                    5, 9,  14, 20, 5, 9,  14, 20, 5, 9,  14, 20, 5, 9,  14, 20,
                                    4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23,
                                    6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21};

// floor(abs(sin(i + 1)) * 2^32)
constexpr uint32_t kMd5Sine[64] = {
    0xd76aa478, 0xe8c7b756, 0x242070db, 0xc1bdceee, 0xf57c0faf, 0x4787c62a, 0xa8304613, 0xfd469501,
    0x698098d8, 0x8b44f7af, 0xffff5bb1, 0x895cd7be, 0x6b901122, 0xfd987193, 0xa679438e, 0x49b40821,
    0xf61e2562, 0xc040b340, 0x265e5a51, 0xe9b6c7aa, 0xd62f105d, 0x02441453, 0xd8a1e681, 0xe7d3fbc8,
    0x21e1cde6, 0xc33707d6, 0xf4d50d87, 0x455a14ed, 0xa9e3e905, 0xfcefa3f8, 0x676f02d9, 0x8d2a4c8a,
    0xfffa3942, 0x8771f681, 0x6d9d6122, 0xfde5380c, 0xa4beea44, 0x4bdecfa9, 0xf6bb4b60, 0xbebfbc70,
    0x289b7ec6, 0xeaa127fa, 0xd4ef3085, 0x04881d05, 0xd9d4d039, 0xe6db99e5, 0x1fa27cf8, 0xc4ac5665,
    0xf4292244, 0x432aff97, 0xab9423a7, 0xfc93a039, 0x655b59c3, 0x8f0ccc92, 0xffeff47d, 0x85845dd1,
    0x6fa87e4f, 0xfe2ce6e0, 0xa3014314, 0x4e0811a1, 0xf7537e82, 0xbd3af235, 0x2ad7d2bb, 0xeb86d391};

void md5Block(const char* block, uint32_t state[4]) {
  uint32_t w[16];
  for (int i = 0; i < 16; ++i) {
    w[i] = le32(block + 4 * i);
  }
  uint32_t a = state[0];
  uint32_t b = state[1];
  uint32_t c = state[2];
  uint32_t d = state[3];
  for (int i = 0; i < 64; ++i) {
    uint32_t f = 0;
    int g = 0;
    if (i < 16) {
      f = (b & c) | (~b & d);
      g = i;
    } else if (i < 32) {
      f = (d & b) | (~d & c);
      g = (5 * i + 1) % 16;
    } else if (i < 48) {
      f = b ^ c ^ d;
      g = (3 * i + 5) % 16;
    } else {
      f = c ^ (b | ~d);
      g = (7 * i) % 16;
    }
    const uint32_t next_b = b + rotl(a + f + kMd5Sine[i] + w[g], static_cast<int>(kMd5Shift[i]));
    a = d;
    d = c;
    c = b;
    b = next_b;
  }
  state[0] += a;
  state[1] += b;
  state[2] += c;
  state[3] += d;
}

}  // namespace

std::array<uint8_t, 16> md5(std::string_view bytes) {
  uint32_t state[4] = {0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476};
  size_t whole = bytes.size() / 64 * 64;
  for (size_t off = 0; off < whole; off += 64) {
    md5Block(bytes.data() + off, state);
  }
  // The tail, the 0x80 marker, zero padding and the bit length: one or two blocks.
  char last[128] = {};
  const size_t rest = bytes.size() - whole;
  if (rest > 0) {
    std::memcpy(last, bytes.data() + whole, rest);
  }
  last[rest] = static_cast<char>(0x80);
  const size_t tail_len = rest + 1 + 8 <= 64 ? 64 : 128;
  const uint64_t bits = static_cast<uint64_t>(bytes.size()) * 8;
  for (int i = 0; i < 8; ++i) {
    last[tail_len - 8 + i] = static_cast<char>(bits >> (8 * i));
  }
  for (size_t off = 0; off < tail_len; off += 64) {
    md5Block(last + off, state);
  }
  std::array<uint8_t, 16> out{};
  for (int i = 0; i < 16; ++i) {
    out[i] = static_cast<uint8_t>(state[i / 4] >> (8 * (i % 4)));
  }
  return out;
}

uint32_t crc32Ieee(std::string_view bytes) {
  uint32_t crc = 0xffffffffu;
  for (char c : bytes) {
    crc = kCrc32Table[(crc ^ ubyte(c)) & 0xff] ^ (crc >> 8);
  }
  return crc ^ 0xffffffffu;
}

std::optional<TwemHash> parseTwemHash(std::string_view name) {
  for (size_t i = 0; i < kTwemHashCount; ++i) {
    if (kNames[i] == name) {
      return static_cast<TwemHash>(i);
    }
  }
  return std::nullopt;
}

std::string_view twemHashName(TwemHash hash) { return kNames[static_cast<size_t>(hash)]; }

uint32_t twemHash(TwemHash hash, std::string_view key) {
  switch (hash) {
    case TwemHash::kOneAtATime:
      return oneAtATime(key);
    case TwemHash::kMd5:
      return md5Hash(key);
    case TwemHash::kCrc16:
      return crc16Nutcracker(key);
    case TwemHash::kCrc32:
      return crc32Memcached(key);
    case TwemHash::kCrc32a:
      return crc32Ieee(key);
    case TwemHash::kFnv1_32:
      return fnv1_32(key);
    case TwemHash::kFnv1a_32:
      return fnv1a_32(key);
    case TwemHash::kFnv1_64:
      return fnv1_64(key);
    case TwemHash::kFnv1a_64:
      return fnv1a_64(key);
    case TwemHash::kHsieh:
      return hsieh(key);
    case TwemHash::kMurmur:
      return murmur(key);
    case TwemHash::kJenkins:
      return jenkins(key);
  }
  return 0;
}

}  // namespace sp::route
