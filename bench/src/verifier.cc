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

VerifyResult Verifier::check(bool is_null, std::string_view payload, uint64_t key, uint32_t run_id,
                             uint32_t expected, std::string* why) {
  Header h;
  const bool parsed = !is_null && parseHeader(payload, &h);
  if (expected == VerifySlot::kNeverWritten || expected == VerifySlot::kUnknown) {
    if (is_null) {
      return VerifyResult::kOk;
    }
    if (parsed && h.key != key) {
      *why = "holds the value of key " + std::to_string(h.key) + " ('" + preview(payload) + "')";
      return VerifyResult::kMismatch;
    }
    if (parsed && h.run == run_id && expected == VerifySlot::kNeverWritten) {
      *why = "holds a value of this run that this run never wrote to it (seq " +
             std::to_string(h.seq) + ")";
      return VerifyResult::kMismatch;
    }
    return parsed && expected == VerifySlot::kUnknown ? VerifyResult::kOk
                                                      : VerifyResult::kUnverified;
  }
  if (is_null) {
    *why = "is missing (expected the write with seq " + std::to_string(expected) + ")";
    return VerifyResult::kMismatch;
  }
  if (!parsed) {
    *why = "holds a foreign value '" + preview(payload) + "' (expected seq " +
           std::to_string(expected) + ")";
    return VerifyResult::kMismatch;
  }
  if (h.key != key) {
    *why = "holds the value of key " + std::to_string(h.key) + " (expected seq " +
           std::to_string(expected) + ")";
    return VerifyResult::kMismatch;
  }
  if (h.run != run_id) {
    *why = "holds a value from another run (expected seq " + std::to_string(expected) + ")";
    return VerifyResult::kMismatch;
  }
  if (h.seq != expected) {
    *why = std::string(h.seq < expected ? "holds a stale value" : "holds a later value") +
           " (seq " + std::to_string(h.seq) + ", expected " + std::to_string(expected) +
           "): lost or misordered write or reply";
    return VerifyResult::kMismatch;
  }
  return VerifyResult::kOk;
}

}  // namespace sp::bench
