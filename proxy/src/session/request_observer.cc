// Slow log entries: the command, the shard, the client's address and name.
#include "session/request_observer.h"

#include <cstdio>
#include <cstring>
#include <ctime>

#include "core/clock.h"
#include "session/client_session.h"

namespace sp::session {

void recordSlowRequest(net::Worker& worker, const PendingRequest& request, uint64_t duration_us) {
  worker.stats().slow_requests.add();
  net::SlowLogEntry entry;
  entry.recorded_ns = monoNanos();  // numbered by the first SLOWLOG GET that sees it
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
    // Allocates nothing: a slow request can happen in the steady state.
    request.owner->formatPeer(entry.client, sizeof entry.client);
    net::SlowLogEntry::copy(entry.client_name, sizeof entry.client_name, request.owner->name());
  }
  worker.slowLog().record(entry);
}

}  // namespace sp::session
