// ACL-lite: who a client is once it has authenticated (auth.password, auth.users) and what that
// user may run. Pure functions over the config and the command table; the session applies them.
//
//   - No auth configured: every client is "default" with every right, and no AUTH is needed.
//   - auth.password: the "default" user's password (requirepass); that user has every right.
//   - auth.users: named users; read_only users get -NOPERM for write commands (the command
//     table's kCmdWrite, and EVAL/EVALSHA/FCALL, which may write); only admin users may run the
//     admin commands (needsAdmin), which include those that show other clients or the shards
//     (CLIENT LIST, INFO shards), as Redis classes CLIENT LIST @admin @dangerous.
//   - Failed AUTH attempts are counted and logged (at warn, rate-limited, never the password);
//     past kFreeAuthFailures on a connection, every further attempt there is answered late
//     (authDelayMs) and nothing else is read from the connection meanwhile, so guessing over one
//     connection is slow whether or not the client waits for each answer.
//   - Until a client has authenticated it may only send AUTH, HELLO, QUIT and RESET; anything
//     else gets -NOAUTH, and its requests are held to Redis' unauthenticated limits (a bulk of at
//     most 16 KB, an array of at most 10 elements).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "config/config.h"
#include "resp/command_table.h"
#include "resp/errors.h"
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

// Commands that need an admin user: FLUSHALL, FLUSHDB, KEYS, CONFIG SET, CLIENT KILL, CLIENT
// LIST, SCRIPT FLUSH, FUNCTION FLUSH/DELETE/RESTORE, the proxy's own PROXY commands, and INFO
// naming the shards section (`args`: the whole request). A non-admin user's plain INFO leaves
// that section out instead (net::ControlPlane::info). CLIENT INFO describes the caller only and
// stays open to everyone, as in Redis.
bool needsAdmin(const resp::CommandInfo& cmd, std::span<const std::string_view> args);

// Commands a read-only user may not run.
bool isWrite(const resp::CommandInfo& cmd);

// True when `rights` allow `cmd` with `args` (the whole request).
bool permitted(const UserRights& rights, const resp::CommandInfo& cmd,
               std::span<const std::string_view> args);

// Failed AUTH / HELLO AUTH attempts a connection may make before its attempts are slowed.
inline constexpr uint32_t kFreeAuthFailures = 3;
// How late an AUTH attempt is answered after `failures` earlier failures on its connection: at
// once up to kFreeAuthFailures, then 100 ms, doubling with each further failure up to 2 s.
uint64_t authDelayMs(uint32_t failures);

// "-NOPERM this user has no permissions to run the 'config|set' command\r\n", as Redis words it.
std::string noPermError(const resp::CommandInfo& cmd);

// True when deny_commands names the command, its container, or (for "container sub") it.
// Entries are matched case-insensitively; a space stands for Redis' '|'.
bool denied(const std::vector<std::string>& deny_commands, const resp::CommandInfo& cmd);
resp::err::ErrorReply deniedError(const resp::CommandInfo& cmd);

// The parser limits for a client that has not authenticated yet (never above `normal`).
resp::ParserLimits unauthenticatedLimits(const resp::ParserLimits& normal);

}  // namespace sp::session
