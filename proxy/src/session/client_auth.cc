// ACL-lite decisions: password checks, admin and write rules, deny_commands matching.
#include "session/client_auth.h"

#include <algorithm>

#include "core/ascii.h"
#include "resp/errors.h"

namespace sp::session {
namespace {

// Compares without returning early on the first difference, so that the time taken says
// nothing about how much of a guess was right (only its length leaks, as with Redis).
bool sameSecret(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) {
    return false;
  }
  unsigned char diff = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  }
  return diff == 0;
}

char lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c + 32) : c; }

// True when the deny_commands entry ("CONFIG SET", "config|set", "flushall") names `name` or a
// container of it ("config" for "config|set"). No allocation: this runs for every request while
// deny_commands is set.
bool entryCovers(std::string_view entry, std::string_view name) {
  if (entry.size() > name.size()) {
    return false;
  }
  for (size_t i = 0; i < entry.size(); ++i) {
    const char c = entry[i] == ' ' ? '|' : lower(entry[i]);
    if (c != name[i]) {
      return false;
    }
  }
  return entry.size() == name.size() || name[entry.size()] == '|';
}

}  // namespace

AuthOutcome authenticate(const config::AuthConfig& auth, std::string_view user,
                         std::string_view password, UserRights* out) {
  if (user.empty() || user == "default") {
    if (auth.password.empty()) {
      if (auth.users.empty()) {
        // No auth at all: like Redis' nopass default user, AUTH default <anything> succeeds,
        // AUTH <password> is a configuration mistake.
        if (user.empty()) {
          return AuthOutcome::kNoPasswordConfigured;
        }
        *out = UserRights{};
        return AuthOutcome::kOk;
      }
      return AuthOutcome::kWrongPass;  // only named users may log in
    }
    if (!sameSecret(password, auth.password)) {
      return AuthOutcome::kWrongPass;
    }
    *out = UserRights{};
    return AuthOutcome::kOk;
  }
  for (const config::AuthUser& u : auth.users) {
    if (u.name == user) {
      if (!sameSecret(password, u.password)) {
        return AuthOutcome::kWrongPass;
      }
      out->name = u.name;
      out->read_only = u.read_only;
      out->admin = u.admin;
      return AuthOutcome::kOk;
    }
  }
  return AuthOutcome::kWrongPass;
}

std::string authError(AuthOutcome outcome) {
  switch (outcome) {
    case AuthOutcome::kOk:
      break;
    case AuthOutcome::kWrongPass:
      return std::string(resp::err::kWrongPass);
    case AuthOutcome::kNoPasswordConfigured:
      return std::string(resp::err::kAuthWithoutPassword);
  }
  return std::string(resp::err::kWrongPass);
}

bool allowedBeforeAuth(const resp::CommandInfo& cmd) {
  switch (cmd.handler) {
    case resp::Handler::kAuth:
    case resp::Handler::kHello:
    case resp::Handler::kQuit:
    case resp::Handler::kReset:
      return true;
    default:
      return false;
  }
}

bool needsAdmin(const resp::CommandInfo& cmd, std::span<const std::string_view> args) {
  if (cmd.has(resp::kCmdProxy) || cmd.has(resp::kCmdAdminOnly)) {
    return true;
  }
  if (cmd.handler == resp::Handler::kInfo) {
    for (size_t i = 1; i < args.size(); ++i) {
      if (equalsIgnoreCase(args[i], "shards")) {
        return true;
      }
    }
  }
  return false;
}

bool isWrite(const resp::CommandInfo& cmd) {
  return cmd.has(resp::kCmdWrite) || cmd.handler == resp::Handler::kEval ||
         cmd.handler == resp::Handler::kEvalSha || cmd.handler == resp::Handler::kFcall;
}

bool permitted(const UserRights& rights, const resp::CommandInfo& cmd,
               std::span<const std::string_view> args) {
  if (!rights.admin && needsAdmin(cmd, args)) {
    return false;
  }
  return !(rights.read_only && isWrite(cmd));
}

uint64_t authDelayMs(uint32_t failures) {
  constexpr uint64_t kFirstMs = 100;
  constexpr uint64_t kMaxMs = 2000;
  if (failures < kFreeAuthFailures) {
    return 0;
  }
  const uint32_t doublings = std::min<uint32_t>(failures - kFreeAuthFailures, 5);
  return std::min(kFirstMs << doublings, kMaxMs);
}

std::string noPermError(const resp::CommandInfo& cmd) { return resp::err::noPermission(cmd.name); }

bool denied(const std::vector<std::string>& deny_commands, const resp::CommandInfo& cmd) {
  for (const std::string& entry : deny_commands) {
    if (entryCovers(entry, cmd.name)) {
      return true;
    }
  }
  return false;
}

resp::err::ErrorReply deniedError(const resp::CommandInfo& cmd) {
  return resp::err::disabledByConfig(cmd.name);
}

resp::ParserLimits unauthenticatedLimits(const resp::ParserLimits& normal) {
  // redis-server's own limits for a client that has not authenticated (networking.c).
  resp::ParserLimits limits = normal;
  limits.max_bulk_len = std::min<uint64_t>(normal.max_bulk_len, 16384);
  limits.max_array_len = std::min<uint32_t>(normal.max_array_len, 10);
  limits.max_inline_len = std::min<uint32_t>(normal.max_inline_len, 16384);
  return limits;
}

}  // namespace sp::session
