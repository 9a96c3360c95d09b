// Replies the proxy builds itself, for RESP3 clients. The proxy builds them in RESP2 (encoder.h),
// the form every client reads; for a RESP3 client they are re-encoded as redis-server 7 would
// send them: a null is `_`, a map `%`, a text blob (INFO, CLIENT LIST) a verbatim string `=`, a
// pub/sub message a push `>`. Shard replies never come here: RESP3 clients' shard connections
// speak RESP3 themselves.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace sp::resp {

enum class Resp3Shape : uint8_t {
  kPlain,     // nulls become `_`; every other type is the same in both protocols
  kMap,       // a flat array of pairs becomes a map (CONFIG GET, HELLO)
  kVerbatim,  // a bulk string becomes a verbatim string of format "txt" (INFO, CLIENT LIST)
  kPush,      // an array becomes a push (pub/sub messages and confirmations)
  // COMMAND and COMMAND INFO: in each entry the flags, ACL categories, tips and key specs are
  // sets, a key spec and its parts are maps, and a command without subcommands has an empty set.
  kCommandInfo,
  // COMMAND DOCS: a map of maps; history and doc flags are sets, arguments arrays of maps.
  kCommandDocs,
};

// `reply`: one or more complete replies the proxy built (RESP2, or RESP3 already: converting
// twice changes nothing). Each takes `shape`; every nested value takes kPlain. A reply that
// cannot be walked is returned unchanged.
std::string toResp3(std::string_view reply, Resp3Shape shape = Resp3Shape::kPlain);

}  // namespace sp::resp
