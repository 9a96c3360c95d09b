// AuthGate: AUTH, HELLO, and what an unauthenticated client may send (auth_gate.h).
#include "session/auth_gate.h"

#include <charconv>
#include <string>

#include <spdlog/spdlog.h>

#include "core/ascii.h"
#include "net/worker.h"
#include "resp/errors.h"
#include "session/client_commands.h"
#include "session/client_session.h"
#include "session/session_state.h"
#include "session/worker_clients.h"

namespace sp::session {

void AuthGate::close() {
  authenticated_ = false;
  rights_ = UserRights{};
  state_.session().setRequestLimits(unauthenticatedLimits(state_.worker().parserLimits()));
}

void AuthGate::authenticatedAs(const UserRights& rights) {
  const bool was = authenticated_;
  authenticated_ = true;
  rights_ = rights;
  if (!was) {
    state_.session().setRequestLimits(state_.worker().parserLimits());
  }
}

Verdict AuthGate::admit(const resp::CommandInfo* cmd) {
  if (answer_late_) {
    if (!state_.fifoEmpty()) {
      return Verdict::kDefer;
    }
    answer_late_ = false;
  }
  if (!authenticated_ && (cmd == nullptr || !allowedBeforeAuth(*cmd))) {
    state_.refuse(resp::err::kNoAuth);
    return Verdict::kHandled;
  }
  return Verdict::kContinue;
}

void AuthGate::answerAttempt(const resp::CommandInfo& cmd, bool failed, std::string_view answer) {
  net::Worker& w = state_.worker();
  const uint64_t delay_ms = authDelayMs(failures_);
  if (failed) {
    ++failures_;
    w.stats().auth_failures.add();
    if (w.logLimiter().allow()) {
      // The address and the count only: a user name may be a mistyped password.
      spdlog::warn("worker {}: client {} ({}) failed to authenticate ({} on this connection{})",
                   w.index(), state_.clientId(), peerAddress(state_.session()), failures_,
                   delay_ms > 0 ? ", answered after " + std::to_string(delay_ms) + " ms" : "");
    }
  }
  if (delay_ms == 0) {
    if (failed) {
      state_.refuse(answer);
    } else {
      state_.reply(answer);
    }
    return;
  }
  // A success is as late as a failure, or its speed would tell the guess was right.
  PendingRequest* request = state_.session().deferReply(&cmd);
  answer_late_ = true;
  clientsOf(w).replyLater(request, delay_ms, std::string(answer));
}

Verdict AuthGate::onAuth(const resp::RequestFrame& frame, const resp::CommandInfo& cmd) {
  std::span<const std::string_view> args(frame.args);
  if (args.size() > 3) {
    state_.refuse(resp::err::kSyntax);
    return Verdict::kHandled;
  }
  const std::string_view user = args.size() == 3 ? args[1] : std::string_view();
  UserRights rights;
  const AuthOutcome outcome =
      authenticate(state_.worker().config().auth, user, args.back(), &rights);
  if (outcome != AuthOutcome::kOk) {
    // Never the password; the user name only at debug level.
    spdlog::debug("worker {}: client {} AUTH failed for user '{}'", state_.worker().index(),
                  state_.clientId(), user.empty() ? std::string_view("default") : user);
    answerAttempt(cmd, true, authError(outcome));
    return Verdict::kHandled;
  }
  authenticatedAs(rights);
  answerAttempt(cmd, false, "+OK\r\n");
  return Verdict::kHandled;
}

Verdict AuthGate::onHello(const resp::RequestFrame& frame, const resp::CommandInfo& cmd) {
  std::span<const std::string_view> args(frame.args);
  resp::Protocol protocol = state_.session().protocol();  // HELLO without a version keeps it
  if (args.size() >= 2) {
    int64_t version = 0;
    const auto [end, ec] =
        std::from_chars(args[1].data(), args[1].data() + args[1].size(), version);
    if (ec != std::errc() || end != args[1].data() + args[1].size()) {
      state_.refuse(resp::err::kProtocolVersion);
      return Verdict::kHandled;
    }
    if (version < 2 || version > 3) {
      state_.refuse(resp::err::kNoProto);
      return Verdict::kHandled;
    }
    protocol = version == 3 ? resp::Protocol::kResp3 : resp::Protocol::kResp2;
  }
  std::string_view user;
  std::string_view password;
  std::string_view setname;
  bool auth = false;
  bool has_name = false;
  for (size_t i = 2; i < args.size(); ++i) {
    const size_t more = args.size() - i - 1;
    if (equalsIgnoreCase(args[i], "auth") && more >= 2) {
      user = args[i + 1];
      password = args[i + 2];
      auth = true;
      i += 2;
    } else if (equalsIgnoreCase(args[i], "setname") && more >= 1) {
      setname = args[i + 1];
      has_name = true;
      i += 1;
    } else {
      state_.refuse(resp::err::helloOption(args[i]));
      return Verdict::kHandled;
    }
  }
  if (auth) {
    UserRights rights;
    const AuthOutcome outcome =
        authenticate(state_.worker().config().auth, user, password, &rights);
    if (outcome != AuthOutcome::kOk) {
      answerAttempt(cmd, true, authError(AuthOutcome::kWrongPass));
      return Verdict::kHandled;
    }
    authenticatedAs(rights);
  }
  if (!authenticated_) {
    state_.refuse(resp::err::kHelloNeedsAuth);
    return Verdict::kHandled;
  }
  if (has_name) {
    for (char c : setname) {
      if (c < '!' || c > '~') {
        constexpr std::string_view kBadName = resp::err::kClientName;
        if (auth) {
          answerAttempt(cmd, false, kBadName);
        } else {
          state_.refuse(kBadName);
        }
        return Verdict::kHandled;
      }
    }
    state_.session().setName(setname);
  }
  // The reply is already in the new protocol, as redis-server sends it. A connection held for
  // WATCH switches with the client (inside MULTI, HELLO is refused).
  state_.switchProtocol(protocol);
  if (auth) {
    answerAttempt(cmd, false,
                  ClientCommands::helloReply(state_.clientId(), protocol,
                                             state_.worker().context().keyspace.serverVersion()));
  } else {
    state_.reply(ClientCommands::helloReply(state_.clientId(), protocol,
                                            state_.worker().context().keyspace.serverVersion()));
  }
  return Verdict::kHandled;
}

}  // namespace sp::session
