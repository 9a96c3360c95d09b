// Fan-out of whole-keyspace commands and the merge rules of their replies.
#include "session/keyspace_fanout.h"

#include <algorithm>
#include <charconv>
#include <limits>
#include <string>
#include <unordered_set>
#include <vector>

#include <spdlog/spdlog.h>

#include "backend/backend_conn.h"
#include "backend/backend_pool.h"
#include "backend/worker_backends.h"
#include "core/ascii.h"
#include "core/clock.h"
#include "net/worker.h"
#include "resp/encoder.h"
#include "resp/errors.h"
#include "resp/reply_reader.h"
#include "session/client_session.h"
#include "session/config_commands.h"
#include "session/fanout.h"
#include "session/request_observer.h"
#include "session/session_checks.h"

namespace sp::session {
namespace {

constexpr uint64_t kShardMask = (uint64_t{1} << kScanShardBits) - 1;
constexpr uint64_t kMaxShardCursor = std::numeric_limits<uint64_t>::max() >> kScanShardBits;
constexpr resp::err::Own kUnexpected = resp::err::kUnexpectedFanoutReply;

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
      request->answerOwn(kUnexpected);
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
        request->answerOwn(kUnexpected);
        return;
      }
      combined = pairs ? combined + v : std::min(combined, v);
    }
    resp::appendInteger(out, combined);
  }
  request->reply = std::move(out);
}

// LATENCY LATEST: [event, time, latest ms, max ms] per event and shard. One entry per event: the
// time and latency of the newest shard entry, and the largest max of any shard.
void latestPerEvent(PendingRequest* request) {
  std::vector<std::vector<std::string_view>> elements;
  if (!allElements(request, &elements)) {
    return;
  }
  struct Event {
    std::string_view name;  // the element's bytes
    int64_t time = 0, latest = 0, max = 0;
  };
  std::vector<Event> events;  // in the order first seen
  std::vector<std::string_view> fields;
  for (const auto& fragment : elements) {
    for (std::string_view entry : fragment) {
      Event e;
      if (!resp::readArrayElements(entry, &fields) || fields.size() != 4 ||
          !resp::readInteger(fields[1], &e.time) || !resp::readInteger(fields[2], &e.latest) ||
          !resp::readInteger(fields[3], &e.max)) {
        request->answerOwn(kUnexpected);
        return;
      }
      e.name = fields[0];
      auto seen = std::find_if(events.begin(), events.end(),
                               [&](const Event& x) { return x.name == e.name; });
      if (seen == events.end()) {
        events.push_back(e);
        continue;
      }
      if (e.time > seen->time) {
        seen->time = e.time;
        seen->latest = e.latest;
      }
      seen->max = std::max(seen->max, e.max);
    }
  }
  request->reply.clear();
  resp::appendArrayHeader(request->reply, std::ssize(events));
  for (const Event& e : events) {
    resp::appendArrayHeader(request->reply, 4);
    request->reply.append(e.name);
    resp::appendInteger(request->reply, e.time);
    resp::appendInteger(request->reply, e.latest);
    resp::appendInteger(request->reply, e.max);
  }
}

void minInteger(PendingRequest* request) {
  int64_t best = std::numeric_limits<int64_t>::max();
  for (const auto& r : request->fragment_replies) {
    int64_t v = 0;
    if (!resp::readInteger(r, &v)) {
      request->answerOwn(kUnexpected);
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
      request->answerOwn(resp::err::kShardsDiffer);
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
    request->answerOwn(kUnexpected);
    return;
  }
  if (!nextScanCursor(request->shard, next, request->merge_arg, &client_next)) {
    request->answerOwn(resp::err::kScanCursorTooLarge);
    return;
  }
  std::string out = "*2\r\n";
  resp::appendBulk(out, std::to_string(client_next));
  out.append(elements[1]);
  request->reply = std::move(out);
}

// CONFIG GET: a shard's reply as name, value, ... elements (a RESP2 array or a RESP3 map).
// *scratch holds the array a map is rewritten as.
bool configElements(std::string_view reply, std::string* scratch,
                    std::vector<std::string_view>* out) {
  if (reply.starts_with('%')) {
    const size_t eol = reply.find("\r\n");
    uint64_t pairs = 0;
    if (eol == std::string_view::npos || !parseUnsigned(reply.substr(1, eol - 1), &pairs) ||
        pairs > reply.size()) {
      return false;
    }
    *scratch = "*" + std::to_string(pairs * 2);
    scratch->append(reply.substr(eol));
    reply = *scratch;
  }
  return resp::readArrayElements(reply, out) && out->size() % 2 == 0;
}

// Parameters whose value is each instance's own (paths, names): their differences are expected.
bool perInstance(std::string_view name) {
  for (std::string_view n :
       {"dir", "pidfile", "logfile", "dbfilename", "unixsocket", "appendfilename", "appenddirname",
        "cluster-config-file", "syslog-ident", "replicaof", "slaveof", "replica-announce-ip",
        "replica-announce-port"}) {
    if (name == n) {
      return true;
    }
  }
  return false;
}

void configGetMerge(PendingRequest* request) {
  const size_t shards = request->fragment_replies.size() - 1;
  // RESP3 maps rewritten as arrays, one per shard: `merged` keeps views into them.
  std::vector<std::string> rewritten(shards);
  std::vector<std::string_view> own;
  std::vector<std::string_view> elements;
  // (name, value) elements, in the order the shards list them.
  std::vector<std::pair<std::string_view, std::string_view>> merged;
  std::vector<std::string> disagreements;
  if (!resp::readArrayElements(request->fragment_replies[shards], &own)) {
    request->answerOwn(kUnexpected);
    return;
  }
  auto name = [](std::string_view element) {
    std::string_view text;
    return resp::readString(element, &text) ? text : std::string_view();
  };
  const std::string* first_error = nullptr;
  size_t answered = 0;
  for (size_t f = 0; f < shards; ++f) {
    const std::string& r = request->fragment_replies[f];
    if (resp::isError(r) || !configElements(r, &rewritten[f], &elements)) {
      if (first_error == nullptr && resp::isError(r)) {
        first_error = &r;
      }
      continue;
    }
    ++answered;
    for (size_t i = 0; i + 1 < elements.size(); i += 2) {
      const std::string_view key = name(elements[i]);
      bool proxy_owned = false;
      for (size_t j = 0; j + 1 < own.size() && !proxy_owned; j += 2) {
        proxy_owned = name(own[j]) == key;
      }
      if (proxy_owned) {
        continue;
      }
      auto at = std::find_if(merged.begin(), merged.end(),
                             [&](const auto& e) { return name(e.first) == key; });
      if (at == merged.end()) {
        merged.emplace_back(elements[i], elements[i + 1]);
      } else if (name(at->second) != name(elements[i + 1]) && !perInstance(key)) {
        std::string what(key);
        if (std::find(disagreements.begin(), disagreements.end(), what) == disagreements.end()) {
          disagreements.push_back(std::move(what));
        }
      }
    }
  }
  if (answered == 0 && shards > 0) {
    if (first_error != nullptr) {
      request->reply = *first_error;
    } else {
      request->answerOwn(kUnexpected);
    }
    return;
  }
  std::string out;
  resp::appendArrayHeader(out, static_cast<int64_t>(merged.size() * 2 + own.size()));
  for (const auto& [key, value] : merged) {
    out.append(key);
    out.append(value);
  }
  for (std::string_view e : own) {
    out.append(e);
  }
  request->reply = request->protocol == resp::Protocol::kResp3
                       ? resp::toResp3(out, resp::Resp3Shape::kMap)
                       : std::move(out);
  if (!disagreements.empty() && request->owner != nullptr) {
    net::Worker& w = request->owner->worker();
    if (w.logLimiter().allow()) {
      std::string names;
      for (const std::string& d : disagreements) {
        names += (names.empty() ? "" : ", ") + d;
      }
      spdlog::warn(
          "worker {}: CONFIG GET: the shards disagree on {}; answered the first shard's value "
          "({} of {} shards answered)",
          w.index(), names, answered, shards);
    }
  }
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
        backend::poolOf(worker).primary(static_cast<uint16_t>(s), client_id, request->protocol);
    if (!conn.accepting()) {
      request->fragment_replies[s] = conn.ejectedError();
      request->proxy_error = resp::err::ProxyError::kShardUnavailable;
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

void sendConfigGet(net::Worker& worker, uint64_t client_id, PendingRequest* request,
                   std::string_view command, std::string own) {
  const size_t shards = worker.topology().shardCount();
  request->merge = resp::MergeRule::kConfigGet;
  request->fragment_replies.resize(shards + 1);
  request->fragment_replies[shards] = std::move(own);
  request->outstanding = static_cast<uint32_t>(shards);
  std::vector<uint16_t> down;
  for (size_t s = 0; s < shards; ++s) {
    backend::BackendConn& conn =
        backend::poolOf(worker).primary(static_cast<uint16_t>(s), client_id, request->protocol);
    if (!conn.accepting()) {
      down.push_back(static_cast<uint16_t>(s));
      continue;
    }
    conn.send(command, request, static_cast<uint32_t>(s));
  }
  // After every send: the last of these may complete the request (and write its reply).
  for (uint16_t s : down) {
    backend::deliverUnavailable(
        worker, request, s,
        backend::poolOf(worker).primary(s, client_id, request->protocol).ejectedError());
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
    case resp::MergeRule::kConfigGet:
      configGetMerge(request);
      return;
    case resp::MergeRule::kLatestPerEvent:
      latestPerEvent(request);
      return;
    case resp::MergeRule::kNone:
    case resp::MergeRule::kArrayInKeyOrder:
    case resp::MergeRule::kSumIntegers:
    case resp::MergeRule::kAllOk:
      break;
  }
  request->answerOwn(kUnexpected);
}

}  // namespace sp::session
