// RequestParser: frames client requests (RESP2 multibulk and inline) without copying arguments.
// A pure function over a byte span with explicit limits: no I/O, no logging, no exceptions, and no
// allocation per argument once the frame's vectors have warmed up.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "resp/parse_status.h"

namespace sp::resp {

struct ParserLimits {
  uint64_t max_bulk_len = 512ull * 1024 * 1024;  // largest accepted bulk argument, bytes
  uint32_t max_array_len = 1024 * 1024;          // most arguments in one multibulk request
  uint32_t max_inline_len = 64 * 1024;           // longest inline command line, bytes
};

// One parsed request. `args` view either the input span given to the last parse() call or, for
// quoted inline arguments, `scratch`; they stay valid until the next parse() call or until the
// input buffer is modified.
struct RequestFrame {
  std::vector<std::string_view> args;  // args[0] is the command name as sent (any case)
  bool is_inline = false;              // true when the request was an inline command line
  std::string scratch;                 // unescaped quoted inline arguments live here
};

class RequestParser {
 public:
  explicit RequestParser(ParserLimits limits = {});

  // Parses one request at the start of `input`.
  //  kOk:         *frame holds the request, *consumed its size in bytes. A request with no
  //               arguments (an empty inline line, "*0\r\n", "*-1\r\n") is kOk with empty args;
  //               callers skip it as redis-server does.
  //  kIncomplete: *consumed is 0. Call again with the same bytes (possibly moved to another
  //               buffer) followed by more; the parser resumes where it stopped, so a large frame
  //               arriving in many reads is scanned once, not once per read.
  //  kError:      error() says why; the connection must be closed after replying.
  ParseStatus parse(std::string_view input, size_t* consumed, RequestFrame* frame);

  // Bytes the current incomplete frame needs at least, counted from its start (0 if unknown).
  // Lets the caller size a buffer once for a large bulk instead of growing it read by read.
  size_t bytesNeeded() const { return needed_; }

  ParseError error() const { return error_; }

  // Forgets any partial frame (used when a connection is reset).
  void reset();

 private:
  ParseStatus fail(ParseError error);
  ParseStatus findLine(const char* s, size_t n, size_t start, size_t* lf);
  ParseStatus parseInline(const char* s, size_t n, size_t* consumed, RequestFrame* frame);
  ParseStatus parseArgs(const char* s, size_t n, std::vector<std::string_view>* direct);
  void finishFrame();

  ParserLimits limits_;
  ParseError error_ = ParseError::kNone;
  size_t needed_ = 0;
  // Resume state of a partially received multibulk frame.
  bool in_frame_ = false;
  uint32_t expected_args_ = 0;
  size_t pos_ = 0;                   // offset of the next unparsed byte in the frame
  std::vector<size_t> arg_offsets_;  // offsets of the argument payloads parsed so far
  std::vector<size_t> arg_lengths_;
  size_t line_scan_ = 0;   // where the LF search of the pending line resumes (0: from its start)
  int64_t bulk_len_ = -1;  // >= 0: the header of the bulk at pos_ is parsed; pos_ is its payload
};

}  // namespace sp::resp
