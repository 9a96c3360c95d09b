// The property the ring's sends rely on: with MSG_DONTWAIT, a send submitted on an io_uring
// completes inside the io_uring_enter that submits it, so no send outlives that call and its
// bytes may be released when its completion is read.
#pragma once

#include <string>

struct io_uring;

namespace sp::net {

// Checks it on a socket pair through `ring`: a send with room must be done when the submitting
// call returns, and a send into a full socket must have failed there with EAGAIN. False with *why.
// Leaves no completion behind.
bool sendsCompleteInline(io_uring* ring, std::string* why);

}  // namespace sp::net
