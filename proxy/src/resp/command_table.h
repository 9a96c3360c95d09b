// CommandTable: the one table of Redis commands the proxy knows — name, arity, key positions and
// flags. Generated from redis-server 7.0's COMMAND INFO / COMMAND DOCS by
// tools/gen-command-table.py (the generated data is checked in as command_table_data.inc) and
// overlaid with the proxy's own policy (which commands are split, local or unsupported).
// Routing, COMMAND replies, docs and tests all read from it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace sp::resp {

// Proxy policy and Redis facts, as bit flags.
enum CommandFlag : uint32_t {
  kCmdWrite = 1u << 0,        // Redis "write"
  kCmdReadOnly = 1u << 1,     // Redis "readonly": may be served by a replica
  kCmdSplit = 1u << 2,        // multi-key command split per shard and merged (see MergeRule)
  kCmdLocal = 1u << 3,        // answered by the proxy itself (PING, ECHO, COMMAND, INFO, ...)
  kCmdAdmin = 1u << 4,        // Redis "admin"
  kCmdBlocking = 1u << 5,     // Redis "blocking" (BLPOP, XREAD BLOCK, WAIT, ...)
  kCmdUnsupported = 1u << 6,  // refused: -ERR command 'x' is not supported by shardproxy
  kCmdPubSub = 1u << 7,       // Redis "pubsub"
  kCmdNoKeys = 1u << 8,       // takes no key at all
  kCmdMovableKeys = 1u << 9,  // key positions depend on the arguments (EVAL numkeys, ...)
  kCmdContainer = 1u << 10,   // has subcommands (CLIENT, OBJECT, XINFO, ...)
  kCmdProxy = 1u << 11,       // the proxy's own command (PROXY ...), not a Redis one
  kCmdFanout = 1u << 12,      // whole-keyspace: sent to every shard and merged (see MergeRule)
  kCmdSession = 1u << 13,     // served by the session's state (MULTI, SUBSCRIBE, AUTH, HELLO, ...)
  kCmdNoMandatoryKeys = 1u << 14,  // Redis "no_mandatory_keys" (EVAL, FCALL: may name no key)
  kCmdAdminOnly = 1u << 15,        // only an admin user may send it (FLUSHALL, CONFIG SET, ...)
};

// The proxy's own handler of a command, named by the generator's policy: the session switches on
// it instead of comparing names. Local and session commands each have one; routed and fan-out
// commands have one where the session treats them specially, kNone otherwise.
enum class Handler : uint8_t {
  kNone,
  // Answered by the proxy (kCmdLocal).
  kPing,
  kEcho,
  kQuit,
  kSelect,
  kInfo,
  kCommand,
  kCommandCount,
  kCommandInfo,
  kCommandDocs,
  kCommandList,
  kCommandGetKeys,
  kCommandGetKeysAndFlags,
  kCommandHelp,
  kClientSetName,
  kClientGetName,
  kClientId,
  kClientInfo,
  kClientList,
  kClientKill,
  kClientNoEvict,
  kConfigGet,
  kConfigHelp,
  kSlowlog,  // SLOWLOG GET, LEN, RESET
  kSlowlogHelp,
  kProxyInfo,
  kProxyShards,
  kProxySlots,
  kProxyConfig,
  kProxySlowlog,
  kProxyReload,
  kProxyHealth,
  kProxyHelp,
  // Served by the session's state (kCmdSession).
  kMulti,
  kExec,
  kDiscard,
  kWatch,
  kUnwatch,
  kAuth,
  kHello,
  kReset,
  kSubscribe,
  kPSubscribe,
  kSSubscribe,
  kUnsubscribe,
  kPUnsubscribe,
  kSUnsubscribe,
  // Routed, fanned out or refused, with a rule of their own.
  kPublish,   // PUBLISH, SPUBLISH: on the subscriber's connection while subscribed (RESP3)
  kListMpop,  // LMPOP, BLMPOP: a cross-slot request checks LEFT|RIGHT first
  kZsetMpop,  // ZMPOP, BZMPOP: ... and MIN|MAX
  kEval,      // scripts: keyless ones go to one shard (config keyless_scripts)
  kEvalRo,
  kEvalSha,
  kEvalShaRo,
  kFcall,
  kFcallRo,
  kXread,            // XREAD, XREADGROUP: blocking only with BLOCK
  kClientTracking,   // CLIENT TRACKING, CLIENT CACHING: refused with the reason
  kConfigSet,        // applied to the proxy's own parameters, then fanned out
  kConfigResetStat,  // resets the proxy's INFO counters too, then fanned out
};
inline constexpr size_t kHandlerCount = static_cast<size_t>(Handler::kConfigResetStat) + 1;

// How the replies of a split (or fanned-out) command's fragments become one reply.
enum class MergeRule : uint8_t {
  kNone,
  kArrayInKeyOrder,  // MGET: elements placed back in the order of the request's keys
  kSumIntegers,      // DEL, UNLINK, EXISTS, TOUCH; DBSIZE
  kAllOk,            // MSET: +OK when every fragment answered +OK, else the first error; FLUSHALL
  // Fan-out rules (kCmdFanout), merged by session/keyspace_fanout.cc:
  kConcatArrays,   // KEYS: the shards' arrays, concatenated
  kUnionArrays,    // PUBSUB CHANNELS: concatenated, duplicates dropped
  kRandomNonNull,  // RANDOMKEY: a non-nil reply, from a shard picked at random
  kAllEqual,       // SCRIPT LOAD, FUNCTION LOAD: the common reply (an error if they differ)
  kMinInteger,     // LASTSAVE
  kAndIntegers,    // SCRIPT EXISTS: element-wise, 1 only where every shard has 1
  kSumPairs,       // PUBSUB NUMSUB: [name, count, ...] with the counts summed
  kFirstShard,     // TIME, FUNCTION LIST: sent to the first shard only
  kScanCursor,     // SCAN: one shard, named by the cursor; the reply's cursor re-encoded
  kPubSubAck,      // (P|S)(UN)SUBSCRIBE: the reply is the proxy's own, once every shard confirmed
  kAnyOk,          // SCRIPT KILL, FUNCTION KILL: +OK when a shard killed one, else NOTBUSY
  // LATENCY LATEST: one entry per event, the newest shard entry's, with the largest max.
  kLatestPerEvent,
  // CONFIG GET: one value per parameter (the first shard's when they differ), the proxy's own
  // parameters from the proxy (its entries travel as the last fragment). Set by the session: the
  // table keeps config|get local, and the session fans it out.
  kConfigGet,
};

// Redis 7 key-spec flags (COMMAND INFO key specs, COMMAND GETKEYSANDFLAGS), in the order
// redis-server lists them.
enum KeySpecFlag : uint16_t {
  kKeyRO = 1u << 0,
  kKeyRW = 1u << 1,
  kKeyOW = 1u << 2,
  kKeyRM = 1u << 3,
  kKeyAccess = 1u << 4,
  kKeyUpdate = 1u << 5,
  kKeyInsert = 1u << 6,
  kKeyDelete = 1u << 7,
  kKeyNotKey = 1u << 8,
  kKeyIncomplete = 1u << 9,
  kKeyVariableFlags = 1u << 10,
};

// The getkeys function redis-server 7.0 has for a command (db.c), which COMMAND GETKEYS falls back
// to where the key specs cannot be applied or their flags vary with the arguments.
enum class KeysProc : uint8_t {
  kNone,
  kNumKeysAt1,        // ZUNION, ZINTER, ZDIFF, ZINTERCARD, SINTERCARD, LMPOP, ZMPOP: numkeys key ..
  kNumKeysAt2,        // EVAL*, FCALL*, BLMPOP, BZMPOP: arg numkeys key ..
  kStoreThenNumKeys,  // ZUNIONSTORE, ZINTERSTORE, ZDIFFSTORE: destination numkeys key ..
  kSort,              // the sorted key, and STORE's
  kSortRo,
  kMigrate,    // the key, or KEYS key ..
  kGeoRadius,  // the key, and the last STORE / STOREDIST's
  kXread,      // STREAMS key .. id ..
  kSet,        // flags depend on GET
  kBitfield,   // flags depend on the subcommands
};

// Redis 7 key specifications (COMMAND INFO "key specs"), reduced to what routing needs.
struct KeySpec {
  enum class Begin : uint8_t { kIndex, kKeyword, kUnknown };
  enum class Find : uint8_t { kRange, kKeyNum, kUnknown };
  Begin begin = Begin::kUnknown;
  int32_t begin_index = 0;              // kIndex: argument index of the first key
  std::string_view begin_keyword;       // kKeyword: the keyword (uppercase) preceding the keys
  int32_t begin_keyword_startfrom = 0;  // kKeyword: where to start looking (negative: from end)
  Find find = Find::kUnknown;
  int32_t range_lastkey = 0;    // kRange: last key relative to the first (-1 = last argument)
  int32_t range_keystep = 1;    // kRange: step between keys
  int32_t range_limit = 0;      // kRange with lastkey -1: 0 = all, N = 1/N of the remaining args
  int32_t keynum_index = 0;     // kKeyNum: index of the count argument relative to begin
  int32_t keynum_firstkey = 0;  // kKeyNum: first key relative to begin
  int32_t keynum_keystep = 1;
  uint16_t flags = 0;  // KeySpecFlag bits, as Redis declares them (routing ignores them)
};

struct CommandInfo {
  std::string_view name;  // lowercase; subcommands are "container|sub", e.g. "object|encoding"
  int32_t arity = 0;      // Redis arity: N exact, -N at least N (command name included)
  uint32_t flags = 0;     // CommandFlag bits
  int32_t first_key = 0;  // legacy key range from COMMAND INFO
  int32_t last_key = 0;
  int32_t key_step = 0;
  MergeRule merge = MergeRule::kNone;
  uint8_t args_per_key = 1;  // split commands: MSET takes key+value pairs (2)
  std::span<const KeySpec> key_specs;
  std::span<const CommandInfo> subcommands;
  std::string_view info_resp;  // this command's COMMAND INFO entry, RESP2-encoded as Redis sends it
  std::string_view docs_resp;  // "name" + its COMMAND DOCS map, RESP2-encoded (two elements)
  // For COMMAND GETKEYS: Redis' own key specs (not_key ones included, no POLICY overrides).
  std::span<const KeySpec> redis_key_specs;
  KeysProc keys_proc = KeysProc::kNone;
  std::string_view acl_categories;  // Redis ACL categories without '@', space-separated
  Handler handler = Handler::kNone;

  bool has(CommandFlag f) const { return (flags & f) != 0; }
};

class CommandTable {
 public:
  static const CommandTable& instance();
  // The redis-server version the table was generated from: the version the proxy reports.
  static std::string_view redisVersion();

  // Case-insensitive lookup of a top-level command; nullptr when unknown.
  const CommandInfo* find(std::string_view name) const;

  // The entry that governs a request: the subcommand's entry for containers (args[1], any case)
  // when it exists, else the top-level entry; nullptr for an unknown command.
  const CommandInfo* resolve(std::span<const std::string_view> args) const;

  std::span<const CommandInfo> commands() const;  // top-level commands, sorted by name
};

// A set of commands (top-level or "container|sub" names), looked up per request: contains() is
// a bounds check and a bit test for top-level commands, and a scan of the (usually empty) list of
// subcommands named.
class CommandSet {
 public:
  CommandSet() = default;
  // Names the table does not know are ignored (the config validator reports them).
  explicit CommandSet(std::span<const std::string> names);

  // Inline: called once per request sent to a shard.
  bool contains(const CommandInfo* cmd) const {
    const auto offset = reinterpret_cast<uintptr_t>(cmd) - reinterpret_cast<uintptr_t>(base_);
    if (offset < top_.size() * sizeof(CommandInfo)) {
      return top_[offset / sizeof(CommandInfo)] != 0;
    }
    return !subs_.empty() && containsSub(cmd);
  }

 private:
  bool containsSub(const CommandInfo* cmd) const;

  const CommandInfo* base_ = nullptr;     // CommandTable::commands().data()
  std::vector<uint8_t> top_;              // by index in CommandTable::commands(): 1 = in the set
  std::vector<const CommandInfo*> subs_;  // subcommand entries named
};

// True when args.size() satisfies the arity.
bool arityOk(const CommandInfo& cmd, size_t argc);

// Appends to *keys the argument index of every key of the request, in argument order, following
// the key specs (or the legacy range). Returns false when the arguments do not fit the specs (for
// example a numkeys larger than the arguments given); *keys is then unspecified.
bool extractKeys(const CommandInfo& cmd, std::span<const std::string_view> args,
                 std::vector<uint32_t>* keys);

}  // namespace sp::resp
