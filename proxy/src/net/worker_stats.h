// Per-worker statistics: written only by the owning worker, read by INFO from any worker.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "core/counter.h"

namespace sp::net {

enum class BackendState : uint8_t { kConnecting, kUp, kDown };

const char* backendStateName(BackendState state);

struct ShardStats {
  Counter requests;  // requests and fragments sent
  Counter errors;    // requests failed because the connection failed
  Counter connects;  // successful (re)connects
  Counter connect_failures;
  Counter connections_up;  // connections currently up (0..backend.connections)
  Counter inflight;        // requests sent and not yet answered
};

struct WorkerStats {
  Counter connections_open;
  Counter connections_accepted;
  Counter connections_rejected;  // over limits.max_clients
  Counter closed_output_limit;   // closed: limits.client_output_buffer exceeded
  Counter commands;              // requests parsed (local, routed, refused)
  Counter commands_local;
  Counter commands_split;
  Counter commands_refused;  // unknown, unsupported, arity, crossslot
  Counter protocol_errors_client;
  Counter protocol_errors_backend;
  Counter reads_paused;  // times reading from a client paused (in-flight cap)
  Counter bytes_in;
  Counter bytes_out;
  std::unique_ptr<ShardStats[]> shards;
  size_t shard_count = 0;

  explicit WorkerStats(size_t shard_count_in)
      : shards(new ShardStats[shard_count_in]), shard_count(shard_count_in) {}
};

}  // namespace sp::net
