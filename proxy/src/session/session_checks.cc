// Request checks shared by the routes of SessionState.
#include "session/session_checks.h"

#include <algorithm>

#include "core/ascii.h"

namespace sp::session {

std::string commandLabel(std::string_view name) {
  std::string out(name);
  std::replace(out.begin(), out.end(), '|', ' ');
  return out;
}

std::string crossSlotError(const resp::CommandInfo& cmd, std::span<const std::string_view> args,
                           std::span<const uint32_t> keys) {
  const std::string_view name = cmd.name;
  const bool list = name == "lmpop" || name == "blmpop";
  if ((list || name == "zmpop" || name == "bzmpop") && !keys.empty()) {
    const size_t after = keys.back() + 1;
    const bool ok =
        after < args.size() &&
        (list ? equalsIgnoreCase(args[after], "left") || equalsIgnoreCase(args[after], "right")
              : equalsIgnoreCase(args[after], "min") || equalsIgnoreCase(args[after], "max"));
    if (!ok) {
      return "-ERR syntax error\r\n";
    }
  }
  return std::string(kCrossSlotError);
}

std::string unsupportedError(std::string_view name) {
  std::string out = "-ERR command '" + commandLabel(name) + "' is not supported by shardproxy";
  if (name == "client|tracking" || name == "client|caching") {
    out +=
        ": client-side caching needs invalidation messages from every shard on the client's own "
        "connection, which shared shard connections cannot carry";
  }
  out += "\r\n";
  return out;
}

std::string unknownCommandError(std::span<const std::string_view> args) {
  std::string err = "-ERR unknown command '";
  err.append(args[0].substr(0, 128));
  err += "', with args beginning with: ";
  for (size_t i = 1; i < args.size() && i < 8; ++i) {
    err += "'";
    err.append(args[i].substr(0, 128));
    err += "' ";
  }
  err += "\r\n";
  return err;
}

std::string unknownSubcommandError(const resp::CommandInfo& container, std::string_view sub) {
  std::string err = "-ERR unknown subcommand '";
  err.append(sub.substr(0, 128));
  err += "'. Try ";
  for (char c : container.name) {
    err += static_cast<char>(c >= 'a' && c <= 'z' ? c - 32 : c);
  }
  err += " HELP.\r\n";
  return err;
}

std::string arityError(const resp::CommandInfo& cmd) {
  if (cmd.name == "exec") {  // redis-server discards the transaction (if any) and says why
    return "-EXECABORT Transaction discarded because of: wrong number of arguments for 'exec' "
           "command\r\n";
  }
  return "-ERR wrong number of arguments for '" + std::string(cmd.name) + "' command\r\n";
}

std::string requestError(const resp::CommandInfo* cmd, std::span<const std::string_view> args) {
  if (cmd == nullptr) {
    return unknownCommandError(args);
  }
  if (cmd->has(resp::kCmdContainer) && args.size() >= 2) {
    return unknownSubcommandError(*cmd, args[1]);
  }
  if (!resp::arityOk(*cmd, args.size()) ||
      (cmd->has(resp::kCmdSplit) && (args.size() - 1) % cmd->args_per_key != 0)) {
    return arityError(*cmd);
  }
  if (cmd->has(resp::kCmdUnsupported)) {
    return unsupportedError(cmd->name);
  }
  return {};
}

bool keylessScript(const resp::CommandInfo& cmd, std::span<const std::string_view> args,
                   const config::Config& config, uint16_t* shard, std::string* error) {
  const std::string_view name = cmd.name;
  const bool eval = name == "eval" || name == "eval_ro";
  if (!eval && name != "evalsha" && name != "evalsha_ro" && name != "fcall" && name != "fcall_ro") {
    return false;
  }
  if (args.size() < 3 || args[2] != "0") {
    return false;  // keys declared, or a numkeys that the shard will refuse in its own words
  }
  *shard = 0;
  if (eval && args[1].find("call") == std::string_view::npos) {
    return true;  // cannot reach the keyspace: any shard gives the same answer
  }
  if (config.keyless_scripts == "refuse") {
    *error =
        "-ERR a script or function called with no keys runs on one shard of shardproxy's and "
        "would not see keys on the others: pass the keys it uses as arguments (numkeys > 0), "
        "or set keyless_scripts to the name of a shard to run such calls there\r\n";
    return true;
  }
  for (size_t i = 0; i < config.shards.size(); ++i) {
    if (config.shards[i].name == config.keyless_scripts) {
      *shard = static_cast<uint16_t>(i);
    }
  }
  return true;
}

}  // namespace sp::session
