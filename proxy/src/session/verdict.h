// What the session's state did with a request: SessionState::dispatch and each of its lanes
// (auth_gate.h, ...) answer one of these.
#pragma once

#include <cstdint>

namespace sp::session {

enum class Verdict : uint8_t {
  kContinue,  // plain request: ClientSession routes it as usual
  kHandled,   // answered, queued or sent here
  kDefer,     // not consumed: stop reading, and offer it again once the FIFO is empty
};

}  // namespace sp::session
