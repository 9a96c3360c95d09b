// Local commands, answered from the proxy's own state (COMMAND: command_introspection.h).
#include "session/local_commands.h"

#include <cstdint>

#include "core/ascii.h"
#include "net/worker.h"
#include "resp/encoder.h"
#include "resp/errors.h"
#include "session/admin_commands.h"
#include "session/client_commands.h"
#include "session/client_session.h"
#include "session/command_introspection.h"
#include "session/request_observer.h"

namespace sp::session {
namespace {

using Args = std::span<const std::string_view>;

bool validClientName(std::string_view name) {
  for (char c : name) {
    if (c < '!' || c > '~') {
      return false;
    }
  }
  return true;
}

}  // namespace

bool clientSetInfo(std::span<const std::string_view> args, std::string* reply) {
  if (args.size() < 2 || !equalsIgnoreCase(args[0], "client") ||
      !equalsIgnoreCase(args[1], "setinfo")) {
    return false;
  }
  if (args.size() != 4) {
    reply->append(resp::err::wrongArity("client|setinfo"));
  } else if (!equalsIgnoreCase(args[2], "lib-name") && !equalsIgnoreCase(args[2], "lib-ver")) {
    reply->append(resp::err::unrecognizedOption(args[2]));
  } else {
    resp::appendStatus(*reply, "OK");  // nothing to keep: CLIENT INFO shows no lib-name
  }
  return true;
}

void runLocalCommand(ClientSession& session, const resp::CommandInfo& cmd,
                     std::span<const std::string_view> args, std::string* reply,
                     bool* close_after) {
  using resp::Handler;
  switch (cmd.handler) {
    case Handler::kPing:
      if (args.size() == 1) {
        resp::appendStatus(*reply, "PONG");
      } else if (args.size() == 2) {
        resp::appendBulk(*reply, args[1]);
      } else {
        reply->append(resp::err::wrongArity("ping"));
      }
      return;
    case Handler::kEcho:
      resp::appendBulk(*reply, args[1]);
      return;
    case Handler::kQuit:
      resp::appendStatus(*reply, "OK");
      *close_after = true;
      return;
    case Handler::kSelect:
      if (args[1] == "0") {
        resp::appendStatus(*reply, "OK");
      } else {
        bool numeric = !args[1].empty();
        for (char c : args[1]) {
          numeric = numeric && ((c >= '0' && c <= '9') || c == '-');
        }
        if (numeric) {
          appendOwnError(session.worker().stats(), resp::err::kSelectOtherDatabase, reply);
        } else {
          reply->append(resp::err::kNotInteger);
        }
      }
      return;
    case Handler::kCommand:
    case Handler::kCommandCount:
    case Handler::kCommandInfo:
    case Handler::kCommandDocs:
    case Handler::kCommandList:
    case Handler::kCommandGetKeys:
    case Handler::kCommandGetKeysAndFlags:
    case Handler::kCommandHelp:
      commandIntrospection(cmd, args, session.protocol() == resp::Protocol::kResp3, reply);
      return;
    case Handler::kClientSetName:
      if (!validClientName(args[2])) {
        reply->append(resp::err::kClientName);
      } else {
        session.setName(args[2]);
        resp::appendStatus(*reply, "OK");
      }
      return;
    case Handler::kClientGetName:
      if (session.name().empty()) {
        resp::appendNullBulk(*reply);
      } else {
        resp::appendBulk(*reply, session.name());
      }
      return;
    case Handler::kClientId:
      resp::appendInteger(*reply, static_cast<int64_t>(session.id()));
      return;
    case Handler::kInfo: {
      std::string section;  // every section named (Redis 7 takes several), space-separated
      for (size_t i = 1; i < args.size(); ++i) {
        section.append(i > 1 ? " " : "").append(args[i]);
      }
      // INFO shards itself needs an admin user (client_auth.h); a plain INFO leaves it out.
      const bool admin = session.state() == nullptr || session.state()->rights().admin;
      resp::appendBulk(*reply, session.worker().context().control->info(section, admin));
      return;
    }
    case Handler::kProxyInfo:
    case Handler::kProxyShards:
    case Handler::kProxySlots:
    case Handler::kProxyConfig:
    case Handler::kProxySlowlog:
    case Handler::kProxyReload:
    case Handler::kProxyHealth:
    case Handler::kProxyHelp:
      runAdminCommand(session, cmd, args, reply);
      return;
    case Handler::kSlowlog:
    case Handler::kSlowlogHelp:
      runSlowlog(session, cmd, args, reply);
      return;
    case Handler::kClientInfo:
    case Handler::kClientList:
    case Handler::kClientKill:
    case Handler::kClientNoEvict:
    case Handler::kConfigGet:
    case Handler::kConfigHelp:
      ClientCommands::run(session, cmd, args, reply, close_after);
      return;
    default:
      appendOwnError(session.worker().stats(), resp::err::notSupported(cmd.name), reply);
      return;
  }
}

}  // namespace sp::session
