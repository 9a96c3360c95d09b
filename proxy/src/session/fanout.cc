// Split commands: fragment construction and reply merging.
#include "session/fanout.h"

#include "backend/backend_conn.h"
#include "backend/backend_pool.h"
#include "backend/worker_backends.h"
#include "core/assert.h"
#include "net/worker.h"
#include "resp/encoder.h"
#include "resp/errors.h"
#include "resp/reply_reader.h"
#include "session/keyspace_fanout.h"

namespace sp::session {

void sendSplit(net::Worker& worker, uint64_t client_id, PendingRequest* request,
               const resp::CommandInfo& cmd, std::span<const std::string_view> args,
               std::span<const uint32_t> keys, const route::RoutePlan& plan) {
  const size_t fragments = plan.fragment_shard.size();
  const uint32_t per_key = cmd.args_per_key;
  request->merge = cmd.merge;
  request->fragment_replies.resize(fragments);
  request->outstanding = static_cast<uint32_t>(fragments);
  if (cmd.merge == resp::MergeRule::kArrayInKeyOrder) {
    request->key_fragment.resize(keys.size());
    request->key_position.resize(keys.size());
  }
  thread_local std::string command;  // scratch, reused
  for (size_t f = 0; f < fragments; ++f) {
    const uint16_t shard = plan.fragment_shard[f];
    backend::BackendConn& conn =
        cmd.has(resp::kCmdReadOnly)
            ? backend::poolOf(worker).forRead(shard, client_id, request->protocol)
            : backend::poolOf(worker).primary(shard, client_id, request->protocol);
    if (!conn.accepting()) {
      request->fragment_replies[f] = conn.ejectedError();
      request->proxy_error = resp::err::ProxyError::kShardUnavailable;
      --request->outstanding;
      continue;
    }
    uint32_t in_fragment = 0;
    for (size_t k = 0; k < keys.size(); ++k) {
      if (plan.fragment_of[k] == f) {
        ++in_fragment;
      }
    }
    command.clear();
    resp::appendArrayHeader(command, 1 + static_cast<int64_t>(in_fragment * per_key));
    resp::appendBulk(command, args[0]);
    uint32_t position = 0;
    for (size_t k = 0; k < keys.size(); ++k) {
      if (plan.fragment_of[k] != f) {
        continue;
      }
      SP_ASSERT(keys[k] + per_key <= args.size());
      for (uint32_t a = 0; a < per_key; ++a) {
        resp::appendBulk(command, args[keys[k] + a]);
      }
      if (cmd.merge == resp::MergeRule::kArrayInKeyOrder) {
        request->key_fragment[k] = static_cast<uint32_t>(f);
        request->key_position[k] = position;
      }
      ++position;
    }
    if (worker.config().cluster_mode) {
      request->sent.resize(fragments);
      request->sent[f] = command;  // kept to follow a MOVED/ASK redirect
    }
    conn.send(command, request, static_cast<uint32_t>(f));
  }
  if (request->outstanding == 0) {
    mergeReplies(request);
    request->done = true;
  }
}

namespace {

// The first error among the fragments, if any.
const std::string* firstError(const PendingRequest& request) {
  for (const auto& r : request.fragment_replies) {
    if (resp::isError(r)) {
      return &r;
    }
  }
  return nullptr;
}

void mergeArrays(PendingRequest* request) {
  // Each fragment answered an array with one element per key it was given; put every element
  // back at its key's position in the original request.
  thread_local std::vector<std::vector<std::string_view>> elements;
  const size_t fragments = request->fragment_replies.size();
  if (elements.size() < fragments) {
    elements.resize(fragments);
  }
  for (size_t f = 0; f < fragments; ++f) {
    if (!resp::readArrayElements(request->fragment_replies[f], &elements[f])) {
      request->answerOwn(resp::err::kUnexpectedSplitReply);
      return;
    }
  }
  request->reply.clear();
  resp::appendArrayHeader(request->reply, static_cast<int64_t>(request->key_fragment.size()));
  for (size_t k = 0; k < request->key_fragment.size(); ++k) {
    const auto& frag = elements[request->key_fragment[k]];
    const uint32_t pos = request->key_position[k];
    if (pos >= frag.size()) {
      request->answerOwn(resp::err::kShortSplitReply);
      return;
    }
    request->reply.append(frag[pos]);
  }
}

}  // namespace

void mergeReplies(PendingRequest* request) {
  if (request->merge == resp::MergeRule::kAnyOk || request->merge == resp::MergeRule::kConfigGet) {
    mergeFanoutReplies(request);  // errors are expected replies there
    return;
  }
  if (const std::string* error = firstError(*request)) {
    request->reply = *error;
    return;
  }
  switch (request->merge) {
    case resp::MergeRule::kArrayInKeyOrder:
      mergeArrays(request);
      return;
    case resp::MergeRule::kSumIntegers: {
      int64_t sum = 0;
      for (const auto& r : request->fragment_replies) {
        int64_t v = 0;
        if (!resp::readInteger(r, &v)) {
          request->answerOwn(resp::err::kUnexpectedSplitReply);
          return;
        }
        sum += v;
      }
      request->reply.clear();
      resp::appendInteger(request->reply, sum);
      return;
    }
    case resp::MergeRule::kAllOk:
      for (const auto& r : request->fragment_replies) {
        if (r != "+OK\r\n") {
          request->answerOwn(resp::err::kUnexpectedSplitReply);
          return;
        }
      }
      request->reply = "+OK\r\n";
      return;
    case resp::MergeRule::kNone:
      SP_ASSERT(false && "mergeReplies on a request that is not split");
      return;
    default:
      mergeFanoutReplies(request);  // whole-keyspace and pub/sub rules: keyspace_fanout.h
      return;
  }
}

}  // namespace sp::session
