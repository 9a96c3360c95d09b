// The error replies that take arguments (errors.h).
#include "resp/errors.h"

#include <algorithm>

#include "core/ascii.h"

namespace sp::resp::err {
namespace {

constexpr size_t kQuoted = 128;  // redis-server quotes at most this much of a client's argument

std::string line(std::string_view code_and_text) {
  std::string out;
  out.reserve(code_and_text.size() + 3);
  out += '-';
  out += code_and_text;
  out += "\r\n";
  return out;
}

// "config|set" -> "config set", as the proxy's own errors name commands.
std::string spaced(std::string_view name) {
  std::string out(name);
  std::replace(out.begin(), out.end(), '|', ' ');
  return out;
}

}  // namespace

std::string helloOption(std::string_view option) {
  return line("ERR Syntax error in HELLO option '" + std::string(option.substr(0, 64)) + "'");
}

std::string unknownCommand(std::span<const std::string_view> args) {
  std::string err = "ERR unknown command '";
  err.append(args[0].substr(0, kQuoted));
  err += "', with args beginning with: ";
  for (size_t i = 1; i < args.size() && i < 8; ++i) {
    err += "'";
    err.append(args[i].substr(0, kQuoted));
    err += "' ";
  }
  return line(err);
}

std::string unknownSubcommand(std::string_view container, std::string_view sub) {
  return line("ERR unknown subcommand '" + std::string(sub.substr(0, kQuoted)) + "'. Try " +
              upperAscii(container) + " HELP.");
}

std::string subcommandSyntax(std::string_view container, std::string_view sub) {
  return line("ERR unknown subcommand or wrong number of arguments for '" +
              std::string(sub.substr(0, kQuoted)) + "'. Try " + upperAscii(container) + " HELP.");
}

std::string wrongArity(std::string_view name) {
  if (name == "exec") {  // redis-server discards the transaction (if any) and says why
    return line(
        "EXECABORT Transaction discarded because of: wrong number of arguments for 'exec' "
        "command");
  }
  return line("ERR wrong number of arguments for '" + std::string(name) + "' command");
}

std::string noPermission(std::string_view name) {
  return line("NOPERM this user has no permissions to run the '" + std::string(name) + "' command");
}

std::string notInSubscriberContext(std::string_view name) {
  return line("ERR Can't execute '" + std::string(name) +
              "': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in "
              "this context");
}

std::string protocolError(std::string_view message) {
  return line("ERR Protocol error: " + std::string(message));
}

std::string unknownClientType(std::string_view type) {
  return line("ERR Unknown client type '" + std::string(type) + "'");
}

std::string unrecognizedOption(std::string_view option) {
  return line("ERR Unrecognized option '" + std::string(option.substr(0, 64)) + "'");
}

std::string noSuchUser(std::string_view user) {
  return line("ERR No such user '" + std::string(user) + "'");
}

std::string configSetFailed(std::string_view argument, std::string_view why) {
  return line("ERR CONFIG SET failed (possibly related to argument '" +
              std::string(argument.substr(0, 64)) + "') - " + std::string(why));
}

std::string shardUnavailable(std::string_view shard_label, std::string_view why) {
  return line("ERR shard " + std::string(shard_label) + " unavailable: " + std::string(why));
}

ErrorReply execAbortShardUnavailable(std::string_view shard_label, std::string_view why) {
  return {ProxyError::kShardUnavailable,
          line("EXECABORT Transaction discarded: shard " + std::string(shard_label) +
               " unavailable: " + std::string(why))};
}

ErrorReply notSupported(std::string_view label, std::string_view reason) {
  std::string err = "ERR command '" + spaced(label) + "' is not supported by shardproxy";
  if (!reason.empty()) {
    err += ": ";
    err += reason;
  }
  return {ProxyError::kNotSupported, line(err)};
}

ErrorReply disabledByConfig(std::string_view label) {
  return {ProxyError::kDisabled,
          line("ERR command '" + spaced(label) +
               "' is disabled by the shardproxy configuration (deny_commands)")};
}

ErrorReply noReply(std::string_view label) {
  return {ProxyError::kNoReply,
          line("ERR shardproxy: command '" + spaced(label) + "' produced no reply")};
}

ErrorReply spansEveryShard(std::string_view label) {
  return {ProxyError::kSpansEveryShard,
          line("ERR command '" + spaced(label) +
               "' spans every shard and cannot be part of a transaction through shardproxy")};
}

std::string reloadFailed(std::string_view why) {
  return line("ERR reload failed, configuration unchanged: " + std::string(why));
}

std::string proxyConfigOnlyGet(std::string_view sub) {
  return line("ERR unknown subcommand 'CONFIG " + std::string(sub) +
              "': only PROXY CONFIG GET is supported (edit the file, then PROXY RELOAD)");
}

std::string proxySlowlogUsage(std::string_view sub) {
  return line("ERR unknown subcommand or wrong number of arguments for 'SLOWLOG " +
              std::string(sub) + "'. Try PROXY HELP.");
}

}  // namespace sp::resp::err
