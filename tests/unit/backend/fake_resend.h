// The resend lookup (the seam backend_op.h declares) for tests of the cluster redirector: a
// FakeRequest keeps its command's bytes and cluster counts as a session's request would, and
// FakeResendLookup installs the lookup for a test's life; a request marked gone has lost its
// client, so nothing is sent again for it.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include "backend/backend_op.h"
#include "resp/protocol.h"

namespace sp::backend::testing {

struct FakeRequest : InFlightRequest {
  std::string bytes;
  ClusterTries tries;
  std::atomic<bool> gone{false};
};

inline constexpr uint64_t kFakeClientId = 7;

inline bool fakeResend(InFlightRequest* request, uint32_t /*fragment*/, Resend* out) {
  auto* fake = static_cast<FakeRequest*>(request);
  if (fake->gone.load()) {
    return false;
  }
  *out = Resend{fake->bytes, &fake->tries, kFakeClientId, resp::Protocol::kResp2, 0};
  return true;
}

// Installs fakeResend for the test's life and puts the previous lookup back after.
class FakeResendLookup {
 public:
  FakeResendLookup() : previous_(resend_lookup.set(&fakeResend)) {}
  ~FakeResendLookup() { resend_lookup.set(previous_); }
  FakeResendLookup(const FakeResendLookup&) = delete;
  FakeResendLookup& operator=(const FakeResendLookup&) = delete;

 private:
  ResendLookup previous_;
};

}  // namespace sp::backend::testing
