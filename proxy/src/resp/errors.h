// The proxy's error replies, in one place. Each is a whole RESP2 error line, "-CODE text\r\n"
// (resp3.h re-encodes the proxy's replies for RESP3 clients), in one of two kinds:
//   - redis-server's words: where the proxy answers what redis-server would have answered (an
//     unknown command, a wrong arity, a bad option), the text is redis-server 7's, byte for byte,
//     so that a client cannot tell the two apart;
//   - the proxy's own: a shard that cannot be reached, a command the proxy does not serve or that
//     its configuration disables, a reply from a shard that it cannot merge. docs/commands.md and
//     docs/operations.md list them; metrics tell them apart by a mark on the request
//     (backend::deliverUnavailable), never by matching text.
// Nothing else in the proxy spells out an error reply.
//
// The proxy's own errors form a catalogue: each belongs to one ProxyError kind, whose label names
// it in shardproxy_proxy_errors_total{error} and in the docs. The kind travels with the text from
// where the error is chosen (an Own constant, an ErrorReply, the mark on a request) to the
// counter, so that no counter depends on how a reply is worded.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>

namespace sp::resp::err {

// ---- the catalogue ----

enum class ProxyError : uint8_t {
  kNone,              // not the proxy's own: redis-server's words, or a shard's reply
  kShardUnavailable,  // shardUnavailable, execAbortShardUnavailable: down, ejected, failed
  kShuttingDown,      // kShuttingDown
  kNotSupported,      // notSupported, kSelectOtherDatabase
  kDisabled,          // disabledByConfig, kConfigSetDisabled: switched off by the configuration
  kCrossSlot,         // kCrossSlot, kCrossShard: keys of one request in several slots or shards
  kKeylessScript,     // kKeylessScript
  kSpansEveryShard,   // spansEveryShard: a keyspace-wide command queued in a transaction
  kUnmergeable,       // kUnexpected*Reply, kShortSplitReply, kShardsDiffer, kScanCursorTooLarge
  kNoReply,           // noReply: a defect of the proxy's, logged
};
inline constexpr size_t kProxyErrors = 10;
static_assert(static_cast<size_t>(ProxyError::kNoReply) + 1 == kProxyErrors, "one label per kind");
inline constexpr std::array<std::string_view, kProxyErrors> kProxyErrorLabels = {
    "none",       "shard_unavailable", "shutting_down",     "not_supported", "disabled",
    "cross_slot", "keyless_script",    "spans_every_shard", "unmergeable",   "no_reply"};
inline constexpr std::string_view label(ProxyError kind) {
  return kProxyErrorLabels[static_cast<size_t>(kind)];
}

// One of the proxy's own errors whose words are fixed.
struct Own {
  ProxyError kind;
  std::string_view text;
};

// An error reply and the kind it belongs to: what a check that may refuse a request returns, and
// what a refusal takes. Built from redis-server's words (kind kNone) or from one of the proxy's
// own (its kind); empty: no error.
class ErrorReply {
 public:
  ErrorReply() = default;
  ErrorReply(std::string_view words) : text_(words) {}        // NOLINT: redis-server's words
  ErrorReply(std::string words) : text_(std::move(words)) {}  // NOLINT: likewise
  ErrorReply(const char* words) : text_(words) {}             // NOLINT: likewise
  ErrorReply(Own own) : kind_(own.kind), text_(own.text) {}   // NOLINT: the proxy's own
  ErrorReply(ProxyError kind, std::string text) : kind_(kind), text_(std::move(text)) {}

  bool empty() const { return text_.empty(); }
  ProxyError kind() const { return kind_; }
  const std::string& text() const { return text_; }

 private:
  ProxyError kind_ = ProxyError::kNone;
  std::string text_;
};

// ---- redis-server's words ----

inline constexpr std::string_view kSyntax = "-ERR syntax error\r\n";
inline constexpr std::string_view kNotInteger = "-ERR value is not an integer or out of range\r\n";
// Redis Cluster's words, the proxy's refusal (a redis-server without cluster mode has no slots).
inline constexpr Own kCrossSlot = {ProxyError::kCrossSlot,
                                   "-CROSSSLOT Keys in request don't hash to the same slot\r\n"};
// The same refusal where the pool's placement has no slots (twemproxy's distributions).
inline constexpr Own kCrossShard = {ProxyError::kCrossSlot,
                                    "-CROSSSLOT Keys in request don't hash to the same shard\r\n"};
inline constexpr std::string_view kInvalidCursor = "-ERR invalid cursor\r\n";
inline constexpr std::string_view kMaxClients = "-ERR max number of clients reached\r\n";

// Authentication and protocol (AUTH, HELLO).
inline constexpr std::string_view kNoAuth = "-NOAUTH Authentication required.\r\n";
inline constexpr std::string_view kWrongPass =
    "-WRONGPASS invalid username-password pair or user is disabled.\r\n";
inline constexpr std::string_view kAuthWithoutPassword =
    "-ERR AUTH <password> called without any password configured for the default user. Are you "
    "sure your configuration is correct?\r\n";
inline constexpr std::string_view kHelloNeedsAuth =
    "-NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO "
    "<proto> AUTH <user> <pass> option can be used to authenticate the client and select the RESP "
    "protocol version at the same time\r\n";
inline constexpr std::string_view kNoProto = "-NOPROTO unsupported protocol version\r\n";
inline constexpr std::string_view kProtocolVersion =
    "-ERR Protocol version is not an integer or out of range\r\n";
std::string helloOption(std::string_view option);  // "Syntax error in HELLO option 'x'"

// Transactions.
inline constexpr std::string_view kMultiNested = "-ERR MULTI calls can not be nested\r\n";
inline constexpr std::string_view kWatchInMulti = "-ERR WATCH inside MULTI is not allowed\r\n";
inline constexpr std::string_view kNotInTransaction =
    "-ERR Command not allowed inside a transaction\r\n";
inline constexpr std::string_view kExecWithoutMulti = "-ERR EXEC without MULTI\r\n";
inline constexpr std::string_view kDiscardWithoutMulti = "-ERR DISCARD without MULTI\r\n";
inline constexpr std::string_view kExecAbortPrevious =
    "-EXECABORT Transaction discarded because of previous errors.\r\n";

// Commands, arities, subcommands.
// "-ERR unknown command 'x', with args beginning with: 'a' 'b' "
std::string unknownCommand(std::span<const std::string_view> args);
// "-ERR unknown subcommand 'x'. Try CONTAINER HELP."
std::string unknownSubcommand(std::string_view container, std::string_view sub);
// A known subcommand with arguments its command refuses (SLOWLOG GET 1 2), as typed:
// "-ERR unknown subcommand or wrong number of arguments for 'x'. Try CONTAINER HELP."
std::string subcommandSyntax(std::string_view container, std::string_view sub);
// "-ERR wrong number of arguments for 'x' command"; for EXEC, the EXECABORT redis-server sends.
std::string wrongArity(std::string_view name);
// "-NOPERM this user has no permissions to run the 'x' command"
std::string noPermission(std::string_view name);
// In a RESP2 subscriber context: "-ERR Can't execute 'x': only (P|S)SUBSCRIBE / ..."
std::string notInSubscriberContext(std::string_view name);
// "-ERR Protocol error: <message>" (resp::errorMessage gives redis-server's messages).
std::string protocolError(std::string_view message);

// CLIENT, CONFIG, SLOWLOG, COMMAND GETKEYS.
inline constexpr std::string_view kClientName =
    "-ERR Client names cannot contain spaces, newlines or special characters.\r\n";
inline constexpr std::string_view kNoSuchClient = "-ERR No such client\r\n";
inline constexpr std::string_view kInvalidClientId = "-ERR Invalid client ID\r\n";
inline constexpr std::string_view kClientIdPositive = "-ERR client-id should be greater than 0\r\n";
std::string unknownClientType(std::string_view type);     // "Unknown client type 'x'"
std::string unrecognizedOption(std::string_view option);  // "Unrecognized option 'x'"
std::string noSuchUser(std::string_view user);            // "No such user 'x'"
// "-ERR CONFIG SET failed (possibly related to argument 'x') - <why>"
std::string configSetFailed(std::string_view argument, std::string_view why);
inline constexpr std::string_view kSlowlogCount =
    "-ERR count should be greater than or equal to -1\r\n";
inline constexpr std::string_view kInvalidCommand = "-ERR Invalid command specified\r\n";
inline constexpr std::string_view kNoKeyArguments = "-ERR The command has no key arguments\r\n";
inline constexpr std::string_view kInvalidArgumentCount =
    "-ERR Invalid number of arguments specified for command\r\n";
inline constexpr std::string_view kInvalidArguments =
    "-ERR Invalid arguments specified for command\r\n";

// ---- the proxy's own ----

// "-ERR shard <label> unavailable: <why>" (kShardUnavailable): the shard is down, ejected, timed
// out or failed the request. The only errors the proxy counts as result="unavailable":
// backend::deliverUnavailable delivers them and marks the request with their kind.
std::string shardUnavailable(std::string_view shard_label, std::string_view why);
// A transaction whose pinned shard connection failed: nothing of it ran.
ErrorReply execAbortShardUnavailable(std::string_view shard_label, std::string_view why);
inline constexpr Own kShuttingDown = {ProxyError::kShuttingDown,
                                      "-ERR shardproxy is shutting down\r\n"};
// A command the proxy answers itself whose handler wrote nothing (a defect, logged): the request
// still gets a reply, so that later replies stay with their requests.
ErrorReply noReply(std::string_view label);

// "-ERR command 'x' is not supported by shardproxy" (docs/commands.md, Unsupported), with the
// reason where one helps (`reason` empty: none).
ErrorReply notSupported(std::string_view label, std::string_view reason = {});
// "-ERR command 'x' is disabled by the shardproxy configuration (deny_commands)"
ErrorReply disabledByConfig(std::string_view label);
// A command that spans every shard (DBSIZE, KEYS, FLUSHALL, ...) queued in a transaction.
ErrorReply spansEveryShard(std::string_view label);
inline constexpr Own kConfigSetDisabled = {
    ProxyError::kDisabled,
    "-ERR CONFIG SET is disabled by shardproxy (allow_config_set: true sends it to every "
    "shard)\r\n"};
inline constexpr Own kKeylessScript = {
    ProxyError::kKeylessScript,
    "-ERR a script or function called with no keys runs on one shard of shardproxy's and would "
    "not see keys on the others: pass the keys it uses as arguments (numkeys > 0), or set "
    "keyless_scripts to the name of a shard to run such calls there\r\n"};
inline constexpr Own kSelectOtherDatabase = {
    ProxyError::kNotSupported,
    "-ERR command 'select' is not supported by shardproxy for databases other than 0\r\n"};

// Replies of shards that the proxy cannot merge.
inline constexpr Own kUnexpectedFanoutReply = {
    ProxyError::kUnmergeable,
    "-ERR shardproxy: unexpected reply from a shard to a fanned-out command\r\n"};
inline constexpr Own kUnexpectedSplitReply = {
    ProxyError::kUnmergeable,
    "-ERR shardproxy: unexpected reply from a shard to a split command\r\n"};
inline constexpr Own kShortSplitReply = {
    ProxyError::kUnmergeable, "-ERR shardproxy: short reply from a shard to a split command\r\n"};
inline constexpr Own kShardsDiffer = {ProxyError::kUnmergeable,
                                      "-ERR shardproxy: the shards answered differently\r\n"};
inline constexpr Own kScanCursorTooLarge = {
    ProxyError::kUnmergeable, "-ERR shardproxy: a shard's SCAN cursor is too large to encode\r\n"};

// PROXY, the proxy's admin command.
inline constexpr std::string_view kReloadUnavailable = "-ERR reload is not available\r\n";
std::string reloadFailed(std::string_view why);        // "reload failed, configuration unchanged: "
std::string proxyConfigOnlyGet(std::string_view sub);  // PROXY CONFIG <not GET>
std::string proxySlowlogUsage(std::string_view sub);   // PROXY SLOWLOG <unknown or bad arity>

}  // namespace sp::resp::err
