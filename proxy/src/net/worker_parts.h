// The two parts of a worker that the layers above net/ build: its shard side (backend/: the
// connections to the shards, the cluster redirector, the dedicated connections) and its client
// side (session/: the client sessions). The worker is a thread and a loop; it drives the parts
// through these interfaces, on its own thread, and knows nothing else of them.
// session::buildWorkerParts builds both; main and the tests hand it to each Worker.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>

#include "route/topology.h"

namespace sp::net {

class Worker;

class ShardSide {
 public:
  struct Reconciled {
    size_t kept = 0;     // shards whose connections were kept
    size_t retired = 0;  // connections retired, draining what they have in flight
  };

  virtual ~ShardSide() = default;
  // The loop is about to turn: the first connections and the timers.
  virtual void start() = 0;
  // A new topology (the worker has bound its stats to it already): keep the connections of
  // unchanged shards and retire the others; `same_connections`: backend.connections unchanged.
  virtual Reconciled applyTopology(const route::Topology& before, const route::Topology& after,
                                   bool same_connections) = 0;
  // Every backend.ping_interval_ms: health pings, and retired connections that drained closed.
  virtual void ping() = 0;
  // Once a second: frees buffers that a large value left grown; returns the bytes freed.
  virtual size_t trimBuffers() = 0;
  // Shutdown, once the clients are closed: answers what still waits and closes every connection.
  virtual void shutdown() = 0;
};

class ClientSide {
 public:
  virtual ~ClientSide() = default;
  // The loop is about to turn.
  virtual void start() = 0;
  // A connection accepted on one of the worker's listeners (`fd` non-blocking): a session starts
  // on it, or it is refused (limits.max_clients, a TLS listener without a context).
  virtual void accept(int fd, bool unix_socket, bool tls) = 0;
  // limits.timeout: closes the clients idle for longer than timeout_ms at now_ms.
  virtual void closeIdle(uint64_t now_ms, uint64_t timeout_ms) = 0;
  // Drain: true when no client has a request in flight.
  virtual bool idle() const = 0;
  // Shutdown: closes every client and answers the replies held back (their clients have gone).
  virtual void closeAll() = 0;
};

struct WorkerParts {
  std::unique_ptr<ShardSide> shards;
  std::unique_ptr<ClientSide> clients;
};
using WorkerPartsFactory = std::function<WorkerParts(Worker&)>;

}  // namespace sp::net
