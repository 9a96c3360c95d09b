// Upper bounds on configuration values, shared by the YAML loader, the command line and the
// validator so that all three report the same range.
#pragma once

#include <cstdint>
#include <limits>

namespace sp::config {

inline constexpr int kMaxWorkers = 1024;
inline constexpr int kMaxBackendConnections = 1024;
inline constexpr size_t kMaxShards = 16384;                                // one slot each at most
inline constexpr uint64_t kMaxSlowlogThresholdUs = 3600ull * 1000 * 1000;  // an hour
inline constexpr uint64_t kMaxReadyQuorumPercent = 100;                    // metrics.ready_quorum
inline constexpr uint64_t kMaxSlowlogLen = 1000000;                        // entries per worker
inline constexpr uint32_t kMaxTcpKeepalive = 32767;  // seconds: Linux's TCP_KEEPIDLE maximum
inline constexpr uint64_t kMaxShardWeight = 10000;   // shards[i].weight (twemproxy placement)
inline constexpr uint64_t kMaxBufferPoolBytes = 1ull << 30;  // limits.buffer_pool_bytes, per worker
// Sizes are compared with signed RESP lengths, so they stay below 2^63.
inline constexpr uint64_t kMaxSizeBytes =
    static_cast<uint64_t>(std::numeric_limits<int64_t>::max());

}  // namespace sp::config
