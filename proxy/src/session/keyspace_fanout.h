// Whole-keyspace commands (kCmdFanout: DBSIZE, KEYS, SCAN, RANDOMKEY, FLUSHALL, SCRIPT LOAD,
// PUBSUB NUMSUB, CONFIG SET, ...) and CONFIG GET: one fragment per shard on the client's shared
// connections, merged by the command's MergeRule with the same PendingRequest machinery as split
// commands (fanout.h).
//
// CONFIG GET's merge (kConfigGet): each parameter once, with the first shard's value; where the
// shards disagree the first shard's value wins and the disagreement is logged (rate-limited;
// parameters that are per instance by nature, such as dir or pidfile, are not logged). The proxy's
// own parameters replace the shards' entries. Shards that fail are left out; when none answers,
// the reply is the first shard's error. A RESP3 client gets a map.
//
// CONFIG SET: timeout, tcp-keepalive, maxclients and slowlog-* are the proxy's (applied to it);
// the parameters that would cut the proxy off its shards are refused (ClientCommands::
// configSetTarget); the rest goes to every shard, +OK when every shard said +OK.
//
// SCAN goes to one shard at a time. The cursor the client sees carries the shard index in its
// low kScanShardBits bits and the shard's own cursor above them:
//
//     client cursor = shard_cursor << kScanShardBits | shard
//
// Cursor 0 is shard 0's start. When a shard answers 0 the next cursor starts the next shard
// (its cursor 0), and the last shard's 0 is the end: a full SCAN visits every shard once and so
// returns every key that exists throughout exactly once, as SCAN promises. MATCH, COUNT and TYPE
// are passed to the shard as they are. Redis cursors stay far below 2^50, the room left.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "resp/command_table.h"
#include "session/pending_request.h"

namespace sp::net {
class Worker;
}

namespace sp::session {

inline constexpr unsigned kScanShardBits = 14;  // config allows up to 16384 shards

// The client cursor for `shard_cursor` on `shard`. False when shard_cursor does not fit.
bool encodeScanCursor(uint16_t shard, uint64_t shard_cursor, uint64_t* out);

// Parses a client cursor (decimal, as SCAN takes it). False for a malformed cursor or one that
// names a shard past shard_count.
bool decodeScanCursor(std::string_view text, size_t shard_count, uint16_t* shard,
                      uint64_t* shard_cursor);

// The cursor to give the client after `shard` answered `shard_next`: the same shard's next
// position, the next shard's start, or 0 when the last shard is done. False when it does not fit.
bool nextScanCursor(uint16_t shard, uint64_t shard_next, size_t shard_count, uint64_t* out);

// Sends `command` to every shard of the worker's topology, fragment i to shard i. `request` is
// queued in its client's FIFO; its merge rule is cmd.merge. A fragment whose shard is ejected gets
// that shard's error at once; when all do, the request is merged (done) before this returns.
void sendToEveryShard(net::Worker& worker, uint64_t client_id, PendingRequest* request,
                      const resp::CommandInfo& cmd, std::string_view command);

// CONFIG GET through the shards: `command` goes to every shard on the client's shared
// connections, `own` (the proxy's own entries, a RESP2 array of name, value pairs) is the last
// fragment, and the request (deferred, in its client's FIFO; request->protocol the client's)
// completes with the kConfigGet merge. A shard that is down answers its error at once.
void sendConfigGet(net::Worker& worker, uint64_t client_id, PendingRequest* request,
                   std::string_view command, std::string own);

// Merges request->fragment_replies into request->reply for the fan-out rules (kConcatArrays ...
// kPubSubAck); mergeReplies (fanout.h) calls it once it has ruled out errors. For kScanCursor,
// request->shard is the shard asked and request->merge_arg the shard count.
void mergeFanoutReplies(PendingRequest* request);

}  // namespace sp::session
