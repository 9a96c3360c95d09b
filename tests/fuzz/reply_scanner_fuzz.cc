// Fuzz target for ReplyScanner, in two parts.
//
// 1. Self-consistency: the input is scanned reply after reply whole, in two pieces (split point
//    from the first two bytes, the bytes moved to a fresh allocation between calls) and one byte
//    at a time; all must give the same replies and the same final status and error.
//
// 2. Differential against hiredis's redisReader (Debian 12's hiredis 0.14.1, which carries the
//    CVE-2021-32765 backport: bulk and multi-bulk lengths are parsed strictly, counts must lie in
//    [-1, INT_MAX] and bulk lengths in [-1, SIZE_MAX]) fed the same bytes. For every reply both
//    produce, size and type must match exactly. Divergences are tolerated only where they are
//    known and named here:
//
//    a) Where hiredis returns a reply, we may instead fail with exactly one of:
//         kBadInteger   hiredis reads ':' with a lax readLongLong ("+1", "01", "", "1x" pass);
//         kBadCrlf      hiredis skips a bulk payload's two terminator bytes unchecked, and lets
//                       a simple string hold a lone LF;
//         kBulkTooLong / kArrayTooLong  our limits (set small below) are below hiredis's.
//    b) Where hiredis is still waiting for more bytes, we may also fail with kBadBulkLen or
//       kBadArrayLen: we reject a malformed length at its first bad byte, hiredis only once the
//       line's CRLF has arrived.
//       kBadType and kTooDeep are never tolerated: our type set is a superset of hiredis's and
//       our depth limit (12) is above hiredis's fixed 7 nested levels.
//    c) Where hiredis fails but we return a reply (or wait for more), hiredis's error must be
//       one of: a RESP3 type byte (_ , # = ( ! % ~ > |), which hiredis 0.14 predates, or its
//       "nested multi bulk replies with depth > 7" limit.
//
// 3. The RESP3 re-encoding of proxy-built replies (resp/resp3.h): for each complete reply and
//    each shape, toResp3 gives back exactly one reply the scanner accepts (or the input
//    unchanged), and converting its output again changes nothing.
#include <hiredis/read.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "resp/reply_scanner.h"
#include "resp/resp3.h"

namespace {

using sp::resp::ParseError;
using sp::resp::ParseStatus;
using sp::resp::ReplyInfo;
using sp::resp::ReplyScanner;
using sp::resp::ScannerLimits;

constexpr ScannerLimits kLimits{.max_bulk_len = 64, .max_array_len = 16, .max_depth = 12};

#define FUZZ_CHECK(cond) \
  do {                   \
    if (!(cond)) {       \
      __builtin_trap();  \
    }                    \
  } while (0)

struct Reply {
  char type = 0;
  int64_t value = 0;
  size_t size = 0;
  bool operator==(const Reply&) const = default;
};

struct Outcome {
  std::vector<Reply> replies;
  ParseStatus status = ParseStatus::kIncomplete;
  ParseError error = ParseError::kNone;
};

Outcome feed(const std::vector<std::string_view>& chunks, bool move) {
  ReplyScanner scanner(kLimits);
  Outcome o;
  std::string buffer;
  for (const std::string_view chunk : chunks) {
    buffer.append(chunk);
    for (;;) {
      const std::string moved = move ? buffer : std::string();
      const std::string& in = move ? moved : buffer;
      size_t consumed = 1;
      ReplyInfo info;
      o.status = scanner.scan(in, &consumed, &info);
      o.error = scanner.error();
      if (o.status != ParseStatus::kOk) {
        FUZZ_CHECK(consumed == 0);
        FUZZ_CHECK((o.status == ParseStatus::kError) == (o.error != ParseError::kNone));
        break;
      }
      FUZZ_CHECK(consumed > 0 && consumed <= in.size() && consumed == info.size);
      FUZZ_CHECK(info.type == in[0]);
      o.replies.push_back(Reply{info.type, info.value, info.size});
      buffer.erase(0, consumed);
    }
    if (o.status == ParseStatus::kError) {
      break;
    }
  }
  return o;
}

void expectSame(const Outcome& a, const Outcome& b) {
  FUZZ_CHECK(a.replies == b.replies);
  FUZZ_CHECK(a.status == b.status);
  FUZZ_CHECK(a.error == b.error);
}

struct HiredisOutcome {
  std::vector<Reply> replies;  // type is the REDIS_REPLY_* value; value unused
  bool error = false;
  std::string errstr;
};

HiredisOutcome runHiredis(std::string_view in) {
  HiredisOutcome h;
  // No object functions: hiredis then returns the reply type cast to a pointer and allocates
  // nothing per element, so a huge declared count cannot exhaust memory.
  redisReader* r = redisReaderCreateWithFunctions(nullptr);
  FUZZ_CHECK(r != nullptr);
  if (!in.empty() && redisReaderFeed(r, in.data(), in.size()) != REDIS_OK) {
    __builtin_trap();
  }
  size_t done = 0;
  for (;;) {
    void* reply = nullptr;
    if (redisReaderGetReply(r, &reply) != REDIS_OK) {
      h.error = true;
      h.errstr = r->errstr;
      break;
    }
    if (reply == nullptr) {
      break;
    }
    const size_t now = in.size() - (r->len - r->pos);  // bytes hiredis has consumed in all
    h.replies.push_back(
        Reply{static_cast<char>(reinterpret_cast<uintptr_t>(reply)), 0, now - done});
    done = now;
  }
  redisReaderFree(r);
  return h;
}

int hiredisType(const Reply& ours) {
  switch (ours.type) {
    case '+':
      return REDIS_REPLY_STATUS;
    case '-':
      return REDIS_REPLY_ERROR;
    case ':':
      return REDIS_REPLY_INTEGER;
    case '$':
      return ours.value == -1 ? REDIS_REPLY_NIL : REDIS_REPLY_STRING;
    case '*':
      return ours.value == -1 ? REDIS_REPLY_NIL : REDIS_REPLY_ARRAY;
    default:
      return -1;  // a RESP3 type: hiredis 0.14 never returns one
  }
}

// (a) and, with hiredis_waiting, (b) above.
bool toleratedOurError(ParseError e, bool hiredis_waiting) {
  switch (e) {
    case ParseError::kBadInteger:
    case ParseError::kBadCrlf:
    case ParseError::kBulkTooLong:
    case ParseError::kArrayTooLong:
      return true;
    case ParseError::kBadBulkLen:
    case ParseError::kBadArrayLen:
      return hiredis_waiting;
    default:
      return false;
  }
}

bool toleratedHiredisError(const std::string& err) {
  if (err.find("nested multi bulk replies with depth") != std::string::npos) {
    return true;
  }
  static const char* const kResp3[] = {"\"_\"", "\",\"", "\"#\"", "\"=\"", "\"(\"",
                                       "\"!\"", "\"%\"", "\"~\"", "\">\"", "\"|\""};
  if (err.rfind("Protocol error, got ", 0) == 0 && err.find(" as reply type byte") != err.npos) {
    for (const char* t : kResp3) {
      if (err.find(t) != std::string::npos) {
        return true;
      }
    }
  }
  return false;
}

void compareWithHiredis(const std::string_view in) {
  const Outcome ours = feed({in}, false);
  const HiredisOutcome theirs = runHiredis(in);

  const size_t common = std::min(ours.replies.size(), theirs.replies.size());
  for (size_t i = 0; i < common; ++i) {
    FUZZ_CHECK(ours.replies[i].size == theirs.replies[i].size);
    FUZZ_CHECK(hiredisType(ours.replies[i]) == theirs.replies[i].type);
  }
  if (ours.replies.size() > common) {
    // hiredis stopped on bytes we framed as a reply: it must have failed, for a known reason.
    FUZZ_CHECK(theirs.error && toleratedHiredisError(theirs.errstr));
  } else if (theirs.replies.size() > common) {
    // We stopped on bytes hiredis framed as a reply: we must have failed, for a known reason.
    FUZZ_CHECK(ours.status == ParseStatus::kError && toleratedOurError(ours.error, false));
  } else if (ours.status == ParseStatus::kError && !theirs.error) {
    FUZZ_CHECK(toleratedOurError(ours.error, true));  // hiredis waits for more
  } else if (theirs.error && ours.status != ParseStatus::kError) {
    FUZZ_CHECK(toleratedHiredisError(theirs.errstr));  // we wait for more
  }
}

void checkResp3(std::string_view input, const Outcome& whole) {
  using sp::resp::Resp3Shape;
  size_t at = 0;
  for (const Reply& reply : whole.replies) {
    const std::string_view one = input.substr(at, reply.size);
    at += reply.size;
    for (const Resp3Shape shape :
         {Resp3Shape::kPlain, Resp3Shape::kMap, Resp3Shape::kVerbatim, Resp3Shape::kPush,
          Resp3Shape::kCommandInfo, Resp3Shape::kCommandDocs}) {
      const std::string out = sp::resp::toResp3(one, shape);
      const Outcome scanned = feed({out}, false);
      // A reply the scanner accepts whole, or (when the input itself is odd for that shape) the
      // input as it was; large inputs the small test limits refuse are left alone.
      if (out != one) {
        FUZZ_CHECK(scanned.status != ParseStatus::kError ||
                   scanned.error == ParseError::kBulkTooLong ||
                   scanned.error == ParseError::kArrayTooLong);
        if (scanned.status != ParseStatus::kError) {
          FUZZ_CHECK(scanned.replies.size() == 1 && scanned.replies[0].size == out.size());
        }
      }
      FUZZ_CHECK(sp::resp::toResp3(out, shape) == out);
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const Outcome whole = feed({input}, false);

  size_t split = 0;
  if (size >= 2) {
    split = ((static_cast<size_t>(data[0]) << 8) | data[1]) % (size + 1);
  } else if (size == 1) {
    split = data[0] % 2;
  }
  expectSame(whole, feed({input.substr(0, split), input.substr(split)}, true));
  std::vector<std::string_view> bytes;
  bytes.reserve(size);
  for (size_t i = 0; i < size; ++i) {
    bytes.push_back(input.substr(i, 1));
  }
  expectSame(whole, feed(bytes, false));

  compareWithHiredis(input);
  checkResp3(input, whole);
  return 0;
}
