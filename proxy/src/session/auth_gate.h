// AuthGate: the session's authentication lane. Until a client has authenticated (auth.password,
// auth.users) it may send only AUTH, HELLO, QUIT and RESET, with its requests held to Redis'
// unauthenticated limits; AUTH and HELLO ... AUTH decide who it is and what it may run
// (client_auth.h has the rules); past kFreeAuthFailures failures on a connection each further
// attempt is answered late, and nothing after it is read before that answer has gone, so
// guessing over one connection is slow whether or not the client waits for each answer.
//
// HELLO is served here whole (protocol, SETNAME, AUTH), since its AUTH option decides whether the
// rest may happen; SessionState::switchProtocol carries the protocol to the connections it holds.
#pragma once

#include <cstdint>
#include <string_view>

#include "resp/command_table.h"
#include "resp/request_parser.h"
#include "session/client_auth.h"
#include "session/verdict.h"

namespace sp::session {

class SessionState;

class AuthGate {
 public:
  explicit AuthGate(SessionState& state) : state_(state) {}
  AuthGate(const AuthGate&) = delete;
  AuthGate& operator=(const AuthGate&) = delete;

  bool authenticated() const { return authenticated_; }
  const UserRights& rights() const { return rights_; }

  // The client must authenticate (again): at accept, and at RESET while auth is required. Its
  // rights go back to the default user's and its requests to the unauthenticated limits.
  void close();

  // Every request, before anything else looks at it (`cmd` nullptr: unknown). kDefer while a
  // late AUTH answer is still in the FIFO; kHandled, refused with -NOAUTH, when the client may
  // not send `cmd` yet; kContinue otherwise.
  Verdict admit(const resp::CommandInfo* cmd);

  Verdict onAuth(const resp::RequestFrame& frame, const resp::CommandInfo& cmd);
  Verdict onHello(const resp::RequestFrame& frame, const resp::CommandInfo& cmd);

 private:
  void authenticatedAs(const UserRights& rights);
  // The answer to an AUTH attempt (HELLO ... AUTH included): counted and logged when it failed,
  // sent at once or, past kFreeAuthFailures failures, after authDelayMs.
  void answerAttempt(const resp::CommandInfo& cmd, bool failed, std::string_view answer);

  SessionState& state_;
  bool authenticated_ = true;
  UserRights rights_;
  uint32_t failures_ = 0;     // failed AUTH attempts on this connection (never reset)
  bool answer_late_ = false;  // a late answer waits in the FIFO: every request after it waits
};

}  // namespace sp::session
