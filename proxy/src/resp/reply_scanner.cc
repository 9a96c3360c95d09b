// ReplyScanner: frames backend replies by walking element headers; payloads are skipped by length
// and never copied. The only state carried between calls is offsets and one counter per open
// aggregate, so the caller may move its buffer between calls.
//
// Accepted grammar (strict where Redis is strict, so a corrupt stream is caught early):
//   '+' '-'            any bytes up to the first LF, which must follow a CR; at most
//                      max_bulk_len bytes (else kBulkTooLong)
//   ':'                a decimal int64 as Redis's string2ll writes it (no '+', no leading zeros,
//                      no "-0"), else kBadInteger
//   '$' '=' '!'        length as above, then length bytes and CRLF (else kBadCrlf); '$' alone may
//                      be -1 (null bulk, no payload)
//   '*' '%' '~' '>' '|' element count as above; '*' alone may be -1 (null array); '%' and '|'
//                      owe two elements per entry; an attribute ('|') annotates the element that
//                      follows it, so it does not take a slot of its parent and, at the top
//                      level, the reply ends with the annotated element (type stays '|')
//   '_'                exactly "_\r\n"
//   '#'                "#t\r\n" or "#f\r\n"
//   ','                a double: [0-9+-.eE]+, "inf", "-inf", "nan" (kBadInteger otherwise)
//   '('                a big number: optional '-', then digits (kBadInteger otherwise)
// Streamed RESP3 types ("$?", "*?") are not supported (kBadBulkLen / kBadArrayLen).
#include "resp/reply_scanner.h"

#include <cstring>
#include <limits>

namespace sp::resp {
namespace {

enum class Num : uint8_t { kOk, kIncomplete, kBad, kOverflow, kBadCrlf };

constexpr uint64_t kInt64Max = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());

// Parses "<decimal>\r\n" at s[i] as Redis's string2ll does: optional '-', digits, no leading
// zero (except "0" itself), no "-0", int64 range. Streaming: a syntax error is reported as soon
// as the offending byte is seen, so at most 22 bytes are ever examined. kOverflow only for a
// positive number (a negative overflow is kBad).
inline Num parseNumberLine(const char* s, size_t n, size_t i, int64_t* value, size_t* next) {
  if (i >= n) {
    return Num::kIncomplete;
  }
  bool neg = false;
  if (s[i] == '-') {
    neg = true;
    if (++i >= n) {
      return Num::kIncomplete;
    }
  }
  const size_t first = i;
  const uint64_t cap = neg ? kInt64Max + 1 : kInt64Max;
  uint64_t v = 0;
  while (i < n) {
    const unsigned d = static_cast<unsigned char>(s[i]) - static_cast<unsigned>('0');
    if (d > 9) {
      break;
    }
    if (i > first && v == 0) {
      return Num::kBad;  // leading zero
    }
    if (v > (cap - d) / 10) {
      return neg ? Num::kBad : Num::kOverflow;
    }
    v = v * 10 + d;
    ++i;
  }
  if (i >= n) {
    return Num::kIncomplete;
  }
  if (i == first || s[i] != '\r' || (neg && v == 0)) {
    return Num::kBad;
  }
  if (i + 1 >= n) {
    return Num::kIncomplete;
  }
  if (s[i + 1] != '\n') {
    return Num::kBadCrlf;
  }
  *value = neg ? static_cast<int64_t>(~v + 1) : static_cast<int64_t>(v);
  *next = i + 2;
  return Num::kOk;
}

// Checks for CRLF at s[i], failing as soon as a wrong byte is visible.
inline Num expectCrlf(const char* s, size_t n, size_t i) {
  if (i < n && s[i] != '\r') {
    return Num::kBadCrlf;
  }
  if (i + 1 < n && s[i + 1] != '\n') {
    return Num::kBadCrlf;
  }
  return i + 2 <= n ? Num::kOk : Num::kIncomplete;
}

bool isDouble(const char* p, size_t len) {
  const std::string_view v(p, len);
  if (v == "inf" || v == "-inf" || v == "+inf" || v == "nan" || v == "-nan") {
    return true;
  }
  if (len == 0) {
    return false;
  }
  for (size_t i = 0; i < len; ++i) {
    const char c = p[i];
    if (!((c >= '0' && c <= '9') || c == '.' || c == '-' || c == '+' || c == 'e' || c == 'E')) {
      return false;
    }
  }
  return true;
}

bool isBigNumber(const char* p, size_t len) {
  size_t i = (len > 0 && p[0] == '-') ? 1 : 0;
  if (i == len) {
    return false;
  }
  for (; i < len; ++i) {
    if (p[i] < '0' || p[i] > '9') {
      return false;
    }
  }
  return true;
}

}  // namespace

ReplyScanner::ReplyScanner(ScannerLimits limits) : limits_(limits) { pending_.reserve(8); }

void ReplyScanner::reset() {
  error_ = ParseError::kNone;
  pos_ = 0;
  top_ = ReplyInfo{};
  have_top_ = false;
  pending_.clear();
  line_scan_ = 0;
  bulk_end_ = 0;
}

ParseStatus ReplyScanner::fail(ParseError error) {
  error_ = error;
  return ParseStatus::kError;
}

// One element (a leaf, or an aggregate whose children have all been seen) ended at pos_. Returns
// true when that completes the reply.
bool ReplyScanner::completeElement() {
  line_scan_ = 0;
  for (;;) {
    if (--pending_.back() != 0) {
      return false;
    }
    pending_.pop_back();
    if (pending_.empty()) {
      return true;
    }
  }
}

ParseStatus ReplyScanner::scan(std::string_view input, size_t* consumed, ReplyInfo* info) {
  *consumed = 0;
  if (error_ != ParseError::kNone) [[unlikely]] {
    return ParseStatus::kError;
  }
  const char* s = input.data();
  const size_t n = input.size();
  if (pending_.empty()) {
    pending_.push_back(1);  // the virtual root owes one element: the reply itself
  }

  for (;;) {
    if (bulk_end_ != 0) {  // a bulk payload whose end is known is still arriving
      if (n < bulk_end_) {
        return ParseStatus::kIncomplete;
      }
      if (s[bulk_end_ - 2] != '\r' || s[bulk_end_ - 1] != '\n') {
        return fail(ParseError::kBadCrlf);
      }
      pos_ = bulk_end_;
      bulk_end_ = 0;
      if (completeElement()) {
        break;
      }
      continue;
    }
    if (pos_ >= n) {
      return ParseStatus::kIncomplete;
    }

    const size_t start = pos_;
    const char type = s[start];
    int64_t value = 0;
    size_t next = 0;
    bool aggregate = false;

    switch (type) {
      case '+':
      case '-':
      case '(':
      case ',': {
        // Content may be at most max_bulk_len bytes, so the LF lies at or before start+2+max.
        const uint64_t max = limits_.max_bulk_len;
        const uint64_t avail = n - start;
        const bool window_full = max <= avail && avail - max >= 3;
        const size_t window_end = window_full ? start + static_cast<size_t>(max) + 3 : n;
        const size_t from = line_scan_ > start + 1 ? line_scan_ : start + 1;
        const void* lf =
            from < window_end ? std::memchr(s + from, '\n', window_end - from) : nullptr;
        if (lf == nullptr) {
          if (window_full) {
            return fail(ParseError::kBulkTooLong);
          }
          line_scan_ = n;
          return ParseStatus::kIncomplete;
        }
        const size_t lf_at = static_cast<size_t>(static_cast<const char*>(lf) - s);
        if (lf_at < start + 2 || s[lf_at - 1] != '\r') {
          return fail(ParseError::kBadCrlf);
        }
        const size_t len = lf_at - 1 - (start + 1);
        if (type == '(' && !isBigNumber(s + start + 1, len)) {
          return fail(ParseError::kBadInteger);
        }
        if (type == ',' && !isDouble(s + start + 1, len)) {
          return fail(ParseError::kBadInteger);
        }
        next = lf_at + 1;
        break;
      }
      case ':': {
        switch (parseNumberLine(s, n, start + 1, &value, &next)) {
          case Num::kOk:
            break;
          case Num::kIncomplete:
            return ParseStatus::kIncomplete;
          case Num::kBadCrlf:
            return fail(ParseError::kBadCrlf);
          default:
            return fail(ParseError::kBadInteger);
        }
        break;
      }
      case '_': {
        const Num r = expectCrlf(s, n, start + 1);
        if (r == Num::kIncomplete) {
          return ParseStatus::kIncomplete;
        }
        if (r != Num::kOk) {
          return fail(ParseError::kBadCrlf);
        }
        next = start + 3;
        break;
      }
      case '#': {
        if (start + 1 >= n) {
          return ParseStatus::kIncomplete;
        }
        if (s[start + 1] != 't' && s[start + 1] != 'f') {
          return fail(ParseError::kBadInteger);
        }
        const Num r = expectCrlf(s, n, start + 2);
        if (r == Num::kIncomplete) {
          return ParseStatus::kIncomplete;
        }
        if (r != Num::kOk) {
          return fail(ParseError::kBadCrlf);
        }
        value = s[start + 1] == 't' ? 1 : 0;
        next = start + 4;
        break;
      }
      case '$':
      case '=':
      case '!': {
        size_t payload = 0;
        switch (parseNumberLine(s, n, start + 1, &value, &payload)) {
          case Num::kOk:
            break;
          case Num::kIncomplete:
            return ParseStatus::kIncomplete;
          case Num::kBadCrlf:
            return fail(ParseError::kBadCrlf);
          case Num::kOverflow:
            return fail(ParseError::kBulkTooLong);
          case Num::kBad:
            return fail(ParseError::kBadBulkLen);
        }
        if (value == -1 && type == '$') {
          next = payload;  // null bulk
          break;
        }
        if (value < 0) {
          return fail(ParseError::kBadBulkLen);
        }
        if (static_cast<uint64_t>(value) > limits_.max_bulk_len) {
          return fail(ParseError::kBulkTooLong);
        }
        if (pending_.size() == 1 && !have_top_) {
          top_.type = type;
          top_.value = value;
          have_top_ = true;
        }
        bulk_end_ = payload + static_cast<size_t>(value) + 2;
        continue;  // the payload is checked at the top of the loop
      }
      case '*':
      case '%':
      case '~':
      case '>':
      case '|': {
        switch (parseNumberLine(s, n, start + 1, &value, &next)) {
          case Num::kOk:
            break;
          case Num::kIncomplete:
            return ParseStatus::kIncomplete;
          case Num::kBadCrlf:
            return fail(ParseError::kBadCrlf);
          case Num::kOverflow:
            return fail(ParseError::kArrayTooLong);
          case Num::kBad:
            return fail(ParseError::kBadArrayLen);
        }
        if (value < 0 && !(value == -1 && type == '*')) {
          return fail(ParseError::kBadArrayLen);
        }
        if (value > 0 && static_cast<uint64_t>(value) > limits_.max_array_len) {
          return fail(ParseError::kArrayTooLong);
        }
        // Open aggregates are pending_.size() - 1; this header would be one more.
        if (pending_.size() > limits_.max_depth) {
          return fail(ParseError::kTooDeep);
        }
        aggregate = true;
        break;
      }
      default:
        return fail(ParseError::kBadType);
    }

    if (pending_.size() == 1 && !have_top_) {
      top_.type = type;
      top_.value = value;
      have_top_ = true;
    }
    pos_ = next;
    if (aggregate) {
      const bool pairs = type == '%' || type == '|';
      if (type == '|') {
        ++pending_.back();  // the attribute does not fill the slot of the element it annotates
      }
      if (value > 0) {
        // value <= INT64_MAX, so twice it still fits in uint64_t.
        pending_.push_back(static_cast<uint64_t>(value) * (pairs ? 2 : 1));
        continue;
      }
    }
    if (completeElement()) {
      break;
    }
  }

  info->type = top_.type;
  info->value = top_.value;
  info->size = pos_;
  *consumed = pos_;
  pos_ = 0;
  have_top_ = false;
  top_ = ReplyInfo{};
  line_scan_ = 0;
  return ParseStatus::kOk;
}

}  // namespace sp::resp
