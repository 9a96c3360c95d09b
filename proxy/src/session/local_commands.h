// Commands the proxy answers itself: PING, ECHO, QUIT, SELECT 0, COMMAND, CLIENT SETNAME /
// GETNAME / ID, INFO.
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

}  // namespace sp::session
