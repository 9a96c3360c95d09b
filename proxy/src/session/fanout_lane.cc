// FanoutLane: whole-keyspace commands, CONFIG SET, SCRIPT KILL / FUNCTION KILL (fanout_lane.h).
#include "session/fanout_lane.h"

#include <string>
#include <utility>
#include <vector>

#include "backend/backend_conn.h"
#include "backend/backend_pool.h"
#include "backend/worker_backends.h"
#include "core/ascii.h"
#include "net/worker.h"
#include "resp/encoder.h"
#include "resp/errors.h"
#include "session/client_session.h"
#include "session/config_commands.h"
#include "session/fanout.h"
#include "session/keyspace_fanout.h"
#include "session/request_observer.h"
#include "session/session_checks.h"
#include "session/session_state.h"

namespace sp::session {

Verdict FanoutLane::onRequest(const resp::RequestFrame& frame, std::string_view raw,
                              const resp::CommandInfo& cmd) {
  std::span<const std::string_view> args(frame.args);
  if (const resp::err::ErrorReply error = requestError(&cmd, args); !error.empty()) {
    state_.refuse(error);
    return Verdict::kHandled;
  }
  if (cmd.handler == resp::Handler::kConfigSet) {
    return onConfigSet(args, cmd);
  }
  const route::Topology& topology = state_.worker().topology();
  uint16_t scan_shard = 0;
  uint64_t scan_cursor = 0;
  if (cmd.merge == resp::MergeRule::kScanCursor &&
      !decodeScanCursor(args[1], topology.shardCount(), &scan_shard, &scan_cursor)) {
    state_.refuse(resp::err::kInvalidCursor);
    return Verdict::kHandled;
  }
  if (cmd.merge == resp::MergeRule::kAnyOk) {
    return onKill(state_.commandBytes(frame, raw), cmd);
  }
  if (!state_.mayTake(SessionState::Lane::kShared, nullptr)) {
    return Verdict::kDefer;
  }
  net::Worker& w = state_.worker();
  if (cmd.handler == resp::Handler::kConfigResetStat) {
    w.context().control->resetInfo();  // the proxy's part; every shard resets its own
  }
  PendingRequest* request = state_.queueRequest(&cmd);
  if (cmd.merge == resp::MergeRule::kScanCursor || cmd.merge == resp::MergeRule::kFirstShard) {
    // One shard: the cursor's, or the first.
    std::string_view bytes = state_.commandBytes(frame, raw);
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
    backend::BackendConn& conn =
        cmd.has(resp::kCmdReadOnly)
            ? backend::poolOf(w).forRead(scan_shard, state_.clientId(), request->protocol)
            : backend::poolOf(w).primary(scan_shard, state_.clientId(), request->protocol);
    request->outstanding = 1;
    if (!conn.accepting()) {
      backend::deliverUnavailable(w, request, 0, conn.ejectedError());
      return Verdict::kHandled;
    }
    conn.send(bytes, request, 0);
    return Verdict::kHandled;
  }
  sendToEveryShard(w, state_.clientId(), request, cmd, state_.commandBytes(frame, raw));
  if (request->done) {
    observeCompletion(w, *request, request->reply);  // every shard was down
    state_.drainCompleted();
  }
  return Verdict::kHandled;
}

// CONFIG SET p v [p v ...]: every pair is checked first (as redis-server does, nothing is applied
// when one is refused); the proxy's own parameters are applied to the proxy, the others go to
// every shard in one CONFIG SET. The proxy's part is applied before the shards answer: a shard
// that then fails the rest does not undo it.
Verdict FanoutLane::onConfigSet(std::span<const std::string_view> args,
                                const resp::CommandInfo& cmd) {
  if (!state_.worker().config().allow_config_set) {
    state_.refuse(resp::err::kConfigSetDisabled);
    return Verdict::kHandled;
  }
  if (args.size() % 2 != 0) {
    state_.refuse(resp::err::kSyntax);
    return Verdict::kHandled;
  }
  if (!state_.mayTake(SessionState::Lane::kShared, nullptr)) {
    return Verdict::kDefer;  // before anything is applied
  }
  std::vector<std::pair<std::string_view, std::string_view>> proxy;
  std::vector<std::string_view> shard_args{args[0], args[1]};
  for (size_t i = 2; i + 1 < args.size(); i += 2) {
    for (size_t j = 2; j < i; j += 2) {
      if (equalsIgnoreCase(args[j], args[i])) {
        state_.refuse(resp::err::configSetFailed(args[i], "duplicate parameter"));
        return Verdict::kHandled;
      }
    }
    resp::err::ErrorReply refusal;
    switch (ConfigCommands::setTarget(state_.worker(), args[i], args[i + 1], &refusal)) {
      case ConfigCommands::Target::kRefused:
        state_.refuse(refusal);
        return Verdict::kHandled;
      case ConfigCommands::Target::kProxy:
        proxy.emplace_back(args[i], args[i + 1]);
        break;
      case ConfigCommands::Target::kShards:
        shard_args.push_back(args[i]);
        shard_args.push_back(args[i + 1]);
        break;
    }
  }
  if (resp::err::ErrorReply refusal;
      !ConfigCommands::applyToProxy(state_.worker(), proxy, &refusal)) {
    state_.refuse(refusal);
    return Verdict::kHandled;
  }
  if (shard_args.size() == 2) {
    state_.reply("+OK\r\n");  // the proxy's parameters only
    return Verdict::kHandled;
  }
  std::string command;
  resp::appendCommand(command, shard_args);
  net::Worker& w = state_.worker();
  PendingRequest* request = state_.queueRequest(&cmd);
  sendToEveryShard(w, state_.clientId(), request, cmd, command);
  if (request->done) {
    observeCompletion(w, *request, request->reply);  // every shard was down
    state_.drainCompleted();
  }
  return Verdict::kHandled;
}

// SCRIPT KILL, FUNCTION KILL. The shared pipelines of the shard that runs the script wait behind
// it, so every shard gets the command on a dedicated connection of its own (an idle one from the
// pool or a new one), given back once it has answered.
Verdict FanoutLane::onKill(std::string_view bytes, const resp::CommandInfo& cmd) {
  if (!state_.fifoEmpty()) {
    return Verdict::kDefer;  // after this client's earlier requests, as on redis-server
  }
  net::Worker& w = state_.worker();
  const size_t shards = w.topology().shardCount();
  PendingRequest* request = state_.queueRequest(&cmd);
  request->merge = cmd.merge;
  request->fragment_replies.resize(shards);
  request->outstanding = static_cast<uint32_t>(shards);
  for (size_t s = 0; s < shards; ++s) {
    resp::err::ErrorReply error;
    backend::DedicatedConn* conn = backend::dedicatedOf(w).acquire(
        static_cast<uint16_t>(s), backend::DedicatedConn::Mode::kCommands, &state_, &error);
    if (conn == nullptr) {
      // The shard is down, or the proxy stopping: either way the shard could not serve it, as
      // the shard connections say of their requests at shutdown.
      request->fragment_replies[s] = error.text();
      request->proxy_error = resp::err::ProxyError::kShardUnavailable;
      --request->outstanding;
      continue;
    }
    conn->send(bytes, request, static_cast<uint32_t>(s), 1, false);
    state_.retire(&conn);  // back to the pool after its reply
  }
  if (request->outstanding == 0) {
    mergeReplies(request);
    request->done = true;
    observeCompletion(w, *request, request->reply);  // every shard was down
    state_.drainCompleted();
  }
  return Verdict::kHandled;
}

}  // namespace sp::session
