// RequestParser: frames RESP2 multibulk requests and inline commands the way redis-server's
// processMultibulkBuffer / processInlineBuffer do, but without copying arguments (except quoted
// inline ones) and with a few stricter checks (a bulk payload must end in CRLF, a header line
// must end in CRLF).
//
// Hot path: a request that arrives whole is parsed in one pass straight into frame->args (one
// memchr per header line, a hand-rolled decimal parse, no allocation once args has grown).
// Only when a frame is incomplete are its argument offsets kept, so that the next call resumes
// at the first unparsed argument even if the caller moved its buffer.
#include "resp/request_parser.h"

#include <cstring>
#include <limits>

namespace sp::resp {
namespace {

enum class Dec : uint8_t { kOk, kBad, kOverflow };

// Parses p[0..len) strictly as redis-server's string2ll does: optional '-', digits, no leading
// zeros, no "-0", int64 range. kOverflow only for a well-formed positive number above INT64_MAX.
inline Dec parseDecimal(const char* p, size_t len, int64_t* out) {
  if (len == 0) {
    return Dec::kBad;
  }
  const bool neg = p[0] == '-';
  size_t i = neg ? 1 : 0;
  if (i == len) {
    return Dec::kBad;
  }
  if (p[i] == '0') {
    if (!neg && len == 1) {
      *out = 0;
      return Dec::kOk;
    }
    return Dec::kBad;
  }
  const uint64_t cap = static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) + (neg ? 1 : 0);
  uint64_t v = 0;
  bool over = false;
  for (; i < len; ++i) {
    const unsigned d = static_cast<unsigned char>(p[i]) - static_cast<unsigned>('0');
    if (d > 9) {
      return Dec::kBad;
    }
    if (over || v > (cap - d) / 10) {
      over = true;
      continue;
    }
    v = v * 10 + d;
  }
  if (over) {
    return neg ? Dec::kBad : Dec::kOverflow;
  }
  *out = neg ? static_cast<int64_t>(~v + 1) : static_cast<int64_t>(v);
  return Dec::kOk;
}

// Fast path for the common header "<digits>\r\n" after the type byte at s[i - 1]: true with the
// value when the line is a plain decimal without leading zeros that the general path would accept
// as is; false means "take the general path", never a verdict.
inline bool fastLength(const char* s, size_t n, size_t i, uint64_t max_line, uint64_t* value,
                       size_t* next) {
  size_t j = i;
  uint64_t v = 0;
  const size_t stop = n - i > 18 ? i + 18 : n;  // 18 digits cannot overflow
  while (j < stop) {
    const unsigned d = static_cast<unsigned char>(s[j]) - static_cast<unsigned>('0');
    if (d > 9) {
      break;
    }
    v = v * 10 + d;
    ++j;
  }
  const size_t digits = j - i;
  if (digits == 0 || j + 1 >= n || s[j] != '\r' || s[j + 1] != '\n' ||
      (digits > 1 && s[i] == '0') || digits + 2 > max_line) {
    return false;
  }
  *value = v;
  *next = j + 2;
  return true;
}

// isspace() in the C locale: what sdssplitargs skips between arguments.
inline bool isSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

// What ends an unquoted argument in sdssplitargs (note: not '\v' or '\f').
inline bool endsWord(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

inline int hexValue(char c) {
  if (c >= '0' && c <= '9') {
    return c - '0';
  }
  if (c >= 'a' && c <= 'f') {
    return c - 'a' + 10;
  }
  if (c >= 'A' && c <= 'F') {
    return c - 'A' + 10;
  }
  return -1;
}

}  // namespace

RequestParser::RequestParser(ParserLimits limits) : limits_(limits) {}

void RequestParser::reset() {
  error_ = ParseError::kNone;
  finishFrame();
}

void RequestParser::finishFrame() {
  needed_ = 0;
  in_frame_ = false;
  expected_args_ = 0;
  pos_ = 0;
  arg_offsets_.clear();
  arg_lengths_.clear();
  line_scan_ = 0;
  bulk_len_ = -1;
}

ParseStatus RequestParser::fail(ParseError error) {
  error_ = error;
  needed_ = 0;
  return ParseStatus::kError;
}

// Finds the LF ending the line that starts at s[start]. A line may hold at most max_inline_len
// bytes before its LF, whether or not the LF has arrived yet, so the outcome does not depend on
// how the stream was split into reads.
ParseStatus RequestParser::findLine(const char* s, size_t n, size_t start, size_t* lf) {
  const bool window_full = n - start > limits_.max_inline_len;
  const size_t end = window_full ? start + limits_.max_inline_len + 1 : n;
  const size_t from = line_scan_ > start ? line_scan_ : start;
  const void* p = from < end ? std::memchr(s + from, '\n', end - from) : nullptr;
  if (p == nullptr) [[unlikely]] {
    if (window_full) {
      return fail(ParseError::kInlineTooLong);
    }
    line_scan_ = end;
    needed_ = 0;
    return ParseStatus::kIncomplete;
  }
  line_scan_ = 0;
  *lf = static_cast<size_t>(static_cast<const char*>(p) - s);
  return ParseStatus::kOk;
}

// Parses the arguments of the multibulk frame from pos_ on. With `direct`, arguments are appended
// to it as views of s (a frame seen from its first byte in this call); otherwise their offsets are
// appended to arg_offsets_/arg_lengths_.
ParseStatus RequestParser::parseArgs(const char* s, size_t n,
                                     std::vector<std::string_view>* direct) {
  size_t have = direct != nullptr ? direct->size() : arg_offsets_.size();
  size_t pos = pos_;
  while (have < expected_args_) {
    int64_t len = bulk_len_;
    if (len < 0) {
      if (pos >= n) {
        pos_ = pos;
        needed_ = 0;
        return ParseStatus::kIncomplete;
      }
      if (s[pos] != '$') [[unlikely]] {
        return fail(ParseError::kExpectedBulk);
      }
      uint64_t fast = 0;
      size_t payload = 0;
      if (fastLength(s, n, pos + 1, limits_.max_inline_len, &fast, &payload)) [[likely]] {
        if (fast > limits_.max_bulk_len) [[unlikely]] {
          return fail(ParseError::kBulkTooLong);
        }
        len = static_cast<int64_t>(fast);
        line_scan_ = 0;
        pos = payload;
      } else {
        size_t lf = 0;
        const ParseStatus st = findLine(s, n, pos, &lf);
        if (st != ParseStatus::kOk) {
          pos_ = pos;
          return st;
        }
        if (s[lf - 1] != '\r') [[unlikely]] {
          return fail(ParseError::kBadCrlf);
        }
        switch (parseDecimal(s + pos + 1, lf - 1 - (pos + 1), &len)) {
          case Dec::kOk:
            break;
          case Dec::kBad:
            return fail(ParseError::kBadBulkLen);
          case Dec::kOverflow:
            return fail(ParseError::kBulkTooLong);
        }
        if (len < 0) [[unlikely]] {
          return fail(ParseError::kBadBulkLen);
        }
        if (static_cast<uint64_t>(len) > limits_.max_bulk_len) [[unlikely]] {
          return fail(ParseError::kBulkTooLong);
        }
        pos = lf + 1;
      }
    }
    const size_t ulen = static_cast<size_t>(len);
    const size_t end = pos + ulen + 2;
    if (end > n) {
      if (end - 1 == n && s[n - 1] != '\r') [[unlikely]] {
        return fail(ParseError::kBadCrlf);  // the terminator is already visibly wrong
      }
      pos_ = pos;
      bulk_len_ = len;
      needed_ = end;
      return ParseStatus::kIncomplete;
    }
    if (s[end - 2] != '\r' || s[end - 1] != '\n') [[unlikely]] {
      return fail(ParseError::kBadCrlf);
    }
    if (direct != nullptr) {
      direct->emplace_back(s + pos, ulen);
    } else {
      arg_offsets_.push_back(pos);
      arg_lengths_.push_back(ulen);
    }
    ++have;
    bulk_len_ = -1;
    pos = end;
  }
  pos_ = pos;
  return ParseStatus::kOk;
}

ParseStatus RequestParser::parse(std::string_view input, size_t* consumed, RequestFrame* frame) {
  *consumed = 0;
  if (error_ != ParseError::kNone) [[unlikely]] {
    return ParseStatus::kError;
  }
  const char* s = input.data();
  const size_t n = input.size();

  if (in_frame_) {
    // Resuming a multibulk frame whose header and first arguments arrived in earlier calls.
    const ParseStatus st = parseArgs(s, n, nullptr);
    if (st != ParseStatus::kOk) {
      return st;
    }
    frame->args.clear();
    for (size_t i = 0; i < arg_offsets_.size(); ++i) {
      frame->args.emplace_back(s + arg_offsets_[i], arg_lengths_[i]);
    }
    frame->is_inline = false;
    *consumed = pos_;
    finishFrame();
    return ParseStatus::kOk;
  }

  if (n == 0) {
    return ParseStatus::kIncomplete;
  }
  if (s[0] != '*') {
    return parseInline(s, n, consumed, frame);
  }

  int64_t count = 0;
  size_t header_end = 0;
  ParseStatus st = ParseStatus::kOk;
  uint64_t fast = 0;
  if (fastLength(s, n, 1, limits_.max_inline_len, &fast, &header_end)) [[likely]] {
    count = static_cast<int64_t>(fast);
    line_scan_ = 0;
  } else {
    size_t lf = 0;
    st = findLine(s, n, 0, &lf);
    if (st != ParseStatus::kOk) {
      return st;
    }
    if (s[lf - 1] != '\r') [[unlikely]] {  // lf >= 1 since s[0] is '*'
      return fail(ParseError::kBadCrlf);
    }
    switch (parseDecimal(s + 1, lf - 2, &count)) {
      case Dec::kOk:
        break;
      case Dec::kBad:
        return fail(ParseError::kBadArrayLen);
      case Dec::kOverflow:
        return fail(ParseError::kArrayTooLong);
    }
    header_end = lf + 1;
  }
  if (count > 0 && static_cast<uint64_t>(count) > limits_.max_array_len) [[unlikely]] {
    return fail(ParseError::kArrayTooLong);
  }
  frame->args.clear();
  frame->is_inline = false;
  if (count <= 0) {
    // "*0", "*-1" (and, as redis-server accepts them, other negative counts): an empty request.
    *consumed = header_end;
    finishFrame();
    return ParseStatus::kOk;
  }
  expected_args_ = static_cast<uint32_t>(count);
  pos_ = header_end;
  st = parseArgs(s, n, &frame->args);
  if (st == ParseStatus::kOk) {
    *consumed = pos_;
    finishFrame();
    return ParseStatus::kOk;
  }
  if (st == ParseStatus::kIncomplete) {
    // Keep what was parsed as offsets: the next call may see the bytes at another address.
    arg_offsets_.clear();
    arg_lengths_.clear();
    for (const std::string_view a : frame->args) {
      arg_offsets_.push_back(static_cast<size_t>(a.data() - s));
      arg_lengths_.push_back(a.size());
    }
    in_frame_ = true;
  }
  frame->args.clear();
  return st;
}

// An inline command: one line split into arguments with sdssplitargs' rules. Unquoted arguments
// are views of the input; a quoted one is unescaped into frame->scratch, which is sized once per
// line (unescaping never lengthens) so earlier views into it stay valid.
ParseStatus RequestParser::parseInline(const char* s, size_t n, size_t* consumed,
                                       RequestFrame* frame) {
  size_t lf = 0;
  const ParseStatus st = findLine(s, n, 0, &lf);
  if (st != ParseStatus::kOk) {
    return st;
  }
  size_t end = lf;
  if (end > 0 && s[end - 1] == '\r') {
    --end;
  }
  // redis-server splits the line as a C string: a NUL ends it.
  if (const void* nul = std::memchr(s, '\0', end); nul != nullptr) [[unlikely]] {
    end = static_cast<size_t>(static_cast<const char*>(nul) - s);
  }

  frame->args.clear();
  frame->is_inline = true;
  char* out = nullptr;
  size_t out_len = 0;
  size_t i = 0;
  for (;;) {
    while (i < end && isSpace(s[i])) {
      ++i;
    }
    if (i >= end) {
      break;
    }
    const size_t word = i;
    while (i < end && !endsWord(s[i]) && s[i] != '"' && s[i] != '\'') {
      ++i;
    }
    if (i >= end || endsWord(s[i])) {
      frame->args.emplace_back(s + word, i - word);
      continue;
    }

    // A quote, possibly after an unquoted prefix (a"b c" is the argument "ab c").
    if (out == nullptr) {
      if (frame->scratch.size() < end - word) {
        frame->scratch.resize(end - word);
      }
      out = frame->scratch.data();
    }
    const size_t arg_start = out_len;
    std::memcpy(out + out_len, s + word, i - word);
    out_len += i - word;
    const char quote = s[i++];
    for (;;) {
      if (i >= end) {
        return fail(ParseError::kUnbalancedQuotes);
      }
      const char c = s[i];
      if (quote == '"' && c == '\\' && i + 3 < end && s[i + 1] == 'x' && hexValue(s[i + 2]) >= 0 &&
          hexValue(s[i + 3]) >= 0) {
        out[out_len++] = static_cast<char>(hexValue(s[i + 2]) * 16 + hexValue(s[i + 3]));
        i += 4;
      } else if (quote == '"' && c == '\\' && i + 1 < end) {
        char e = s[i + 1];
        switch (e) {
          case 'n':
            e = '\n';
            break;
          case 'r':
            e = '\r';
            break;
          case 't':
            e = '\t';
            break;
          case 'b':
            e = '\b';
            break;
          case 'a':
            e = '\a';
            break;
          default:
            break;
        }
        out[out_len++] = e;
        i += 2;
      } else if (quote == '\'' && c == '\\' && i + 1 < end && s[i + 1] == '\'') {
        out[out_len++] = '\'';
        i += 2;
      } else if (c == quote) {
        // The closing quote must be followed by a space or the end of the line.
        if (i + 1 < end && !isSpace(s[i + 1])) {
          return fail(ParseError::kUnbalancedQuotes);
        }
        ++i;
        break;
      } else {
        out[out_len++] = c;
        ++i;
      }
    }
    frame->args.emplace_back(out + arg_start, out_len - arg_start);
  }

  *consumed = lf + 1;
  finishFrame();
  return ParseStatus::kOk;
}

}  // namespace sp::resp
