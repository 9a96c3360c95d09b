// Request checks shared by the routes of SessionState.
#include "session/session_checks.h"

#include <algorithm>

#include "core/ascii.h"
#include "resp/errors.h"

namespace sp::session {

resp::err::ErrorReply crossSlotError(const resp::CommandInfo& cmd,
                                     std::span<const std::string_view> args,
                                     std::span<const uint32_t> keys,
                                     const route::Topology& topology) {
  const bool list = cmd.handler == resp::Handler::kListMpop;
  if ((list || cmd.handler == resp::Handler::kZsetMpop) && !keys.empty()) {
    const size_t after = keys.back() + 1;
    const bool ok =
        after < args.size() &&
        (list ? equalsIgnoreCase(args[after], "left") || equalsIgnoreCase(args[after], "right")
              : equalsIgnoreCase(args[after], "min") || equalsIgnoreCase(args[after], "max"));
    if (!ok) {
      return resp::err::kSyntax;
    }
  }
  return topology.crossUnitError();
}

resp::err::ErrorReply unsupportedError(const resp::CommandInfo& cmd) {
  if (cmd.handler == resp::Handler::kClientTracking) {
    return resp::err::notSupported(
        cmd.name,
        "client-side caching needs invalidation messages from every shard on the client's own "
        "connection, which shared shard connections cannot carry");
  }
  return resp::err::notSupported(cmd.name);
}

resp::err::ErrorReply requestError(const resp::CommandInfo* cmd,
                                   std::span<const std::string_view> args) {
  if (cmd == nullptr) {
    return resp::err::unknownCommand(args);
  }
  if (cmd->has(resp::kCmdContainer) && args.size() >= 2) {
    return resp::err::unknownSubcommand(cmd->name, args[1]);
  }
  if (!resp::arityOk(*cmd, args.size()) ||
      (cmd->has(resp::kCmdSplit) && (args.size() - 1) % cmd->args_per_key != 0)) {
    return resp::err::wrongArity(cmd->name);
  }
  if (cmd->has(resp::kCmdUnsupported)) {
    return unsupportedError(*cmd);
  }
  return {};
}

bool keylessScript(const resp::CommandInfo& cmd, std::span<const std::string_view> args,
                   const config::Config& config, uint16_t* shard, resp::err::ErrorReply* error) {
  bool eval = false;
  switch (cmd.handler) {
    case resp::Handler::kEval:
    case resp::Handler::kEvalRo:
      eval = true;
      break;
    case resp::Handler::kEvalSha:
    case resp::Handler::kEvalShaRo:
    case resp::Handler::kFcall:
    case resp::Handler::kFcallRo:
      break;
    default:
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
    *error = resp::err::kKeylessScript;
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
