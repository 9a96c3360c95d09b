// Value headers for --verify and the check of a read against the expected write.
#include "verifier.h"

#include <charconv>
#include <cstdio>

namespace sp::bench {
namespace {

constexpr std::string_view kMagic = "sbv1:";

struct Header {
  uint64_t key = 0;
  uint32_t run = 0;
  uint32_t seq = 0;
};

bool parseHeader(std::string_view v, Header* h) {
  if (!v.starts_with(kMagic)) {
    return false;
  }
  const char* p = v.data() + kMagic.size();
  const char* end = v.data() + v.size();
  auto field = [&](auto* out, int base) {
    auto res = std::from_chars(p, end, *out, base);
    if (res.ec != std::errc() || res.ptr == end || *res.ptr != ':') {
      return false;
    }
    p = res.ptr + 1;
    return true;
  };
  return field(&h->key, 10) && field(&h->run, 16) && field(&h->seq, 10);
}

std::string preview(std::string_view v) {
  std::string out;
  for (char c : v.substr(0, 48)) {
    out += (c >= 32 && c < 127) ? c : '.';
  }
  if (v.size() > 48) {
    out += "...";
  }
  return out;
}

}  // namespace

size_t Verifier::writeHeader(char* buf, uint64_t key, uint32_t run_id, uint32_t seq) {
  char* p = buf;
  char* end = buf + kMaxHeader;
  for (char c : kMagic) {
    *p++ = c;
  }
  p = std::to_chars(p, end, key).ptr;
  *p++ = ':';
  p = std::to_chars(p, end, run_id, 16).ptr;
  *p++ = ':';
  p = std::to_chars(p, end, seq).ptr;
  *p++ = ':';
  return static_cast<size_t>(p - buf);
}

VerifyResult Verifier::check(const KeyState& state, bool is_null, std::string_view payload,
                             uint64_t key, uint32_t run_id, bool allow_loss, std::string* why) {
  const uint32_t acked = state.acked;
  const bool has_acked = acked != KeyState::kNone;
  // What this connection may have left in the key, as text for the messages.
  auto expected = [&] {
    std::string out;
    if (has_acked) {
      out = "seq " + std::to_string(acked);
    }
    if (!state.known()) {
      out += (has_acked ? ", or one of the writes of unknown outcome up to seq "
                        : "one of the writes of unknown outcome up to seq ") +
             std::to_string(state.unknown);
    }
    return out.empty() ? std::string("nothing written") : out;
  };
  if (is_null) {
    if (!has_acked) {
      return state.known() ? VerifyResult::kOk : VerifyResult::kUnverified;
    }
    if (allow_loss) {
      return VerifyResult::kLost;
    }
    *why = "is missing (expected " + expected() + "): an acknowledged write was lost";
    return VerifyResult::kMismatch;
  }
  Header h;
  if (!parseHeader(payload, &h)) {
    if (!has_acked) {
      return VerifyResult::kUnverified;  // left by another tool: nothing of ours to compare
    }
    *why = "holds a foreign value '" + preview(payload) + "' (expected " + expected() + ")";
    return VerifyResult::kMismatch;
  }
  if (h.key != key) {
    *why = "holds the value of key " + std::to_string(h.key) + " ('" + preview(payload) +
           "', expected " + expected() + ")";
    return VerifyResult::kMismatch;
  }
  if (h.run != run_id) {
    if (!has_acked) {
      return VerifyResult::kUnverified;  // left by another run
    }
    *why =
        "holds a value from another run ('" + preview(payload) + "', expected " + expected() + ")";
    return VerifyResult::kMismatch;
  }
  if (has_acked && h.seq == acked) {
    return state.known() ? VerifyResult::kOk : VerifyResult::kUnverified;
  }
  // The writes of unknown outcome since the last acked one are the seqs in (acked, unknown];
  // seqs wrap at 2^32, so the range is measured modulo 2^32.
  if (!state.known() && h.seq - acked - 1u < state.unknown - acked) {
    return VerifyResult::kUnverified;
  }
  if (!has_acked && state.known()) {
    *why =
        "holds a value of this run that this connection never wrote to it, or that was read "
        "back as lost (seq " +
        std::to_string(h.seq) + ")";
  } else if (has_acked && h.seq < acked) {
    *why = "holds a stale value (seq " + std::to_string(h.seq) + ", expected " + expected() +
           "): lost or misordered write or reply";
  } else {
    *why = "holds a later value (seq " + std::to_string(h.seq) + ", expected " + expected() +
           "): one this connection had not written to it before this read";
  }
  return VerifyResult::kMismatch;
}

}  // namespace sp::bench
