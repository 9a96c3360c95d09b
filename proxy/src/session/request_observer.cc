// Slow log entries: the command, the shard, the client's address and name.
#include "session/request_observer.h"

#include <sys/un.h>
#include <uv.h>

#include <cstdio>
#include <cstring>
#include <ctime>

#include "net/socket_address.h"
#include "session/client_session.h"

namespace sp::session {
namespace {

// "ip:port" of the client into out[size]; "" when unknown. Allocates nothing (a slow request can
// happen in the steady state, where the proxy allocates nothing).
void peerAddress(ClientSession& session, char* out, size_t size) {
  out[0] = '\0';
  sockaddr_storage addr{};
  if (session.isUnixSocket()) {
    // As redis-server: the listening socket's path (the client's own has none).
    int len = sizeof addr;
    if (uv_tcp_getsockname(session.handle(), reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
      const auto* un = reinterpret_cast<const sockaddr_un*>(&addr);
      std::snprintf(out, size, "%.*s:0",
                    static_cast<int>(strnlen(un->sun_path, sizeof un->sun_path)), un->sun_path);
    }
    return;
  }
  if (session.peerName(&addr)) {
    net::formatSocketAddress(addr, out, size);
  }
}

}  // namespace

void recordSlowRequest(net::Worker& worker, const PendingRequest& request, uint64_t duration_us) {
  worker.stats().slow_requests.add();
  net::SlowLogEntry entry;
  entry.id = worker.context().next_slowlog_id.fetch_add(1, std::memory_order_relaxed) + 1;
  entry.unix_time = static_cast<uint64_t>(std::time(nullptr));
  entry.duration_us = duration_us;
  char command[sizeof entry.command] = {};
  size_t n = 0;
  const std::string_view name = request.cmd != nullptr ? request.cmd->name : "?";
  for (; n < name.size() && n + 1 < sizeof command; ++n) {
    const char c = name[n];
    command[n] = c == '|' ? ' ' : (c >= 'a' && c <= 'z' ? static_cast<char>(c - 32) : c);
  }
  net::SlowLogEntry::copy(entry.command, sizeof entry.command, std::string_view(command, n));
  if (request.merge != resp::MergeRule::kNone) {
    std::snprintf(entry.shard, sizeof entry.shard, "split:%zu", request.fragment_replies.size());
  } else if (request.cmd != nullptr && request.cmd->has(resp::kCmdLocal)) {
    net::SlowLogEntry::copy(entry.shard, sizeof entry.shard, "-");
  } else if (request.shard < worker.topology().shardCount()) {
    net::SlowLogEntry::copy(entry.shard, sizeof entry.shard,
                            worker.topology().shards()[request.shard].name);
  }
  if (request.owner != nullptr) {
    peerAddress(*request.owner, entry.client, sizeof entry.client);
    net::SlowLogEntry::copy(entry.client_name, sizeof entry.client_name, request.owner->name());
  }
  worker.slowLog().record(entry);
}

}  // namespace sp::session
