// Redis Cluster key slots: CRC16-XMODEM of the key, or of its first non-empty {hash tag}, mod
// 16384.
#pragma once

#include <cstdint>
#include <string_view>

namespace sp::route {

inline constexpr uint16_t kSlotCount = 16384;

// CRC16-CCITT (XMODEM): polynomial 0x1021, initial value 0, as in Redis's crc16.c.
uint16_t crc16(std::string_view bytes);

// The part of the key that is hashed: the bytes between the first '{' and the first '}' after
// it, when that is non-empty; otherwise the whole key.
std::string_view hashTag(std::string_view key);

inline uint16_t keySlot(std::string_view key) { return crc16(hashTag(key)) & (kSlotCount - 1); }

}  // namespace sp::route
