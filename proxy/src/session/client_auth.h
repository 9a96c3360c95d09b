// ACL-lite: who a client is once it has authenticated (auth.password, auth.users) and what that
// user may run. Pure functions over the config and the command table; the session applies them.
//
//   - No auth configured: every client is "default" with every right, and no AUTH is needed.
//   - auth.password: the "default" user's password (requirepass); that user has every right.
//   - auth.users: named users; read_only users get -NOPERM for write commands (the command
//     table's kCmdWrite, and EVAL/EVALSHA/FCALL, which may write); only admin users may run the
//     admin commands (needsAdmin).
//   - Until a client has authenticated it may only send AUTH, HELLO, QUIT and RESET; anything
//     else gets -NOAUTH, and its requests are held to Redis' unauthenticated limits (a bulk of at
//     most 16 KB, an array of at most 10 elements).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "config/config.h"
#include "resp/command_table.h"
#include "resp/request_parser.h"

namespace sp::session {

struct UserRights {
  std::string name = "default";
  bool read_only = false;
  bool admin = true;
};

enum class AuthOutcome : uint8_t {
  kOk,
  kWrongPass,             // -WRONGPASS invalid username-password pair or user is disabled.
  kNoPasswordConfigured,  // AUTH <password> while the default user has none (Redis' own error)
};

// AUTH [user] password. `user` is empty for the one-argument form (the default user).
AuthOutcome authenticate(const config::AuthConfig& auth, std::string_view user,
                         std::string_view password, UserRights* out);

// The error line (with CRLF) for a failed outcome.
std::string authError(AuthOutcome outcome);

// Commands an unauthenticated client may send.
bool allowedBeforeAuth(const resp::CommandInfo& cmd);

// Commands that need an admin user: FLUSHALL, FLUSHDB, KEYS, CONFIG SET, CLIENT KILL, SCRIPT
// FLUSH, FUNCTION FLUSH/DELETE/RESTORE and the proxy's own PROXY commands.
bool needsAdmin(const resp::CommandInfo& cmd);

// Commands a read-only user may not run.
bool isWrite(const resp::CommandInfo& cmd);

// True when `rights` allow `cmd`.
bool permitted(const UserRights& rights, const resp::CommandInfo& cmd);

// "-NOPERM this user has no permissions to run the 'config|set' command\r\n", as Redis words it.
std::string noPermError(const resp::CommandInfo& cmd);

// True when deny_commands names the command, its container, or (for "container sub") it.
// Entries are matched case-insensitively; a space stands for Redis' '|'.
bool denied(const std::vector<std::string>& deny_commands, const resp::CommandInfo& cmd);
std::string deniedError(const resp::CommandInfo& cmd);

// The parser limits for a client that has not authenticated yet (never above `normal`).
resp::ParserLimits unauthenticatedLimits(const resp::ParserLimits& normal);

}  // namespace sp::session
