// Fan-out of split commands (MGET, MSET, DEL, UNLINK, EXISTS, TOUCH whose keys span shards): one
// fragment per shard, sent on the client's connection to that shard, and the merge of the
// fragments' replies into the one reply the client expects.
#pragma once

#include <span>
#include <string_view>

#include "resp/command_table.h"
#include "route/router.h"
#include "session/pending_request.h"

namespace sp::net {
class Worker;
}

namespace sp::session {

// Builds and sends the fragments of `request` (already queued in its client's FIFO). A fragment
// whose shard is down gets the shard's error as its reply at once. When every fragment has
// failed that way the request is completed (merged) before this returns.
void sendSplit(net::Worker& worker, uint64_t client_id, PendingRequest* request,
               const resp::CommandInfo& cmd, std::span<const std::string_view> args,
               std::span<const uint32_t> keys, const route::RoutePlan& plan);

// Merges request->fragment_replies into request->reply following request->merge.
void mergeReplies(PendingRequest* request);

}  // namespace sp::session
