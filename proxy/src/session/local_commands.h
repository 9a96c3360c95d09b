// Commands the proxy answers itself: PING, ECHO, QUIT, SELECT 0, COMMAND, CLIENT SETNAME /
// GETNAME / ID / SETINFO, INFO.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "resp/command_table.h"

namespace sp::session {

class ClientSession;

// Writes the complete RESP reply to *reply. *close_after is set for QUIT. PROXY ... goes to
// session/admin_commands.h; a command answered later (PROXY RELOAD) leaves *reply empty and has
// queued its reply with ClientSession::deferReply.
void runLocalCommand(ClientSession& session, const resp::CommandInfo& cmd,
                     std::span<const std::string_view> args, std::string* reply, bool* close_after);

// CLIENT SETINFO LIB-NAME|LIB-VER value: Redis 7.2's, which the 7.0 command table lacks, sent at
// connect by ioredis, node-redis, redis-py and go-redis. True when `args` is CLIENT SETINFO ...,
// with *reply set to +OK or to the error Redis gives for bad arguments.
bool clientSetInfo(std::span<const std::string_view> args, std::string* reply);

}  // namespace sp::session
