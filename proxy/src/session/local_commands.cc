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
  const std::string_view name = cmd.name;
  if (name == "ping") {
    if (args.size() == 1) {
      resp::appendStatus(*reply, "PONG");
    } else if (args.size() == 2) {
      resp::appendBulk(*reply, args[1]);
    } else {
      reply->append(resp::err::wrongArity("ping"));
    }
  } else if (name == "echo") {
    resp::appendBulk(*reply, args[1]);
  } else if (name == "quit") {
    resp::appendStatus(*reply, "OK");
    *close_after = true;
  } else if (name == "select") {
    if (args[1] == "0") {
      resp::appendStatus(*reply, "OK");
    } else {
      bool numeric = !args[1].empty();
      for (char c : args[1]) {
        numeric = numeric && ((c >= '0' && c <= '9') || c == '-');
      }
      reply->append(numeric ? resp::err::kSelectOtherDatabase : resp::err::kNotInteger);
    }
  } else if (name == "command" || name.starts_with("command|")) {
    commandIntrospection(cmd, args, session.protocol() == resp::Protocol::kResp3, reply);
  } else if (name == "client|setname") {
    if (!validClientName(args[2])) {
      reply->append(resp::err::kClientName);
    } else {
      session.setName(args[2]);
      resp::appendStatus(*reply, "OK");
    }
  } else if (name == "client|getname") {
    if (session.name().empty()) {
      resp::appendNullBulk(*reply);
    } else {
      resp::appendBulk(*reply, session.name());
    }
  } else if (name == "client|id") {
    resp::appendInteger(*reply, static_cast<int64_t>(session.id()));
  } else if (name == "info") {
    std::string section;  // every section named (Redis 7 takes several), space-separated
    for (size_t i = 1; i < args.size(); ++i) {
      section.append(i > 1 ? " " : "").append(args[i]);
    }
    // INFO shards itself needs an admin user (client_auth.h); a plain INFO leaves it out.
    const bool admin = session.state() == nullptr || session.state()->rights().admin;
    resp::appendBulk(*reply, session.worker().context().control->info(section, admin));
  } else if (cmd.has(resp::kCmdProxy)) {
    runAdminCommand(session, cmd, args, reply);
  } else if (name.starts_with("slowlog|")) {
    runSlowlog(session, args, reply);
  } else if (ClientCommands::run(session, cmd, args, reply, close_after)) {
    // CLIENT INFO / LIST / KILL / NO-EVICT, CONFIG GET: client_commands.h
  } else {
    reply->append(resp::err::notSupported(name));
  }
}

}  // namespace sp::session
