// Fan-out of whole-keyspace commands and the merge rules of their replies.
#include "session/keyspace_fanout.h"

#include <algorithm>
#include <charconv>
#include <limits>
#include <string>
#include <unordered_set>
#include <vector>

#include "backend/backend_conn.h"
#include "core/clock.h"
#include "net/worker.h"
#include "resp/encoder.h"
#include "resp/reply_reader.h"
#include "session/client_commands.h"
#include "session/client_session.h"
#include "session/fanout.h"
#include "session/request_observer.h"
#include "session/session_checks.h"
#include "session/session_state.h"

namespace sp::session {
namespace {

constexpr uint64_t kShardMask = (uint64_t{1} << kScanShardBits) - 1;
constexpr uint64_t kMaxShardCursor = std::numeric_limits<uint64_t>::max() >> kScanShardBits;
constexpr std::string_view kUnexpected =
    "-ERR shardproxy: unexpected reply from a shard to a fanned-out command\r\n";

bool parseUnsigned(std::string_view text, uint64_t* out) {
  if (text.empty()) {
    return false;
  }
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return ec == std::errc() && end == text.data() + text.size();
}

// Every fragment's array elements, or false (request->reply then says why).
bool allElements(PendingRequest* request, std::vector<std::vector<std::string_view>>* out) {
  out->resize(request->fragment_replies.size());
  for (size_t f = 0; f < request->fragment_replies.size(); ++f) {
    if (!resp::readArrayElements(request->fragment_replies[f], &(*out)[f])) {
      request->reply = kUnexpected;
      return false;
    }
  }
  return true;
}

void concatArrays(PendingRequest* request, bool unique) {
  std::vector<std::vector<std::string_view>> elements;
  if (!allElements(request, &elements)) {
    return;
  }
  std::string body;
  int64_t count = 0;
  std::unordered_set<std::string_view> seen;
  for (const auto& fragment : elements) {
    for (std::string_view e : fragment) {
      if (unique && !seen.insert(e).second) {
        continue;
      }
      body.append(e);
      ++count;
    }
  }
  request->reply.clear();
  resp::appendArrayHeader(request->reply, count);
  request->reply.append(body);
}

// Integer arrays (SCRIPT EXISTS) or [name, count, ...] arrays (PUBSUB NUMSUB) of the same
// length from every shard, combined position by position.
void combineArrays(PendingRequest* request, bool pairs) {
  std::vector<std::vector<std::string_view>> elements;
  if (!allElements(request, &elements)) {
    return;
  }
  const size_t n = elements[0].size();
  std::string out;
  resp::appendArrayHeader(out, static_cast<int64_t>(n));
  for (size_t i = 0; i < n; ++i) {
    if (pairs && i % 2 == 0) {
      out.append(elements[0][i]);  // the name
      continue;
    }
    int64_t combined = pairs ? 0 : 1;
    for (const auto& fragment : elements) {
      int64_t v = 0;
      if (fragment.size() != n || !resp::readInteger(fragment[i], &v)) {
        request->reply = kUnexpected;
        return;
      }
      combined = pairs ? combined + v : std::min(combined, v);
    }
    resp::appendInteger(out, combined);
  }
  request->reply = std::move(out);
}

void minInteger(PendingRequest* request) {
  int64_t best = std::numeric_limits<int64_t>::max();
  for (const auto& r : request->fragment_replies) {
    int64_t v = 0;
    if (!resp::readInteger(r, &v)) {
      request->reply = kUnexpected;
      return;
    }
    best = std::min(best, v);
  }
  request->reply.clear();
  resp::appendInteger(request->reply, best);
}

void allEqual(PendingRequest* request) {
  const std::string& first = request->fragment_replies[0];
  for (const auto& r : request->fragment_replies) {
    if (r != first) {
      request->reply = "-ERR shardproxy: the shards answered differently\r\n";
      return;
    }
  }
  request->reply = first;
}

void randomNonNull(PendingRequest* request) {
  const size_t n = request->fragment_replies.size();
  const size_t start = static_cast<size_t>(monoNanos() >> 6) % n;
  for (size_t i = 0; i < n; ++i) {
    const std::string& r = request->fragment_replies[(start + i) % n];
    if (r != "$-1\r\n" && r != "_\r\n") {
      request->reply = r;
      return;
    }
  }
  request->reply = "$-1\r\n";
}

// SCRIPT KILL, FUNCTION KILL: +OK when a shard killed one, -NOTBUSY when no shard ran one, else
// the first other error (-UNKILLABLE, a shard unavailable).
void anyOk(PendingRequest* request) {
  const std::string* other = nullptr;
  for (const std::string& r : request->fragment_replies) {
    if (r == "+OK\r\n") {
      request->reply = r;
      return;
    }
    if (other == nullptr && !r.starts_with("-NOTBUSY")) {
      other = &r;
    }
  }
  request->reply = other != nullptr ? *other : request->fragment_replies.front();
}

void scanCursor(PendingRequest* request) {
  std::vector<std::string_view> elements;
  std::string_view cursor;
  uint64_t next = 0;
  uint64_t client_next = 0;
  if (!resp::readArrayElements(request->fragment_replies[0], &elements) || elements.size() != 2 ||
      !resp::readString(elements[0], &cursor) || !parseUnsigned(cursor, &next)) {
    request->reply = kUnexpected;
    return;
  }
  if (!nextScanCursor(request->shard, next, request->merge_arg, &client_next)) {
    request->reply = "-ERR shardproxy: a shard's SCAN cursor is too large to encode\r\n";
    return;
  }
  std::string out = "*2\r\n";
  resp::appendBulk(out, std::to_string(client_next));
  out.append(elements[1]);
  request->reply = std::move(out);
}

}  // namespace

bool encodeScanCursor(uint16_t shard, uint64_t shard_cursor, uint64_t* out) {
  if (shard_cursor > kMaxShardCursor || shard > kShardMask) {
    return false;
  }
  *out = shard_cursor << kScanShardBits | shard;
  return true;
}

bool decodeScanCursor(std::string_view text, size_t shard_count, uint16_t* shard,
                      uint64_t* shard_cursor) {
  uint64_t cursor = 0;
  if (!parseUnsigned(text, &cursor)) {
    return false;
  }
  const uint64_t s = cursor & kShardMask;
  if (s >= shard_count) {
    return false;
  }
  *shard = static_cast<uint16_t>(s);
  *shard_cursor = cursor >> kScanShardBits;
  return true;
}

bool nextScanCursor(uint16_t shard, uint64_t shard_next, size_t shard_count, uint64_t* out) {
  if (shard_next != 0) {
    return encodeScanCursor(shard, shard_next, out);
  }
  if (static_cast<size_t>(shard) + 1 >= shard_count) {
    *out = 0;
    return true;
  }
  return encodeScanCursor(static_cast<uint16_t>(shard + 1), 0, out);
}

void sendToEveryShard(net::Worker& worker, uint64_t client_id, PendingRequest* request,
                      const resp::CommandInfo& cmd, std::string_view command) {
  const size_t shards = worker.topology().shardCount();
  request->merge = cmd.merge;
  request->fragment_replies.resize(shards);
  request->outstanding = static_cast<uint32_t>(shards);
  for (size_t s = 0; s < shards; ++s) {
    backend::BackendConn& conn =
        worker.backendFor(static_cast<uint16_t>(s), client_id, request->protocol);
    if (!conn.accepting()) {
      request->fragment_replies[s] = conn.ejectedError();
      --request->outstanding;
      continue;
    }
    conn.send(command, request, static_cast<uint32_t>(s));
  }
  if (request->outstanding == 0) {
    mergeReplies(request);
    request->done = true;
  }
}

void mergeFanoutReplies(PendingRequest* request) {
  switch (request->merge) {
    case resp::MergeRule::kConcatArrays:
      concatArrays(request, false);
      return;
    case resp::MergeRule::kUnionArrays:
      concatArrays(request, true);
      return;
    case resp::MergeRule::kRandomNonNull:
      randomNonNull(request);
      return;
    case resp::MergeRule::kAllEqual:
      allEqual(request);
      return;
    case resp::MergeRule::kMinInteger:
      minInteger(request);
      return;
    case resp::MergeRule::kAndIntegers:
      combineArrays(request, false);
      return;
    case resp::MergeRule::kSumPairs:
      combineArrays(request, true);
      return;
    case resp::MergeRule::kFirstShard:
      request->reply = request->fragment_replies[0];
      return;
    case resp::MergeRule::kScanCursor:
      scanCursor(request);
      return;
    case resp::MergeRule::kPubSubAck:
      return;  // the reply was written when the request was made
    case resp::MergeRule::kAnyOk:
      anyOk(request);
      return;
    case resp::MergeRule::kNone:
    case resp::MergeRule::kArrayInKeyOrder:
    case resp::MergeRule::kSumIntegers:
    case resp::MergeRule::kAllOk:
      break;
  }
  request->reply = kUnexpected;
}

// ---- SessionState: the fan-out route ----

SessionState::Verdict SessionState::onFanout(const resp::RequestFrame& frame, std::string_view raw,
                                             const resp::CommandInfo& cmd) {
  std::span<const std::string_view> args(frame.args);
  if (const std::string error = requestError(&cmd, args); !error.empty()) {
    refuse(error);
    return Verdict::kHandled;
  }
  if (cmd.name == "config|set" && !worker().config().allow_config_set) {
    refuse(
        "-ERR CONFIG SET is disabled by shardproxy (allow_config_set: true sends it to every "
        "shard)\r\n");
    return Verdict::kHandled;
  }
  for (size_t i = 2; cmd.name == "config|set" && i < args.size(); i += 2) {
    if (const std::string_view key = ClientCommands::proxyConfigKey(args[i]); !key.empty()) {
      refuse("-ERR CONFIG SET " + std::string(args[i].substr(0, 64)) +
             ": a shardproxy setting, not sent to the shards (set " + std::string(key) +
             " in the config file and reload)\r\n");
      return Verdict::kHandled;
    }
  }
  const route::Topology& topology = worker().topology();
  uint16_t scan_shard = 0;
  uint64_t scan_cursor = 0;
  if (cmd.merge == resp::MergeRule::kScanCursor &&
      !decodeScanCursor(args[1], topology.shardCount(), &scan_shard, &scan_cursor)) {
    refuse("-ERR invalid cursor\r\n");
    return Verdict::kHandled;
  }
  if (cmd.merge == resp::MergeRule::kAnyOk) {
    return onKill(commandBytes(frame, raw), cmd);
  }
  if (!mayTake(Lane::kShared, nullptr)) {
    return Verdict::kDefer;
  }
  net::Worker& w = worker();
  PendingRequest* request = queueRequest(&cmd);
  if (cmd.merge == resp::MergeRule::kScanCursor || cmd.merge == resp::MergeRule::kFirstShard) {
    // One shard: the cursor's, or the first.
    std::string_view bytes = commandBytes(frame, raw);
    std::string scan;
    if (cmd.merge == resp::MergeRule::kScanCursor) {
      resp::appendArrayHeader(scan, static_cast<int64_t>(args.size()));
      resp::appendBulk(scan, args[0]);
      resp::appendBulk(scan, std::to_string(scan_cursor));
      for (size_t i = 2; i < args.size(); ++i) {
        resp::appendBulk(scan, args[i]);
      }
      bytes = scan;
      request->merge = resp::MergeRule::kScanCursor;
      request->merge_arg = static_cast<uint32_t>(topology.shardCount());
      request->fragment_replies.resize(1);
    }
    request->shard = scan_shard;
    backend::BackendConn& conn = cmd.has(resp::kCmdReadOnly)
                                     ? w.backendForRead(scan_shard, clientId(), request->protocol)
                                     : w.backendFor(scan_shard, clientId(), request->protocol);
    request->outstanding = 1;
    if (!conn.accepting()) {
      ClientSession::onBackendReply(w, request, 0, conn.ejectedError());
      return Verdict::kHandled;
    }
    conn.send(bytes, request, 0);
    return Verdict::kHandled;
  }
  sendToEveryShard(w, clientId(), request, cmd, commandBytes(frame, raw));
  if (request->done) {
    observeCompletion(w, *request, request->reply);  // every shard was down
    session_.drainCompleted();
  }
  return Verdict::kHandled;
}

// SCRIPT KILL, FUNCTION KILL. The shared pipelines of the shard that runs the script wait behind
// it, so every shard gets the command on a dedicated connection of its own (an idle one from the
// pool or a new one), given back once it has answered.
SessionState::Verdict SessionState::onKill(std::string_view bytes, const resp::CommandInfo& cmd) {
  if (!fifoEmpty()) {
    return Verdict::kDefer;  // after this client's earlier requests, as on redis-server
  }
  net::Worker& w = worker();
  const size_t shards = w.topology().shardCount();
  PendingRequest* request = queueRequest(&cmd);
  request->merge = cmd.merge;
  request->fragment_replies.resize(shards);
  request->outstanding = static_cast<uint32_t>(shards);
  for (size_t s = 0; s < shards; ++s) {
    std::string error;
    backend::DedicatedConn* conn = w.dedicated().acquire(
        static_cast<uint16_t>(s), backend::DedicatedConn::Mode::kCommands, this, &error);
    if (conn == nullptr) {
      request->fragment_replies[s] = error;
      --request->outstanding;
      continue;
    }
    conn->send(bytes, request, static_cast<uint32_t>(s), 1, false);
    retire(&conn);  // back to the pool after its reply
  }
  if (request->outstanding == 0) {
    mergeReplies(request);
    request->done = true;
    observeCompletion(w, *request, request->reply);  // every shard was down
    session_.drainCompleted();
  }
  return Verdict::kHandled;
}

}  // namespace sp::session
