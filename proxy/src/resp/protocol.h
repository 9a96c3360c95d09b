// The protocol a client speaks: RESP2 until it sends HELLO 3, RESP3 until HELLO 2 or RESET.
// Shard connections speak the protocol of the clients they carry (one pool per protocol), so
// shard replies pass through unchanged; replies the proxy builds itself are encoded for the
// client's protocol (resp3.h).
#pragma once

#include <cstdint>

namespace sp::resp {

enum class Protocol : uint8_t { kResp2 = 2, kResp3 = 3 };

}  // namespace sp::resp
