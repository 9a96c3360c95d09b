// Local commands, answered from the command table and the proxy's own state.
#include "session/local_commands.h"

#include <spdlog/spdlog.h>

#include "core/ascii.h"
#include "net/worker.h"
#include "resp/encoder.h"
#include "session/admin_commands.h"
#include "session/client_commands.h"
#include "session/client_session.h"

namespace sp::session {
namespace {

void commandInfo(std::span<const std::string_view> names, std::string* reply) {
  const auto& table = resp::CommandTable::instance();
  if (names.empty()) {
    auto all = table.commands();
    resp::appendArrayHeader(*reply, static_cast<int64_t>(all.size()));
    for (const auto& c : all) {
      reply->append(c.info_resp);
    }
    return;
  }
  resp::appendArrayHeader(*reply, static_cast<int64_t>(names.size()));
  for (std::string_view name : names) {
    const resp::CommandInfo* c = table.find(name);
    if (c == nullptr) {
      reply->append("*-1\r\n");
    } else {
      reply->append(c->info_resp);
    }
  }
}

void commandDocs(std::span<const std::string_view> names, std::string* reply) {
  const auto& table = resp::CommandTable::instance();
  std::string body;
  int64_t found = 0;
  if (names.empty()) {
    for (const auto& c : table.commands()) {
      body.append(c.docs_resp);
      ++found;
    }
  } else {
    for (std::string_view name : names) {
      if (const resp::CommandInfo* c = table.find(name)) {
        body.append(c->docs_resp);
        ++found;
      }
    }
  }
  resp::appendArrayHeader(*reply, found * 2);
  reply->append(body);
}

void commandGetKeys(std::span<const std::string_view> args, std::string* reply) {
  const auto& table = resp::CommandTable::instance();
  const resp::CommandInfo* c = table.resolve(args);
  if (c == nullptr) {
    resp::appendError(*reply, "ERR Invalid command specified");
    return;
  }
  if (!resp::arityOk(*c, args.size())) {
    resp::appendError(*reply, "ERR Invalid number of arguments specified for command");
    return;
  }
  std::vector<uint32_t> keys;
  if (!resp::extractKeys(*c, args, &keys) || keys.empty()) {
    resp::appendError(*reply, "ERR The command has no key arguments");
    return;
  }
  resp::appendArrayHeader(*reply, static_cast<int64_t>(keys.size()));
  for (uint32_t k : keys) {
    resp::appendBulk(*reply, args[k]);
  }
}

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
    resp::appendError(*reply, "ERR wrong number of arguments for 'client|setinfo' command");
  } else if (!equalsIgnoreCase(args[2], "lib-name") && !equalsIgnoreCase(args[2], "lib-ver")) {
    resp::appendError(*reply,
                      "ERR Unrecognized option '" + std::string(args[2].substr(0, 64)) + "'");
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
      resp::appendError(*reply, "ERR wrong number of arguments for 'ping' command");
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
      resp::appendError(*reply, numeric ? "ERR command 'select' is not supported by shardproxy "
                                          "for databases other than 0"
                                        : "ERR value is not an integer or out of range");
    }
  } else if (name == "command") {
    commandInfo({}, reply);
  } else if (name == "command|count") {
    resp::appendInteger(*reply,
                        static_cast<int64_t>(resp::CommandTable::instance().commands().size()));
  } else if (name == "command|info") {
    commandInfo(args.subspan(2), reply);
  } else if (name == "command|docs") {
    commandDocs(args.subspan(2), reply);
  } else if (name == "command|list") {
    auto all = resp::CommandTable::instance().commands();
    resp::appendArrayHeader(*reply, static_cast<int64_t>(all.size()));
    for (const auto& c : all) {
      resp::appendBulk(*reply, c.name);
    }
  } else if (name == "command|getkeys" || name == "command|getkeysandflags") {
    commandGetKeys(args.subspan(2), reply);
  } else if (name == "client|setname") {
    if (!validClientName(args[2])) {
      resp::appendError(*reply,
                        "ERR Client names cannot contain spaces, newlines or special characters.");
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
    std::string section = args.size() > 1 ? std::string(args[1]) : std::string();
    for (char& c : section) {
      c = static_cast<char>(c >= 'A' && c <= 'Z' ? c + 32 : c);
    }
    // INFO shards itself needs an admin user (client_auth.h); a plain INFO leaves it out.
    const bool admin = session.state() == nullptr || session.state()->rights().admin;
    resp::appendBulk(*reply, session.worker().context().info(section, admin));
  } else if (cmd.has(resp::kCmdProxy)) {
    runAdminCommand(session, cmd, args, reply);
  } else if (ClientCommands::run(session, cmd, args, reply, close_after)) {
    // CLIENT INFO / LIST / KILL / NO-EVICT, CONFIG GET / RESETSTAT: client_commands.h
  } else {
    resp::appendError(*reply,
                      "ERR command '" + std::string(name) + "' is not supported by shardproxy");
  }
}

}  // namespace sp::session
